"""A running sweep's progress, as a researcher planning hundreds of experiments wants to follow it: how many of
the planned experiments are done, how many run, how many failed, how many are left, the time it has taken and
the time it will take at this pace, and the tokens and dollars spent so far.

On a terminal it is a live bar with a line above it per finished experiment. Piped to a file it is plain lines,
one record each, never wrapped: a line per finished experiment, and a status line at least every
``STATUS_EVERY_SECONDS`` while nothing finishes. The counts come from the sweep's rows in the database
(``Store.sweep_experiments``), so a local run, ``oriole watch --sweep`` and ``oriole sweep status`` count alike.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from oriole.core.sweep_plan import Cell, Planned, SweepExperiment
from oriole.statuses import Ending, ExperimentStatus
from oriole_workstation.display import dollars, priced_total, shorten, terminal_safe
from oriole_workstation.outcomes import outcome_text
from oriole_workstation.rows import ExperimentSummary

STATUS_EVERY_SECONDS = 60.0


def clock(seconds: float | None) -> str:
    """``1:02:03``, ``0:04:05``; ``-`` when unknown."""
    if seconds is None:
        return "-"
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


@dataclass(frozen=True)
class Counts:
    """Where a sweep stands: ``to_run`` experiments this run (the plan less what had ended before it), of which
    ``done`` have ended (``failed`` of them in an error) and ``running`` run now; the sweep's tokens and spend
    over every run; the seconds since this run began."""

    planned: int
    already_done: int
    to_run: int
    done: int
    running: int
    failed: int
    tokens: int
    spent: float  # the priced runs'
    elapsed: float
    spend_limit: float | None = None
    unpriced: int = 0  # runs whose model has no price: their cost is unknown

    @property
    def left(self) -> int:
        """Neither ended nor running: still to start."""
        return max(self.to_run - self.done - self.running, 0)

    @property
    def eta(self) -> float | None:
        """Seconds to the end at this run's pace (experiments ended per second so far); None before the first."""
        if self.done == 0:
            return None
        return self.elapsed / self.done * (self.to_run - self.done)

    def spend_text(self) -> str:
        limit = f" of ${self.spend_limit:,.2f}" if self.spend_limit is not None else ""
        return priced_total(self.spent, self.unpriced) + limit

    def parts(self) -> tuple[str, ...]:
        """A status record part by part: ``12/72 done``, ``2 running``, ``1 failed``, ``58 left``, ...."""
        before = f" ({self.already_done} before)" if self.already_done else ""
        return (
            f"{self.already_done + self.done}/{self.planned} done{before}",
            f"{self.running} running",
            f"{self.failed} failed",
            f"{self.left} left",
            f"{clock(self.elapsed)} elapsed",
            f"ETA {clock(self.eta)}",
            f"{self.tokens:,} tokens",
            self.spend_text(),
        )

    def line(self) -> str:
        """One status record: ``12/72 done · 2 running · 1 failed · 58 left · 0:05:00 · ETA 0:20:00 · ...``."""
        return " · ".join(self.parts())


def count(
    rows: list[SweepExperiment],
    first_id: int,
    planned: int,
    to_run: int,
    elapsed: float,
    spend_limit: float | None = None,
    open_before: frozenset[int] = frozenset(),
) -> Counts:
    """The counts from the sweep's rows (every run's, oldest first): this run's are those after ``first_id`` and
    those a stopped run left open (``open_before``), which this run takes up again under their own names."""
    mine = [row for row in rows if row.id > first_id or row.id in open_before]
    ended = [row for row in mine if row.status != ExperimentStatus.RUNNING]
    return Counts(
        planned=planned,
        already_done=planned - to_run,
        to_run=to_run,
        done=len(ended),
        running=len(mine) - len(ended),
        failed=sum(row.ending == Ending.ERROR for row in ended),
        tokens=sum(row.tokens for row in rows),
        spent=sum(row.cost_usd for row in rows if row.cost_usd is not None),
        elapsed=elapsed,
        spend_limit=spend_limit,
        unpriced=sum(row.cost_usd is None for row in rows),
    )


