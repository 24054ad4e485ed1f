"""Rates that count every run, recomputed independently (issue 30, items 2, 5, 7 and 11).

A sweep's experiments are written into a database of their own with chosen endings: successes, agent failures,
runs censored by the wall clock, errors, a repetition that errored and was run again, an unpriced model, a
baseline on three mazes only. Every number the comparison reports (both rates and their Wilson intervals, the
bootstrap intervals over mazes, the counts of each ending, SPL, tokens and cost over every attempt, the flags) is
worked out here again from the experiments, by this file's own code, and compared with what the SQL, the JSON,
the CSV and the terminal table say.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from psycopg.types.json import Jsonb

from oriole.config import resolve
from oriole.core import mazeset
from oriole.core.endings import closing
from oriole.statuses import ExperimentStatus
from oriole.store import Store, db
from oriole_workstation.report import PAIRS_NOTE
from tests.conftest import scratch_database

SWEEP = "rates"
Z = 1.959963984540054
REASONS = {
    "success": ("succeeded", None),
    "agent": ("timed_out", "max_moves reached: 40 actions of 40 allowed"),
    "censored": ("timed_out", "max_duration_minutes reached: ran 30.2 of 30 minutes"),
    "error": ("failed", "ModelUnavailable: the server answered 503"),
}


@dataclass
class Attempt:
    """One experiment of the sweep as this test writes it."""

    agent: str  # provider/model
    maze: int  # index into MAZES
    repetition: int
    ending: str
    path: int = 10  # moves that changed position
    tokens: int = 0
    cost: float | None = 0.0
    id: int = 0
    fields: dict = field(default_factory=dict)


MAZES = [mazeset.seeded(f"perfect-9@{n}") for n in range(12)]


def plan() -> list[Attempt]:
    """Agent a (priced): 12 mazes x 2 repetitions, with two runs censored, one error, and one repetition that
    errored first and succeeded when run again. Agent b (unpriced): the same 24 repetitions, all decided. The
    random baseline: 3 mazes x 2 repetitions."""
    out = []
    for maze in range(12):
        for rep in (1, 2):
            ending = "success" if (maze + rep) % 3 else "agent"
            if (maze, rep) in ((1, 1), (5, 2)):
                ending = "censored"
            if (maze, rep) == (7, 1):
                ending = "error"
            if (maze, rep) == (9, 2):
                out.append(Attempt("ollama/a", maze, rep, "error", tokens=400, cost=0.004))  # run again below
            out.append(Attempt("ollama/a", maze, rep, ending, path=8 + maze + rep, tokens=1000 + maze, cost=0.01))
            out.append(
                Attempt("ollama/b", maze, rep, "success" if maze % 4 else "agent", path=12, tokens=700, cost=None)
            )
    out += [
        Attempt("baseline/random", maze, rep, "success" if rep == 1 else "agent") for maze in range(3) for rep in (1, 2)
    ]
    return out


def optimum(a: Attempt) -> int:
    """The optimum stored with an attempt: its maze's shortest path, or its own path where that is shorter (a
    goal seen before it was reached, as under goalCondition = sight)."""
    return min(MAZES[a.maze].shortest_path_length, a.path)


def store_attempts(conn, attempts: list[Attempt], sweep: str = SWEEP) -> None:
    conn.execute("INSERT INTO sweeps (id, planned, run_input) VALUES (%s, %s, '{}')", (sweep, len(attempts)))
    ids = {}
    for entry in MAZES:
        ids[entry.name] = conn.execute("SELECT id FROM mazes WHERE name = %s", (entry.name,)).fetchone()["id"]
    for n, a in enumerate(attempts, 1):
        provider, model = a.agent.split("/")
        status, reason = REASONS[a.ending]
        ended = closing(ExperimentStatus(status), reason)
        entry = MAZES[a.maze]
        config = {**resolve({}, {}), "seed": a.maze * 10 + a.repetition}
        config["pricing"] = None if a.cost is None else {"inputPerMTok": 1.0, "outputPerMTok": 1.0, "source": "test"}
        a.id = conn.execute(
            """
            INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text,
                agent_id, comment, config, seed, status, ending, ending_cause, goal_found, current_x, current_y,
                action_count, move_count, failed_move_count, input_tokens, output_tokens, cost_usd, completed_at,
                failure_reason, origin_execution_arn, execution_arns, optimal_path_length, code_version, sweep_id)
            VALUES (%(maze)s, %(provider)s, %(model)s, 'v1', 'h', 't', %(agent_id)s, %(comment)s, %(config)s,
                %(seed)s, %(status)s, %(ending)s, %(cause)s, %(status)s = 'succeeded', 0, 0, %(actions)s,
                %(moves)s, 2, %(tokens)s, 0, %(cost)s, now(), %(reason)s, %(arn)s, ARRAY[%(arn)s], %(optimum)s,
                '1.0+test', %(sweep)s)
            RETURNING id
            """,
            {
                "maze": ids[entry.name],
                "provider": provider,
                "model": model,
                "agent_id": f"{sweep}/{model}-{a.maze}/r{a.repetition}",
                "comment": f"sweep:{sweep}",
                "sweep": sweep,
                "config": Jsonb(config),
                "seed": config["seed"],
                "status": status,
                "ending": ended.ending,
                "cause": ended.cause,
                "actions": a.path + 5,
                "moves": a.path + 2,
                "tokens": a.tokens,
                "cost": a.cost,
                "reason": reason,
                "arn": f"arn:{sweep}:{n}",
                "optimum": optimum(a),
            },
        ).fetchone()["id"]


@pytest.fixture(scope="module")
def sweep(server_url, migrated_template) -> Iterator[tuple[str, list[Attempt]]]:
    with scratch_database(server_url, migrated_template) as url:
        store = Store(db.connect(url))
        for entry in MAZES:
            store.add_maze(entry, "generated")
        attempts = plan()
        store_attempts(store.conn, attempts)
        store.conn.close()
        yield url, attempts


# A second sweep in the same database where nothing varies within a maze: agent c solves all 24 runs on 12 mazes,
# agent d none. Every resample of its mazes gives one rate, and the McNemar p-value of c against d is 2 / 2**24.
CERTAIN = "certain"


@pytest.fixture(scope="module")
def certain(sweep) -> list[Attempt]:
    url, _ = sweep
    attempts = [
        Attempt(f"ollama/{agent}", maze, rep, ending)
        for maze in range(12)
        for rep in (1, 2)
        for agent, ending in (("c", "success"), ("d", "agent"))
    ]
    with db.connect(url) as conn:
        store_attempts(conn, attempts, CERTAIN)
    return attempts


@pytest.fixture
def report(sweep, cli, monkeypatch):
    url, _ = sweep
    monkeypatch.setenv("DATABASE_URL", url)

    def invoke(*args: str, sweep: str = SWEEP) -> str:
        result = cli("report", "--sweep", sweep, *args)
        assert result.exit_code == 0, result.output
        return result.stdout

    return invoke


# --- the independent computation -----------------------------------------------------------------------------


def wilson(successes: int, n: int) -> tuple[float, float] | None:
    if not n:
        return None
    p = successes / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    spread = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return max(0.0, centre - spread), min(1.0, centre + spread)


def maze_bootstrap(per_maze: list[tuple[int, int]]) -> tuple[float, float] | None:
    """The documented procedure: 2,000 resamples of the mazes with replacement (a generator seeded with 0), each
    maze with all its runs; the 2.5th and 97.5th percentiles (the draws' sorted values at 2.5% and 97.5% of the
    way), where runs share mazes (more runs than mazes, at least two mazes); where every maze has the same rate
    (every resample too), the Wilson interval with the mazes as its trials."""
    mazes = [m for m in per_maze if m[0]]
    if not (sum(r for r, _ in mazes) > len(mazes) >= 2):
        return None
    if len({s / r for r, s in mazes}) == 1:  # every resample the same rate: Wilson's, each maze one trial
        return wilson(len(mazes) * mazes[0][1] / mazes[0][0], len(mazes))
    rng = random.Random(0)
    rates = sorted(
        sum(s for _, s in sample) / sum(r for r, _ in sample)
        for sample in ([mazes[rng.randrange(len(mazes))] for _ in mazes] for _ in range(2000))
    )
    return rates[int(0.025 * 1999)], rates[int(0.975 * 1999)]


def expected(attempts: list[Attempt], agent: str) -> dict:
    """The group's numbers, from its attempts: each repetition counts once (its decided attempt, else its
    latest); tokens and cost over every attempt."""
    mine = [a for a in attempts if a.agent == agent]
    by_repetition: dict[tuple[int, int], list[Attempt]] = {}
    for a in mine:
        by_repetition.setdefault((a.maze, a.repetition), []).append(a)
    counted = [max(tries, key=lambda a: (a.ending in ("success", "agent"), a.id)) for tries in by_repetition.values()]
    decided = [a for a in counted if a.ending in ("success", "agent")]
    wins = [a for a in decided if a.ending == "success"]
    censored = sum(a.ending == "censored" for a in counted)
    errors = sum(a.ending == "error" for a in counted)
    priced = [a.cost for a in mine if a.cost is not None]
    per_maze: dict[int, list[Attempt]] = {}
    for a in counted:
        per_maze.setdefault(a.maze, []).append(a)
    efficiency = [optimum(a) / max(optimum(a), a.path) for a in wins]
    return {
        "runs": len(decided),
        "all_runs": len(counted),
        "successes": len(wins),
        "agent_failures": len(decided) - len(wins),
        "censored": censored,
        "errors": errors,
        "superseded": len(mine) - len(counted),
        "mazes": len({a.maze for a in decided}),
        "rate": len(wins) / len(decided),
        "rate_all": len(wins) / len(counted),
        "wilson": wilson(len(wins), len(decided)),
        "wilson_all": wilson(len(wins), len(counted)),
        "maze_ci": maze_bootstrap(
            [
                (sum(a.ending in ("success", "agent") for a in runs), sum(a.ending == "success" for a in runs))
                for runs in per_maze.values()
            ]
        ),
        "maze_ci_all": maze_bootstrap(
            [(len(runs), sum(a.ending == "success" for a in runs)) for runs in per_maze.values()]
        ),
        "spl": sum(efficiency) / len(decided),
        "spl_all": sum(efficiency) / len(counted),  # a censored or errored run scores 0
        "tokens": sum(a.tokens for a in mine),
        "cost": sum(priced) if priced else None,
        "unpriced": sum(a.cost is None for a in mine),
        "many_undecided": (censored + errors) / len(counted) > 0.05,
    }


def close(value, want, digits: int = 4) -> bool:
    return (value is None) == (want is None) and (want is None or abs(float(value) - want) <= 0.5 * 10**-digits)


@pytest.fixture(scope="module")
def rows(sweep) -> dict[str, dict]:
    url, _ = sweep
    conn = db.connect(url)
    found = conn.execute(
        "SELECT * FROM compare_experiments(experiments => ARRAY(SELECT id FROM chosen_experiments(sweeps => %s)))",
        ([SWEEP],),
    ).fetchall()
    conn.close()
    return {f"{r['llm_provider']}/{r['model_name']}": r for r in found}


@pytest.mark.parametrize("agent", ["ollama/a", "ollama/b", "baseline/random"])
def test_each_group_counts_every_run_once_and_both_rates_equal_the_independent_computation(sweep, rows, agent):
    want, row = expected(sweep[1], agent), rows[agent]
    for column in ("runs", "all_runs", "successes", "agent_failures", "censored", "errors", "superseded", "mazes"):
        assert row[column] == want[column], column
    assert close(row["success_rate"], want["rate"]) and close(row["success_rate_all"], want["rate_all"])
    assert close(row["success_rate_low"], want["wilson"][0]) and close(row["success_rate_high"], want["wilson"][1])
    assert close(row["success_rate_all_low"], want["wilson_all"][0])
    assert close(row["success_rate_all_high"], want["wilson_all"][1])
    assert close(row["spl"], want["spl"]) and float(row["spl"]) <= float(row["success_rate"])
    assert close(row["spl_all"], want["spl_all"]) and float(row["spl_all"]) <= float(row["spl"])
    assert (want["spl_all"] < want["spl"]) == (want["all_runs"] > want["runs"] and want["successes"] > 0)
    assert float(row["tokens"]) == want["tokens"] and close(row["cost_usd"], want["cost"], 6)
    assert row["unpriced_runs"] == want["unpriced"] and row["many_undecided"] == want["many_undecided"]
    assert row["few_mazes"] == (want["mazes"] < 10)


def test_the_retried_repetition_counts_once_and_its_failed_attempt_still_spends(sweep, rows):
    a = rows["ollama/a"]
    assert a["superseded"] == 1 and a["all_runs"] == 24  # 25 attempts, 24 repetitions
    assert float(a["tokens"]) == sum(1000 + m for m in range(12)) * 2 + 400  # the failed attempt's 400 too
    assert (a["censored"], a["errors"]) == (2, 1)
    assert a["many_undecided"]  # 3 of 24 runs


def test_unpriced_is_unknown_never_zero(rows, report):
    b = rows["ollama/b"]
    assert b["cost_usd"] is None and b["cost_per_run"] is None and b["unpriced_runs"] == 24
    wide = report("--wide").splitlines()
    [line] = [line for line in wide if line.startswith("ollama/b ")]
    assert "unpriced" in line and "$0.0000" not in line


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_every_format_carries_both_rates_and_the_intervals_over_mazes(sweep, report, fmt):
    text = report("--format", fmt)
    found = json.loads(text) if fmt == "json" else list(csv.DictReader(io.StringIO(text)))
    by_agent = {f"{r['llm_provider']}/{r['model_name']}": r for r in found}
    for agent in ("ollama/a", "ollama/b", "baseline/random"):
        want, row = expected(sweep[1], agent), by_agent[agent]
        for column, interval in (("maze_ci", want["maze_ci"]), ("maze_ci_all", want["maze_ci_all"])):
            low, high = row[f"{column}_low"], row[f"{column}_high"]
            low, high = (None if v in (None, "") else float(v) for v in (low, high))
            assert (low, high) == ((None, None) if interval is None else (round(interval[0], 4), round(interval[1], 4)))
        assert str(row["few_mazes"]).lower() == str(want["mazes"] < 10).lower()


def test_the_default_table_shows_the_interval_over_mazes_first_and_flags_what_needs_saying(sweep, report, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # a terminal of 100 columns
    monkeypatch.setenv("COLUMNS", "100")
    narrow = report().splitlines()
    assert max(map(len, narrow)) <= 100
    want = expected(sweep[1], "ollama/a")
    low, high = want["maze_ci"]
    [a] = [line for line in narrow if line.startswith("ollama/a ")]
    assert f"({low * 100:.1f}-{high * 100:.1f})" in a  # over mazes, not Wilson's
    [random_line] = [line for line in narrow if line.startswith("baseline/random ")]
    assert random_line.split()[-1].startswith("m")  # 3 mazes
    assert "95% CI: over mazes (a bootstrap resampling the mazes, repetitions nested)" in narrow
    wide = report("--wide").splitlines()
    assert "Wilson CI" in wide[0] and "maze CI" in wide[0]


# --- success by step and paired comparisons --------------------------------------------------------------------


def counted_runs(attempts: list[Attempt], agent: str) -> list[Attempt]:
    """An agent's counted attempts: each repetition's decided attempt, else its latest."""
    by_repetition: dict[tuple[int, int], list[Attempt]] = {}
    for a in attempts:
        if a.agent == agent:
            by_repetition.setdefault((a.maze, a.repetition), []).append(a)
    return [max(tries, key=lambda a: (a.ending in ("success", "agent"), a.id)) for tries in by_repetition.values()]


def kaplan_meier(runs: list[Attempt]) -> dict[int, tuple[int, int, int, float]]:
    """By hand: step -> (at risk, successes, censored, share succeeded within it), a run's step its actions
    (path + 5, as stored); censored and errored runs censored at their step, agent failures at risk throughout."""
    failures = sum(a.ending == "agent" for a in runs)
    steps = sorted({a.path + 5 for a in runs if a.ending != "agent"})
    survival, out = 1.0, {}
    for step in steps:
        at_risk = failures + sum(a.path + 5 >= step for a in runs if a.ending != "agent")
        wins = sum(a.path + 5 == step and a.ending == "success" for a in runs)
        gone = sum(a.path + 5 == step and a.ending in ("censored", "error") for a in runs)
        survival *= 1 - wins / at_risk
        out[step] = (at_risk, wins, gone, 1 - survival)
    return out


@pytest.mark.parametrize("agent", ["ollama/a", "ollama/b", "baseline/random"])
def test_success_by_step_is_kaplan_meier_with_censored_runs_censored(sweep, agent):
    url, attempts = sweep
    conn = db.connect(url)
    provider, model = agent.split("/")
    found = conn.execute(
        "SELECT * FROM success_by_step(experiments => ARRAY(SELECT id FROM chosen_experiments(sweeps => %s))) "
        "WHERE llm_provider = %s AND model_name = %s ORDER BY step",
        ([SWEEP], provider, model),
    ).fetchall()
    conn.close()
    runs = counted_runs(attempts, agent)
    want = kaplan_meier(runs)
    assert [r["step"] for r in found] == sorted(want)
    for r in found:
        at_risk, wins, gone, share = want[r["step"]]
        assert (r["at_risk"], r["successes"], r["censored"]) == (at_risk, wins, gone)
        assert close(r["success_share"], share)
    decided = [a for a in runs if a.ending in ("success", "agent")]
    if len(decided) == len(runs):  # nothing censored: the curve ends at the decided rate
        assert close(found[-1]["success_share"], sum(a.ending == "success" for a in runs) / len(runs))
    else:  # censoring: above the rate over all runs, which counts censored runs as failures
        assert float(found[-1]["success_share"]) > sum(a.ending == "success" for a in runs) / len(runs)


def mcnemar(only_a: int, only_b: int) -> float:
    n = only_a + only_b
    if not n:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n)


def paired_bootstrap(per_maze: dict[int, list[tuple[bool, bool]]]) -> tuple[float, float] | None:
    """The documented procedure: 2,000 resamples of the mazes (a generator seeded with 0, mazes in the order of
    their grids' hashes), each with all its pairs; the difference a - b over the resampled pairs."""
    mazes = [(len(p), sum(a and not b for a, b in p) - sum(b and not a for a, b in p)) for p in per_maze.values()]
    if len(mazes) < 2:
        return None
    rng = random.Random(0)
    draws = sorted(
        sum(d for _, d in sample) / sum(n for n, _ in sample)
        for sample in ([mazes[rng.randrange(len(mazes))] for _ in mazes] for _ in range(2000))
    )
    return draws[int(0.025 * 1999)], draws[int(0.975 * 1999)]


def expected_pair(attempts: list[Attempt], a: str, b: str) -> dict:
    """Two agents over the (maze, repetition) they share, both decided: the seed is the maze's and the
    repetition's alone, so the pairs are the shared (maze, seed)."""

    def decided(agent: str) -> dict[tuple[int, int], bool]:
        return {
            (r.maze, r.repetition): r.ending == "success"
            for r in counted_runs(attempts, agent)
            if r.ending in ("success", "agent")
        }

    mine, theirs = decided(a), decided(b)
    shared = sorted(set(mine) & set(theirs))
    only_a = sum(mine[k] and not theirs[k] for k in shared)
    only_b = sum(theirs[k] and not mine[k] for k in shared)
    per_maze: dict[int, list[tuple[bool, bool]]] = {}
    for k in shared:
        per_maze.setdefault(k[0], []).append((mine[k], theirs[k]))
    order = sorted(per_maze, key=lambda m: MAZES[m].content_hash)
    return {
        "pairs": len(shared),
        "mazes": len(per_maze),
        "only_a": only_a,
        "only_b": only_b,
        "difference": (only_a - only_b) / len(shared),
        "p": mcnemar(only_a, only_b),
        "interval": paired_bootstrap({m: per_maze[m] for m in order}),
    }


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down by hand: the i-th smallest times (m - i), made monotone, capped at 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def test_paired_comparisons_equal_mcnemar_holm_and_the_paired_bootstrap_by_hand(sweep, report):
    _, attempts = sweep
    found = json.loads(report("--pairs", "--format", "json"))
    names = {
        (f"{r['a_llm_provider']}/{r['a_model_name']}", f"{r['b_llm_provider']}/{r['b_model_name']}"): r for r in found
    }
    assert set(names) == {("baseline/random", "ollama/a"), ("baseline/random", "ollama/b"), ("ollama/a", "ollama/b")}
    wants = {pair: expected_pair(attempts, *pair) for pair in names}
    adjusted = dict(zip(wants, holm([w["p"] for w in wants.values()]), strict=True))
    for pair, row in names.items():
        want = wants[pair]
        for column in ("pairs", "mazes", "only_a", "only_b"):
            assert row[column] == want[column], (pair, column)
        assert close(row["difference"], want["difference"])
        assert close(row["mcnemar_p"], want["p"], 6) and close(row["holm_p"], adjusted[pair], 6)
        interval = want["interval"]
        assert (row["difference_low"], row["difference_high"]) == (
            (None, None) if interval is None else (round(interval[0], 4), round(interval[1], 4))
        )
    assert wants["ollama/a", "ollama/b"]["pairs"] == 21  # 24 repetitions less a's 3 censored or errored
    table = report("--pairs")  # piped: every cell whole, the note on one line (the widths: test_terminal_widths.py)
    assert "McNemar" in table and PAIRS_NOTE in table.splitlines()
    rows_csv = list(csv.DictReader(io.StringIO(report("--pairs", "--format", "csv"))))
    assert sorted(float(r["holm_p"]) for r in rows_csv) == sorted(r["holm_p"] for r in found)


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_mazes_all_solved_or_all_failed_get_wilson_over_the_mazes_flagged_in_every_format(certain, report, fmt):
    text = report("--format", fmt, sweep=CERTAIN)
    found = json.loads(text) if fmt == "json" else list(csv.DictReader(io.StringIO(text)))
    by_agent = {f"{r['llm_provider']}/{r['model_name']}": r for r in found}
    for agent, solved in (("ollama/c", 12), ("ollama/d", 0)):
        row, want = by_agent[agent], wilson(solved, 12)  # 24 runs on 12 mazes: n = 12, not 24
        for column in ("maze_ci", "maze_ci_all"):
            assert (float(row[f"{column}_low"]), float(row[f"{column}_high"])) == (round(want[0], 4), round(want[1], 4))
            assert row[f"{column}_method"] == "wilson over mazes"
        assert float(row["maze_ci_high"]) - float(row["maze_ci_low"]) > 0.1  # not 100.0-100.0
    table = report("--wide", sweep=CERTAIN).splitlines()
    [c] = [line for line in table if line.startswith("ollama/c ")]
    assert "75.8%-100.0%" in c and c.endswith("  w")  # its interval Wilson's over the 12 mazes
    assert any(line.startswith("w: every maze has the same rate") for line in table)


def test_wilson_in_python_equals_wilson_in_sql(sweep):
    """The interval over mazes that falls back to Wilson's (intervals.wilson) computes what the SQL's Wilson
    columns do (wilson_lower, wilson_upper)."""
    from oriole_workstation.intervals import wilson as twin

    url, _ = sweep
    with db.connect(url) as conn:
        for successes, trials in [(0, 1), (1, 1), (0, 12), (12, 12), (5, 12), (7, 24), (1, 3), (499, 1000)]:
            row = conn.execute(
                "SELECT wilson_lower(%s, %s) AS low, wilson_upper(%s, %s) AS high",
                (successes, trials, successes, trials),
            ).fetchone()
            assert twin(successes, trials) == pytest.approx((row["low"], row["high"]), rel=1e-12, abs=1e-15)
            assert twin(successes, trials) == pytest.approx(wilson(successes, trials), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_p_values_keep_full_precision_in_every_machine_readable_format(certain, report, fmt):
    text = report("--pairs", "--format", fmt, sweep=CERTAIN)
    [row] = json.loads(text) if fmt == "json" else list(csv.DictReader(io.StringIO(text)))
    assert (row["only_a"], row["only_b"]) in ((24, 0), ("24", "0"))
    want = mcnemar(24, 0)  # 1.19e-07: six decimals would read 0
    assert float(row["mcnemar_p"]) == pytest.approx(want, rel=1e-12)
    assert float(row["holm_p"]) == pytest.approx(want, rel=1e-12)  # one pair: Holm leaves it
    assert "<0.0001" in report("--pairs", sweep=CERTAIN)  # only the display rounds


def test_mcnemar_exact_in_sql_matches_the_binomial_by_hand(sweep):
    url, _ = sweep
    conn = db.connect(url)
    for only_a, only_b in [(0, 0), (0, 1), (3, 9), (9, 3), (10, 10), (0, 25), (40, 61), (2000, 2150), (10, 3000)]:
        got = conn.execute("SELECT mcnemar_exact(%s, %s) AS p", (only_a, only_b)).fetchone()["p"]
        assert got == pytest.approx(mcnemar(only_a, only_b), rel=1e-9, abs=1e-15), (only_a, only_b)
    conn.close()


def test_the_html_page_has_the_curves_and_the_pairs(report):
    page = report("--format", "html")
    assert 'id="success-by-step"' in page and '<g class="curve">' in page
    assert 'id="pairs-table"' in page and "McNemar" in page
