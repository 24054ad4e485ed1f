"""The self-contained pages (an animation, a transcript, the report) opened from a file in Chromium: the animation's
controls step, play and jump; the transcript opens and closes every turn; nothing a model wrote becomes markup."""

from __future__ import annotations

from pathlib import Path

import pytest

from oriole_workstation import render
from tests.browser.conftest import BROKEN_WORDS, WIDTH
from tests.unit.test_render import EVIL, record
from tests.unit.test_report_html import page as report_page


@pytest.fixture
def animation(tmp_path) -> tuple[Path, render.Run]:
    conversation = (
        '<p class="expand"><button type="button" id="expand-all">expand all</button> '
        '<button type="button" id="collapse-all">collapse all</button></p>'
        + "".join(
            f'<details class="turn" data-turn="{n}"><summary>turn {n}</summary><p>t{n}</p></details>' for n in (1, 2)
        )
    )
    run = render.Run.from_record(record(), conversation)
    path = tmp_path / "animation.html"
    path.write_text(render.animation_html(run), encoding="utf-8")
    return path, run


def visible(page, selector: str) -> int:
    return page.eval_on_selector_all(selector, "els => els.filter(e => e.style.display !== 'none').length")


def test_the_animation_steps_moves_the_agent_lifts_the_fog_and_shows_each_turns_text(page, animation):
    path, run = animation
    page.goto(path.as_uri())
    assert page.text_content("#counter") == f"step 0 of {len(run.steps)}"
    assert page.text_content("#action") == "start" and visible(page, ".trail line") == 0
    cell = render.layout(run).cell
    assert page.get_attribute("#agent", "transform") == f"translate({-3 * cell},{-2 * cell})"  # at the start
    page.click("#next")
    page.click("#next")  # step 2 is the wall hit: a cross, no line
    assert "failed" in page.text_content("#action") and visible(page, ".trail line") == 1
    assert visible(page, "path.bump") == 1
    assert page.text_content("#model-text") == EVIL + " going east"  # turn 1's text, as text
    assert page.eval_on_selector("#model-text", "e => e.children.length") == 0
    assert page.get_attribute('#conversation details[data-turn="1"]', "class") == "turn current"
    page.fill("#goto", "5")
    page.press("#goto", "Enter")
    assert page.text_content("#counter") == f"step 5 of {len(run.steps)}" and page.url.endswith("#step-5")
    assert visible(page, ".goal-first-seen") == 1 and page.text_content("#model-text") == "almost there"
    page.click("#last")
    assert page.get_attribute("#agent", "transform") == "translate(0,0)"
    assert page.eval_on_selector_all(  # every tile ever seen uncovered, the never-seen ones still pale
        ".fog rect",
        "els => els.length > 0 && els.every(e => (e.dataset.seen !== '-1') === (e.style.display === 'none'))",
    )
    page.click("#first")
    page.keyboard.press("ArrowRight")
    assert page.text_content("#counter") == f"step 1 of {len(run.steps)}"


def test_play_runs_to_the_end_and_a_step_link_opens_there(page, animation):
    path, run = animation
    page.goto(path.as_uri() + "#step-3")
    assert page.text_content("#counter") == f"step 3 of {len(run.steps)}"
    page.select_option("#speed", "25")
    page.click("#play")
    page.wait_for_function(
        f"() => document.getElementById('counter').textContent === 'step {len(run.steps)} of {len(run.steps)}'"
    )
    assert page.is_visible("#icon-play") and not page.is_visible("#icon-pause")  # stopped at the end


def test_expand_all_opens_every_turn_and_collapse_all_closes_them(page, animation):
    path, _ = animation
    page.goto(path.as_uri())
    page.click("#expand-all")
    assert page.eval_on_selector_all("#conversation details", "els => els.every(d => d.open)")
    page.click("#collapse-all")
    assert page.eval_on_selector_all("#conversation details", "els => els.every(d => !d.open)")


def test_the_report_page_fits_1400_px_and_breaks_no_word(page, tmp_path):
    """The HTML report of long agent names and many columns: within 1,400 px, every number and word whole (a
    model id may wrap between its parts)."""
    model = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    config = {"maxMoves": 500, "visionRange": 2, "temperature": 0.7, "historyMode": "summary"}
    spec = [
        ("bedrock", model, config, "perfect", 11, ["success", "agent", "success"], 900),
        ("bedrock", model, {**config, "temperature": 0.0}, "perfect", 11, ["success", "success"], 900),
        ("openai", "Qwen/Qwen3-8B-Instruct", {}, "family", 21, ["agent", "success", "agent"], 1200),
        ("baseline", "wall-follower", {}, "family", 21, ["success", "success"], 0),
    ]
    path = tmp_path / "report.html"
    path.write_text(report_page(spec), encoding="utf-8")
    page.goto(path.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    selector = "#leaderboard td, #leaderboard th, #comparison-table td, #comparison-table th, #experiments-table td"
    assert page.evaluate(BROKEN_WORDS, selector) == []
    assert page.evaluate("document.getElementById('comparison-table').getBoundingClientRect().right") <= WIDTH