class SweepProgress:
    """Shows a running sweep on ``console`` (stderr): live on a terminal, plain lines otherwise."""

    def __init__(
        self,
        console: Console,
        sweep_id: str,
        planned: list[Planned],
        to_run: int,
        first_id: int,
        spend_limit: float | None = None,
        show_lines: bool = True,
        clock_seconds: Callable[[], float] = time.monotonic,
        paused: Callable[[Cell], str | None] = lambda cell: None,
        open_before: frozenset[int] = frozenset(),
    ):
        """``first_id``: the sweep's newest experiment before this run (this run's come after it); ``open_before``:
        its experiments a stopped run left open (a double Ctrl-C), which this run takes up and counts; ``paused``
        tells why a cell's agent starts nothing more (its server keeps failing), as the sweep's tasks judge it."""
        self.paused = paused
        self.paused_agents: set[str] = set()
        self.console, self.sweep_id, self.to_run, self.spend_limit = console, sweep_id, to_run, spend_limit
        self.planned = len(planned)
        self.by_agent = {item.agent_id(sweep_id): item for item in planned}
        self.show_lines, self.clock = show_lines, clock_seconds
        self.started = clock_seconds()
        self.first_id = first_id
        self.open_before = open_before
        self.shown: set[int] = set()
        self.last_status = self.started
        self.live = console.is_terminal
        self.bar = _BarAndStatus(
            TextColumn("{task.description}"),
            BarColumn(bar_width=None),
            MofNCompleteColumn(),
            console=console,
            transient=True,
            disable=not self.live,
        )
        self.task = self.bar.add_task(
            f"sweep {terminal_safe(sweep_id)}",
            total=self.planned,
            completed=self.planned - to_run,
            status=("starting",),
        )

    def __enter__(self) -> SweepProgress:
        self.bar.start()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.stop()

    def update(self, rows: list[SweepExperiment], summary: Callable[[int], ExperimentSummary | None]) -> Counts:
        """Show the sweep's rows (every run's, oldest first; ``summary`` gives an experiment's outcome): each
        experiment of this run that ended once, and the counts."""
        now = self.clock()
        counts = count(
            rows, self.first_id, self.planned, self.to_run, now - self.started, self.spend_limit, self.open_before
        )
        for row in rows:
            if self.of_this_run(row) and row.status != ExperimentStatus.RUNNING and row.id not in self.shown:
                self.shown.add(row.id)
                self._ended(row, summary(row.id), counts)
                if row.ending == Ending.ERROR:
                    self._pause(row)
        if self.live:
            self.bar.update(self.task, completed=counts.already_done + counts.done, status=_live_status(counts))
        elif now - self.last_status >= STATUS_EVERY_SECONDS:
            self._status(counts)
        return counts

    def _status(self, counts: Counts) -> None:
        """A status record: one line, or on a narrow terminal as many as it needs, broken between its parts."""
        parts = (f"sweep {self.sweep_id}: {counts.parts()[0]}", *counts.parts()[1:])
        width = self._width()
        self._plain(joined(parts, width) if width is not None else " · ".join(parts))

    def of_this_run(self, row: SweepExperiment) -> bool:
        """Whether this run started (or took up again) the experiment."""
        return row.id > self.first_id or row.id in self.open_before

    def finish(self, counts: Counts) -> None:
        """The last status record, whatever the console."""
        self._status(counts)

    def _ended(self, row: SweepExperiment, summary: ExperimentSummary | None, counts: Counts) -> None:
        """``[7/72] <agent prompt maze settings> r2: #431 out of moves, 60 actions, 131,200 tokens, $0.0571`` and,
        for an error or a censored run, its failure reason. On a terminal narrower than the line, the cell is
        shortened first, then the reason (``fit_line``); a pipe gets it whole."""
        if not self.show_lines:
            return
        item = self.by_agent.get(row.agent_id)
        where = item_text(item) if item else (row.agent_id, "")
        done = (
            f": #{row.id} "
            + (
                f"{outcome_text(summary.status, summary.failure_reason)}, {summary.actions:,} actions, "
                if summary
                else "deleted, "
            )
            + f"{row.tokens:,} tokens, {dollars(row.cost_usd)}"
        )
        explained = row.ending in (None, Ending.SUCCESS, Ending.AGENT)  # the outcome says why; else the reason does
        reason = "" if explained or not row.failure_reason else f": {row.failure_reason}"
        head = f"[{counts.already_done + len(self.shown)}/{counts.planned}] "
        cell = (terminal_safe(where[0]), terminal_safe(where[1]))
        self._plain(fit_line(head, cell, done, terminal_safe(reason), self._width()))

    def _width(self) -> int | None:
        return self.bar.console.size.width if self.live else None

    def _pause(self, row: SweepExperiment) -> None:
        """Say once, whatever ``show_lines``, that an errored experiment's agent is paused, and why."""
        item = self.by_agent.get(row.agent_id)
        if item is None or item.cell.agent in self.paused_agents:
            return
        if (reason := self.paused(item.cell)) is not None:
            self.paused_agents.add(item.cell.agent)
            self._plain(
                f"paused {item.cell.agent}: its latest experiments all failed with {reason}; nothing more of it "
                "starts, the rest of the sweep goes on (fix its server, then run the same command again)"
            )

    def _plain(self, line: str) -> None:
        """A record on a line of its own: above the bar on a terminal, else written as it is (never wrapped)."""
        self.last_status = self.clock()
        text = terminal_safe(line)
        if self.live:
            self.bar.console.print(text, highlight=False, markup=False, soft_wrap=True)
        else:
            self.console.file.write(text + "\n")
            self.console.file.flush()


