"""The docs' worked examples cannot drift: each example a page shows (``<!-- example: NAME -->``) is run again, as
``docs/examples.py`` runs it, in a fresh local database, and the page must show what the run printed (how long it
took and how long ago aside) and the figure it drew. The README's report picture is drawn from rows recorded with
it (``docs/report-baseline-ladder.json``): the same fresh run of the ladder must give those rows.

The single runs (``oriole run``, ``oriole ls``) are checked by ``make test``; the sweeps (312 experiments, about 6
minutes on a quiet 2-core machine) whole by ``make test-examples`` (``ORIOLE_DOC_EXAMPLES=1``), and cheaply by
``make test`` from their records (``docs/example-runs/NAME.jsonl``, one line per experiment): the sweep file plans
every recorded seed, a fixed sample of the cells (every agent of each sweep, over its maze sizes) runs again
through the local state machine and gives its recorded line, and the page's tables are what the record adds up
to. Runs are deterministic, so a page, its record and a fresh run agree or one of them drifted."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import statistics
from decimal import Decimal
from pathlib import Path

import pytest

from docs import examples, report_image
from oriole.core import sweep_plan
from oriole_workstation import sweep_runs

SHOWN = examples.shown_in_pages()
runs_examples = pytest.mark.skipif(
    os.environ.get("ORIOLE_DOC_EXAMPLES") != "1", reason="whole sweeps: make test-examples runs them"
)


def test_every_example_a_page_shows_is_one_the_script_makes():
    assert SHOWN, "no page shows an example"
    assert set(SHOWN) <= set(examples.BY_NAME), f"pages show examples docs/examples.py does not make: {set(SHOWN)}"


@pytest.fixture(scope="module")
def fresh():
    """Run an example in a fresh local database (its own ORIOLE_HOME), then stop its server and remove it."""
    homes: list[dict[str, str]] = []

    def run(name: str, *extra: str) -> tuple[str, list[str], Path]:
        env = examples.fresh_home()
        homes.append(env)
        figures = Path(env["ORIOLE_HOME"]) / "figures"
        figures.mkdir()
        block = examples.run(examples.BY_NAME[name], env, figures)
        return block, [examples.oriole(command, env) for command in extra], figures

    yield run
    for env in homes:
        examples.oriole("oriole db stop", env)
        shutil.rmtree(env["ORIOLE_HOME"], ignore_errors=True)


def _same_as_pages(name: str, block: str, figures: Path) -> None:
    regenerate = f"regenerate it: .venv/bin/python docs/examples.py {name}"
    for page, shown in SHOWN[name]:
        assert examples.normalized(shown) == examples.normalized(block), (
            f"{page.relative_to(examples.CHECKOUT)} shows example {name!r} as a fresh run no longer prints it; "
            + regenerate
        )
    figure = examples.BY_NAME[name].figure
    if figure is not None:
        assert examples.drawn(figures).read_bytes() == figure[1].read_bytes(), (
            f"{figure[1].name} is not the figure a fresh run draws; {regenerate}"
        )


@pytest.mark.parametrize("name", sorted(name for name in SHOWN if not examples.BY_NAME[name].timed))
def test_a_page_shows_what_a_fresh_run_prints(fresh, name):
    block, _, figures = fresh(name)
    _same_as_pages(name, block, figures)


@runs_examples
@pytest.mark.parametrize("name", sorted(name for name in SHOWN if examples.BY_NAME[name].timed and name != "ladder"))
def test_a_page_shows_what_a_fresh_sweep_prints(fresh, name):
    block, _, figures = fresh(name)
    _same_as_pages(name, block, figures)


@runs_examples
def test_the_ladder_and_the_readme_picture_are_what_a_fresh_run_gives(fresh):
    block, [report], figures = fresh("ladder", "oriole report --sweep baseline-ladder --format json")
    _same_as_pages("ladder", block, figures)
    key = ("llm_provider", "model_name", "maze_family", "maze_size", "runs", "successes", "median_actions_to_goal")
    drawn = [tuple(row[k] for k in key) for row in json.loads(Path(report_image.RECORD).read_text())["rows"]]
    assert [tuple(row[k] for k in key) for row in json.loads(report)] == drawn, (
        "the README's report picture shows rows a fresh run of the ladder no longer gives; regenerate it: "
        ".venv/bin/python docs/report_image.py"
    )


def test_what_no_two_runs_share_is_masked_and_nothing_else():
    page = "$ oriole ls\n# took 1 min 31 s on 2 cores\n74  perfect-21  goal found  7 min ago     duration 12.5 s\n"
    run = "$ oriole ls\n# took 2 min 22 s on 8 cores\n74  perfect-21  goal found  31 s ago  duration 3 s\n"
    assert examples.normalized(page) == examples.normalized(run)
    assert examples.normalized(page) != examples.normalized(page.replace("goal found", "out of moves"))
    assert examples.normalized(page) != examples.normalized(page.replace("74", "75"))


# Recorded sweeps, checked cheaply by make test: see the module's docstring.
RECORDED = [example for example in examples.EXAMPLES if example.sweep is not None and example.name in SHOWN]
Z = 1.959963984540054  # as wilson_lower and wilson_upper have it


def _recorded(example: examples.Example) -> list[dict]:
    return [json.loads(line) for line in example.record.read_text(encoding="utf-8").splitlines()]


def _plan(example: examples.Example) -> tuple[sweep_plan.SweepFile, list[sweep_plan.Planned]]:
    spec = sweep_runs.load(example.sweep_file)
    return spec, sweep_plan.plan(spec)


def _sample(example: examples.Example) -> list[sweep_plan.Planned]:
    """One repetition per agent of the sweep, spread over the plan (the k-th agent of n takes its planned
    experiment k/n of the way through, moved k further on so that two agents never land on the same maze of a
    repetition), so that the sample covers every agent and several maze sizes and stays cheap: one run an agent."""
    _, plan = _plan(example)
    agents = list(dict.fromkeys(item.cell.agent for item in plan))
    chosen = []
    for k, agent in enumerate(agents):
        own = [item for item in plan if item.cell.agent == agent]
        chosen.append(own[(k * len(own) // len(agents) + k) % len(own)])
    return chosen


SAMPLES = [(example, item) for example in RECORDED for item in _sample(example)]


def test_the_sweep_examples_records_are_what_their_files_plan():
    """Every recorded experiment is one its sweep file plans, with the seed and maze the file gives it, and every
    planned experiment is recorded: the same file in a fresh database plays the same seeds."""
    assert RECORDED, "no sweep example is recorded"
    for example in RECORDED:
        spec, plan = _plan(example)
        planned = {
            item.agent_id(spec.id): (item.cell.provider, item.cell.model, item.cell.maze, item.seed(spec))
            for item in plan
        }
        recorded = {
            e["agent_id"]: (e["llm_provider"], e["model_name"], e["maze"], e["seed"]) for e in _recorded(example)
        }
        assert recorded == planned, (
            f"{example.record.relative_to(examples.CHECKOUT)} is not what {example.sweep_file.name} plans; "
            f"regenerate it: .venv/bin/python docs/examples.py {example.name}"
        )


def test_the_sample_covers_every_agent_and_maze_size_of_each_sweep_example():
    for example in RECORDED:
        sample = [item for e, item in SAMPLES if e is example]
        _, plan = _plan(example)
        assert {item.cell.agent for item in sample} == {item.cell.agent for item in plan}
        assert len({item.cell.maze.split("@")[0] for item in sample}) >= 2


@pytest.mark.parametrize(
    "example, item", SAMPLES, ids=[f"{e.name}-{i.cell.agent}-{i.cell.maze}-r{i.repetition}" for e, i in SAMPLES]
)
def test_a_sampled_cell_of_a_sweep_example_runs_again_as_recorded(local, example, item):
    """The cell's execution input as the sweep makes it (its seed, maze and settings), outside any sweep of this
    database, run through the local state machine: its line is the recorded one, column for column."""
    spec = sweep_runs.load(example.sweep_file)
    execution_input = {**item.execution_input(spec), "comment": "a sampled doc example"}
    del execution_input["sweepId"]  # no sweep of this database: the sample joins none
    result = local.run(execution_input)
    assert result.summary is not None, result.execution
    row = local.store.conn.execute(
        "SELECT * FROM experiment_results WHERE experiment_id = %s", (result.summary.experiment_id,)
    ).fetchone()
    fresh = json.loads(examples.run_line({k: float(v) if isinstance(v, Decimal) else v for k, v in row.items()}))
    [recorded] = [e for e in _recorded(example) if e["agent_id"] == item.agent_id(spec.id)]
    assert fresh == recorded, (
        f"{item.agent_id(spec.id)} ({item.cell.describe()}) no longer runs as "
        f"{example.record.relative_to(examples.CHECKOUT)} recorded it; regenerate the example: "
        f".venv/bin/python docs/examples.py {example.name}"
    )


def _wilson(successes: int, runs: int) -> tuple[float, float]:
    p, n = successes / runs, runs
    centre, half = p + Z * Z / (2 * n), Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + Z * Z / n)), min(1.0, (centre + half) / (1 + Z * Z / n))


def _groups(example: examples.Example) -> dict[tuple[str, str], list[dict]]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for e in _recorded(example):
        key = (f"{e['llm_provider']}/{e['model_name']}", f"{e['maze_family']} {e['maze_size']}")
        groups.setdefault(key, []).append(e)
    return groups


def _table(lines: list[str]) -> list[list[str]]:
    """A piped table's rows (its header first) as cells, up to the blank line after it."""
    end = lines.index("") if "" in lines else len(lines)
    return [re.split(r" {2,}", line.strip()) for line in lines[:end]]


