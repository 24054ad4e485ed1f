"""`oriole view` in Chromium, as a researcher uses it: from the sweeps to an experiment and across to the next, the
report and back down; a running sweep's page counting up by itself; the replay's controls beside the transcript; a
model answer crafted to break out of the page shown as text, with nothing run and nothing fetched; every page
within 1,400 px."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from PIL import Image

from tests.browser.conftest import BROKEN_WORDS, WIDTH
from tests.integration.test_viewer import BEACON, HOSTILE, sweep_input

PAGES = ("/", "/experiments", "/sweeps/SWEEP", "/compare?sweep=SWEEP", "/compare?sweep=SWEEP&by=maze")
SHOTS = Path(__file__).resolve().parents[2] / ".oriole" / "screenshots"  # where a person looks at them


def test_from_the_sweeps_down_to_an_experiment_across_and_up_to_its_report(page, viewer, viewed):
    page.goto(viewer + "/")
    page.click(f"#sweep-list a[href='/sweeps/{viewed.sweep_id}']")
    assert page.text_content("h1") == f"Sweep {viewed.sweep_id}"
    first = viewed.sweep[0]
    page.click(f"#experiment-list a[href='/experiments/{first}']")
    assert page.text_content("h1").startswith(f"Experiment {first}: baseline/oracle")
    page.click("#next-experiment")
    assert urlsplit(page.url).path == f"/experiments/{viewed.sweep[1]}"  # its replay may add #step-N
    page.click("#previous")
    assert urlsplit(page.url).path == f"/experiments/{first}"
    page.click("#report")
    assert page.url.endswith(f"/compare?sweep={viewed.sweep_id}") and page.is_visible("#leaderboard")
    page.click(f"#experiments-table a[href='/experiments/{viewed.sweep[2]}']")
    assert page.text_content("h1").startswith(f"Experiment {viewed.sweep[2]}: baseline/random")


def test_the_list_filters_searches_and_sorts_from_its_form(page, viewer, viewed):
    page.goto(viewer + "/experiments")
    page.select_option("select[name=sweep]", viewed.sweep_id)
    page.select_option("select[name=agent]", "baseline/oracle")
    page.click("#filters button[type=submit]")
    rows = page.eval_on_selector_all("#experiment-list tbody tr", "rows => rows.map(r => Number(r.dataset.id))")
    assert sorted(rows) == viewed.sweep[:2]
    page.fill("input[name=q]", f"{viewed.sweep_id}-hostile")
    page.select_option("select[name=sweep]", "")
    page.select_option("select[name=agent]", "")
    page.click("#filters button[type=submit]")
    assert page.eval_on_selector_all("#experiment-list tbody tr", "rows => rows.map(r => r.dataset.id)") == [
        str(viewed.hostile)
    ]
    page.goto(viewer + f"/experiments?sweep={viewed.sweep_id}")
    page.click("#experiment-list thead a:has-text('actions')")
    first = page.eval_on_selector_all(
        "#experiment-list tbody tr td:nth-child(5)", "cells => cells.map(c => +c.textContent)"
    )
    assert first == sorted(first, reverse=True) and "sort=actions" in page.url


def test_checked_experiments_are_compared_and_linked_back(page, viewer, viewed):
    page.goto(viewer + f"/experiments?sweep={viewed.sweep_id}")
    chosen = viewed.sweep[1:3]
    for n in chosen:
        page.check(f"input[name=id][value='{n}']")
    page.click("#compare-selected")
    page.wait_for_selector("#leaderboard")  # the comparison's page, once loaded (a busy machine is slow)
    assert page.is_visible("#leaderboard") and "id=" in page.url
    linked = page.eval_on_selector_all("#experiments-table a", "links => links.map(a => a.getAttribute('href'))")
    assert linked == [f"/experiments/{n}" for n in chosen]


def test_a_running_sweeps_page_counts_up_by_itself(page, viewer, viewed, local):
    """The page is open while another experiment of the sweep runs: its counts and rows change without a reload."""
    local.store.record_sweep_plan(viewed.sweep_id, len(viewed.sweep) + 1, {"id": viewed.sweep_id})
    page.goto(viewer + f"/sweeps/{viewed.sweep_id}")
    assert page.text_content("#sweep-done") == str(len(viewed.sweep)) and page.text_content("#sweep-left") == "1"
    page.evaluate("window.notReloaded = true")
    finished: list[int] = []
    runner = threading.Thread(
        target=lambda: finished.append(
            local.run(sweep_input(viewed.sweep_id, "explorer", "perfect-7", 1)).as_json()["experiment_id"]
        )
    )
    runner.start()
    page.wait_for_function(
        f"() => document.getElementById('sweep-done').textContent === '{len(viewed.sweep) + 1}'", timeout=60_000
    )
    runner.join()
    assert page.evaluate("window.notReloaded") is True
    assert page.text_content("#sweep-left") == "0"
    assert page.is_visible(f"#experiment-list a[href='/experiments/{finished[0]}']")
    assert page.get_attribute("#sweep-bar", "value") == str(len(viewed.sweep) + 1)


def test_the_replay_steps_beside_the_transcript(page, viewer, viewed):
    page.goto(viewer + f"/experiments/{viewed.sweep[0]}")
    total = int(page.get_attribute("#slider", "max"))
    assert page.text_content("#counter") == f"step 0 of {total}" and total > 3
    page.click("#next")
    page.click("#next")
    assert page.text_content("#counter") == f"step 2 of {total}"
    assert page.eval_on_selector("#conversation details.turn.current", "d => d.open && d.dataset.turn") == "1"
    page.fill("#goto", str(total))
    page.press("#goto", "Enter")
    assert page.text_content("#counter") == f"step {total} of {total}" and page.url.endswith(f"#step-{total}")
    page.click("#first")
    page.select_option("#speed", "25")
    page.click("#play")
    page.wait_for_function(f"() => document.getElementById('counter').textContent === 'step {total} of {total}'")
    page.click("#expand-all")
    assert page.eval_on_selector_all("#conversation details", "ds => ds.every(d => d.open)")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#conversation details.turn')].every(d => d.dataset.loaded === 'yes')"
    )  # each turn read from the server


def test_a_hostile_answer_is_shown_as_text_runs_nothing_and_fetches_nothing(page, viewer, viewed):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(viewer + f"/experiments/{viewed.hostile}")
    page.click("#expand-all")
    page.click("#next")  # the first step: its turn's model text is the hostile answer
    shown = HOSTILE.replace("\u202e", "\\u202e")
    assert page.text_content("#reasoning") == shown  # the call's reasoning, and the turn's two answers:
    assert page.text_content("#model-text") == f"{shown}\n{shown}"
    assert page.eval_on_selector("#model-text", "e => e.children.length") == 0
    page.locator("#conversation pre", has_text="window.pwned=1").first.wait_for()  # the turn, read when opened
    assert page.evaluate("window.pwned") is None
    assert not [url for url in requested if "127.0.0.2" in url or not url.startswith(viewer)]
    assert not [url for url in requested if BEACON in url]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_fits_1400_px_and_is_looked_at_in_greyscale(page, viewer, viewed, path):
    path = path.replace("SWEEP", viewed.sweep_id)
    page.goto(viewer + path)
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    SHOTS.mkdir(parents=True, exist_ok=True)
    name = path.strip("/").replace("/", "-").replace("?", "-").replace("&", "-").replace("=", "-") or "index"
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    Image.open(io.BytesIO(page.screenshot())).convert("L").save(SHOTS / f"{name}-grey.png")


def test_numbers_and_words_in_the_reports_tables_are_never_broken(page, viewer, viewed):
    """Every cell of the comparison and leaderboard holds its words whole: a cell's text breaks only at spaces."""
    page.goto(viewer + f"/compare?sweep={viewed.sweep_id}")
    broken = page.evaluate(BROKEN_WORDS, "#leaderboard td, #leaderboard th, #comparison-table td, #comparison-table th")
    assert not broken, broken
