"""The docs' worked examples cannot drift: each example a page shows (``<!-- example: NAME -->``) is run again, as
``docs/examples.py`` runs it, in a fresh local database, and the page must show what the run printed (how long it
took and how long ago aside) and the figure it drew. The README's report picture is drawn from rows recorded with
it (``docs/report-baseline-ladder.json``): the same fresh run of the ladder must give those rows.

The single runs (``oriole run``, ``oriole ls``) are checked by ``make test``; the sweeps (312 experiments, about 6
minutes on a quiet 2-core machine) by ``make test-examples`` (``ORIOLE_DOC_EXAMPLES=1``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from docs import examples, report_image

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