def item_text(item: Planned) -> tuple[str, str]:
    """A repetition as a progress line names it: its agent, maze and repetition (what a narrow terminal keeps
    longest), and its prompt and settings after them: ``baseline/random perfect-9 r2``, `` v1 maxMoves=300``."""
    cell = item.cell
    settings = " ".join(f"{k}={json.dumps(v)}" for k, v in sorted(cell.settings.items()))
    return f"{cell.agent} {cell.maze} r{item.repetition}", "".join(
        f" {part}" for part in (cell.prompt, settings) if part
    )


def fit_line(head: str, cell: tuple[str, str], done: str, reason: str, width: int | None) -> str:
    """A finished experiment's line in ``width`` columns (None: whole), by one rule: the cell's prompt and settings
    go first, then the failure reason down to its error's name, then the cell down to ``MIN_CELL`` characters,
    then the rest of the reason; its position in the sweep, its id and its counts are never cut."""
    parts = [head, *cell, done, reason]
    name = len(reason.split(":", 2)[1]) + 1 if reason.count(":") > 1 else 0  # ": ModelUnavailable"
    for index, narrowest in ((2, 0), (4, name + 1), (1, MIN_CELL), (4, len(": …"))):
        over = sum(map(len, parts)) - width if width is not None else 0
        if over > 0 and len(parts[index]) > narrowest:
            keep = max(len(parts[index]) - over, narrowest)
            parts[index] = "" if keep == 0 else shorten(parts[index], keep)
    return "".join(parts)


MIN_CELL = 12  # the narrowest a finished experiment's cell is shortened to on a narrow terminal


def _live_status(counts: Counts) -> tuple[str, ...]:
    """The live status under the bar, part by part."""
    return (
        f"{counts.running} running",
        f"{counts.failed} failed",
        f"{counts.left} left",
        f"{clock(counts.elapsed)} elapsed",
        f"ETA {clock(counts.eta)}",
        f"{counts.tokens:,} tokens",
        counts.spend_text(),
    )


def joined(parts: Iterable[str], width: int) -> str:
    """``parts`` joined by `` · `` in lines of at most ``width`` columns, broken between two parts, never inside
    one."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return "\n".join(lines)


class _BarAndStatus(Progress):
    """A progress bar (description, bar, done of planned) with its status on lines of their own below it, so that
    neither pushes the other off a narrow terminal."""

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            yield Text(joined(task.fields.get("status", ()), self.console.size.width))
