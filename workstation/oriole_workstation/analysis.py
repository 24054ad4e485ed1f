"""The numbers a report shows, as typed rows every format renders the same way (the terminal table and leaderboard,
CSV, JSON, the HTML page, Markdown and LaTeX, the viewer): the groups with both rates and their intervals, the paired
comparisons of agents, success by step.

The SQL counts, rates and tests (``compare_experiments``, ``paired_comparison``, ``success_by_step`` in
migrations/views/); this module adds what resamples, the bootstrap intervals over mazes (``intervals``), and what
compares groups with each other (``confounds``). Free of the CLI library and of any format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from oriole_workstation.confounds import confounds
from oriole_workstation.grouping import GroupBy, panel_key, series_key
from oriole_workstation.intervals import Method, maze_band, paired_interval
from oriole_workstation.results import Filters, Results
from oriole_workstation.rows import ComparedExperiment, ComparisonRow, PairedRow, StepRow, agent_name

WILSON_MARK = "\N{DAGGER}"  # a Wilson interval shown among intervals over mazes


class Flag(StrEnum):
    """What a group's numbers need said beside them, in every format (a code a table's notes column carries)."""

    FEW_MAZES = "m"
    UNDECIDED = "u"
    UNPRICED = "$"
    CONFOUND = "c"
    MAZES_AS_TRIALS = "w"


FLAG_TEXT = {
    Flag.FEW_MAZES: "rests on fewer than 10 different mazes: says little about other mazes of its kind",
    Flag.UNDECIDED: "over 5% of its runs were censored or errored: the rate over all runs may tell another story",
    Flag.UNPRICED: "some runs' models have no price: its cost is at least what is shown",
    Flag.CONFOUND: "differs from another group of its panel in more than the variable compared (listed below)",
    Flag.MAZES_AS_TRIALS: (
        "every maze has the same rate (all successes or all failures), where resampling mazes gives no interval: "
        "its interval over mazes is Wilson's with each maze one trial (n = mazes)"
    ),
}


class IntervalKind(StrEnum):
    """Which 95% interval a rate shows: over mazes (a bootstrap resampling mazes, each with all its runs: the
    repetitions nested), where the runs share mazes; else the Wilson score interval over runs."""

    MAZES = "mazes"
    WILSON = "wilson"


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    kind: IntervalKind


@dataclass(frozen=True)
class Spend:
    """What a group's experiments spent beyond what its row's columns say: their failed attempts (calls a server
    answered in turns that then failed, billed and counted in the tokens and cost all the same) and their calls
    whose prompt the server counted over the context budget."""

    failed_runs: int = 0  # runs with a failed attempt
    failed_attempts: int = 0
    failed_calls: int = 0
    failed_tokens: int = 0
    failed_cost_usd: float | None = None  # of its priced runs; None: none of them priced
    failed_unpriced_runs: int = 0
    over_budget_calls: int = 0
    over_budget_runs: int = 0


@dataclass(frozen=True)
class GroupRow(Spend, ComparisonRow):
    """A group of the comparison with what the SQL cannot compute: the bootstrap interval over mazes of each rate
    (``maze_ci_*``: None where the runs do not share mazes or rest on one maze) and how it was found
    (``maze_ci_method``, ``maze_ci_all_method``: ``intervals.Method``), what it differs in from the other groups
    of its panel besides the compared variable (``confounds``), and its experiments' ``Spend`` (the notes under a
    table, per group: JSON and CSV carry them)."""

    maze_ci_low: float | None = None
    maze_ci_high: float | None = None
    maze_ci_all_low: float | None = None
    maze_ci_all_high: float | None = None
    maze_ci_method: Method | None = None
    maze_ci_all_method: Method | None = None
    confounds: tuple[str, ...] = field(default=())

    @property
    def maze_band(self) -> tuple[float, float] | None:
        return None if self.maze_ci_low is None or self.maze_ci_high is None else (self.maze_ci_low, self.maze_ci_high)

    @property
    def interval(self) -> Interval | None:
        """The decided rate's interval a table shows first: over mazes where there is one, else Wilson's."""
        return _primary(self.maze_ci_low, self.maze_ci_high, self.success_rate_low, self.success_rate_high)

    @property
    def flags(self) -> tuple[Flag, ...]:
        """What its numbers need said beside them (``FLAG_TEXT``)."""
        found = (
            (Flag.FEW_MAZES, self.few_mazes and self.runs > 0),
            (Flag.UNDECIDED, bool(self.many_undecided)),
            (Flag.UNPRICED, self.unpriced_runs > 0),
            (Flag.CONFOUND, bool(self.confounds)),
            (Flag.MAZES_AS_TRIALS, Method.WILSON_MAZES in (self.maze_ci_method, self.maze_ci_all_method)),
        )
        return tuple(flag for flag, raised in found if raised)

    @property
    def interval_all(self) -> Interval | None:
        """The same for the rate over all runs."""
        return _primary(
            self.maze_ci_all_low, self.maze_ci_all_high, self.success_rate_all_low, self.success_rate_all_high
        )


INTERVAL_NOTES = {
    frozenset({IntervalKind.MAZES}): "95% CI: over mazes (a bootstrap resampling the mazes, repetitions nested)",
    frozenset({IntervalKind.WILSON}): (
        "95% CI: Wilson score interval over runs (the runs share no mazes, or all rest on one maze)"
    ),
    frozenset({IntervalKind.MAZES, IntervalKind.WILSON}): (
        f"95% CI: over mazes (a bootstrap, repetitions nested) where runs share mazes; {WILSON_MARK} Wilson's where "
        "they share none or rest on one maze"
    ),
}


def _primary(maze_low, maze_high, wilson_low, wilson_high) -> Interval | None:
    if maze_low is not None and maze_high is not None:
        return Interval(float(maze_low), float(maze_high), IntervalKind.MAZES)
    if wilson_low is not None and wilson_high is not None:
        return Interval(float(wilson_low), float(wilson_high), IntervalKind.WILSON)
    return None


def _key(row: ComparisonRow) -> tuple[object, ...]:
    return (*series_key(row), row.maze_family, row.maze_size)


def _band(per_maze: list[tuple[int, int]]) -> tuple[float | None, float | None, Method | None]:
    """The interval over these mazes ((runs, successes) each) and its method (``intervals.maze_band``) where runs
    share mazes: more runs than mazes, and at least two mazes (one maze says nothing about other mazes)."""
    mazes = [m for m in per_maze if m[0]]
    if not (sum(runs for runs, _ in mazes) > len(mazes) >= 2):
        return None, None, None
    band = maze_band(mazes)
    return (None, None, None) if band is None else (round(band[0], 4), round(band[1], 4), band[2])


def spend_of(experiments: Sequence[ComparedExperiment], over_budget: dict[int, int]) -> Spend:
    """The ``Spend`` of these experiments, ``over_budget`` their calls over the context budget by experiment id
    (``Results.over_budget_calls``); the failed cost sums the priced runs, and a run with failed attempts and no
    price counts as unpriced."""
    failed = [e for e in experiments if e.failed_attempts]
    priced = [float(e.failed_cost_usd) for e in failed if e.failed_cost_usd is not None]
    over = [over_budget[e.experiment_id] for e in experiments if over_budget.get(e.experiment_id)]
    return Spend(
        failed_runs=len(failed),
        failed_attempts=sum(e.failed_attempts for e in failed),
        failed_calls=sum(e.failed_model_calls for e in failed),
        failed_tokens=sum(e.failed_input_tokens + e.failed_output_tokens for e in failed),
        failed_cost_usd=round(sum(priced), 6) if priced else None,
        failed_unpriced_runs=len(failed) - len(priced),
        over_budget_calls=sum(over),
        over_budget_runs=len(over),
    )


def total_spend(spends: Sequence[Spend]) -> Spend:
    """The ``Spend`` of several groups together (a group's experiments are no other group's)."""
    costs = [s.failed_cost_usd for s in spends if s.failed_cost_usd is not None]
    summed = {
        name: sum(getattr(s, name) for s in spends) for name in Spend.__dataclass_fields__ if name != "failed_cost_usd"
    }
    return Spend(**summed, failed_cost_usd=round(sum(costs), 6) if costs else None)


def with_maze_intervals(
    rows: Sequence[ComparisonRow],
    by_maze: Sequence[ComparisonRow],
    notes: dict | None = None,
    by: GroupBy = GroupBy.family,
    spent: dict | None = None,
) -> list[GroupRow]:
    """Each group with the bootstrap over mazes of both rates, from the same comparison per maze (``by_maze``:
    empty for a comparison by maze, whose groups rest on one maze each), its confounds (``notes``, from
    ``confounds.confounds``) and its ``Spend`` (``spent``, keyed as ``notes``)."""
    decided: dict[tuple[object, ...], list[tuple[int, int]]] = {}
    every: dict[tuple[object, ...], list[tuple[int, int]]] = {}
    for row in by_maze:
        decided.setdefault(_key(row), []).append((row.runs, row.successes))
        every.setdefault(_key(row), []).append((row.all_runs, row.successes))
    out = []
    for row in rows:
        low, high, method = _band(decided.get(_key(row), []))
        all_low, all_high, all_method = _band(every.get(_key(row), []))
        found = tuple((notes or {}).get((panel_key(row, by), series_key(row)), ()))
        out.append(
            GroupRow(
                **vars(row),
                maze_ci_low=low,
                maze_ci_high=high,
                maze_ci_all_low=all_low,
                maze_ci_all_high=all_high,
                maze_ci_method=method,
                maze_ci_all_method=all_method,
                confounds=found,
                **vars((spent or {}).get((panel_key(row, by), series_key(row)), Spend())),
            )
        )
    return out


def groups(results: Results, filters: Filters, by: GroupBy) -> list[GroupRow]:
    """The comparison as every format reports it: one row per group (family and size, or maze), both rates with
    their intervals, the counts of each ending, the flags, the confounds."""
    rows = results.comparison(filters, by_maze=by is GroupBy.maze)
    per_maze = [] if by is GroupBy.maze else results.comparison(filters, by_maze=True)
    experiments = results.compared(filters)
    over_budget = results.over_budget_calls(filters)
    members: dict[tuple[object, ...], list[ComparedExperiment]] = {}
    for e in experiments:
        members.setdefault((panel_key(e, by), series_key(e)), []).append(e)
    spent = {key: spend_of(group, over_budget) for key, group in members.items()}
    return with_maze_intervals(rows, per_maze, confounds(experiments, by), by, spent)


@dataclass(frozen=True)
class PairRow(PairedRow):
    """Two agents compared over their shared (maze, seed) runs, with the paired bootstrap interval over mazes of the
    difference in success (``difference_low``/``_high``: None on fewer than two mazes)."""

    difference_low: float | None = None
    difference_high: float | None = None

    @property
    def a_name(self) -> str:
        return agent_name(self.a_agent_label, self.a_llm_provider, self.a_model_name)

    @property
    def b_name(self) -> str:
        return agent_name(self.b_agent_label, self.b_llm_provider, self.b_model_name)


def pairs(results: Results, filters: Filters, by: GroupBy) -> list[PairRow]:
    """Every two agents (agent, prompt and compared configuration) of a family and size (or maze) over the runs
    they share: the difference in success with its paired bootstrap interval over mazes, the exact McNemar test and
    its Holm-corrected p-value (``paired_comparison``)."""
    out = []
    for row in results.paired(filters, by_maze=by is GroupBy.maze):
        band = paired_interval(row.per_maze)
        low, high = (None, None) if band is None else (round(band[0], 4), round(band[1], 4))
        out.append(PairRow(**vars(row), difference_low=low, difference_high=high))
    return out


def success_by_step(results: Results, filters: Filters, by: GroupBy) -> list[StepRow]:
    """Each group's Kaplan-Meier curve of success by step, censored and errored runs censored (``success_by_step``)."""
    return results.success_by_step(filters, by_maze=by is GroupBy.maze)