def _number(cell: str) -> float | None:
    return None if cell == "-" else float(cell.lstrip("$").replace(",", ""))


@pytest.mark.parametrize("example", RECORDED, ids=[e.name for e in RECORDED])
def test_a_sweep_example_page_shows_what_its_record_adds_up_to(example):
    """The page's summary line, each row of its comparison (runs, rate and Wilson interval, SPL, medians of the
    successes) and, where shown, each pivot cell's successes/runs, worked out again from the recorded lines."""
    groups, record = _groups(example), _recorded(example)
    for page, shown in SHOWN[example.name]:
        where = f"{page.relative_to(examples.CHECKOUT)}, example {example.name!r}"
        lines = shown.splitlines()
        endings = [e["ending"] for e in record]
        summary = lines[1].split(";")[0]
        assert summary.startswith(f"{len(record)} planned: 0 already done, "), where
        counts = {what: int(n) for n, what in re.findall(r"(\d+) (succeeded|agent failure)", summary)}
        assert counts == {"succeeded": endings.count("success"), "agent failure": endings.count("agent")}, where
        header, *rows = _table(lines[2:])
        assert header[:4] == ["agent", "mazes", "runs", "success (95% CI)"], where
        assert {(row[0], row[1]) for row in rows} == set(groups), where
        for row in rows:
            cells = dict(zip(header, row, strict=False))
            group = groups[(row[0], row[1])]
            decided = [e for e in group if e["ending"] in ("success", "agent")]
            won = [e for e in decided if e["ending"] == "success"]
            rate, low, high = map(float, re.findall(r"[\d.]+", cells["success (95% CI)"]))
            assert int(cells["runs"]) == len(decided), (where, row)
            expected = (len(won) / len(decided), *_wilson(len(won), len(decided)))
            assert (rate, low, high) == pytest.approx([100 * v for v in expected], abs=0.06), (
                where,
                row,
            )  # 4 digits, then 1
            # the page rounds to 3 decimals (half up, as numeric does) what the record holds to 4
            assert _number(cells["SPL"]) == pytest.approx(statistics.fmean(e["spl"] for e in group), abs=6e-4)
            for column, key, tolerance in (("actions", "actions", 0.5), ("efficiency", "path_efficiency", 6e-4)):
                median = statistics.median(e[key] for e in won) if won else None
                assert _number(cells[column]) == pytest.approx(median, abs=tolerance), (where, row, column)
        pivot = next((i for i, line in enumerate(lines) if line.endswith("--pivot")), None)
        if pivot is not None:
            header, *rows = _table(lines[pivot + 1 :])
            for row in rows:
                for mazes, cell in zip(header[1:], row[1:], strict=True):
                    decided = [e for e in groups[(row[0], mazes)] if e["ending"] in ("success", "agent")]
                    won = sum(e["ending"] == "success" for e in decided)
                    assert f" {won}/{len(decided)}" in cell, (where, row[0], mazes)
