"""The HTML report and its charts, pure over hand-made rows: structure, escaping, series styles, axes."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from html.parser import HTMLParser

import pytest

from oriole_workstation import charts
from oriole_workstation.report import GroupBy
from oriole_workstation.report_html import page
from oriole_workstation.results import Filters

HOSTILE = "<script>alert('x')</script>"


def group(model: str, maze: str | None, runs: int, successes: int, **extra) -> dict:
    rate = Decimal(successes) / runs if runs else None
    return {"llm_provider": "ollama", "model_name": model, "prompt_version": "v1", "prompt_hash": "h1",
            "maze_family": "perfect", "maze_size": "7x7", "mazes": 1, "maze": maze, "config": {}, "runs": runs,
            "successes": successes,
            "success_rate": rate, "success_rate_low": rate and rate / 2, "success_rate_high": rate and min(rate * 2, 1),
            "median_actions_to_goal": Decimal(20), "median_path_efficiency": Decimal("0.8"),
            "tokens_per_run": Decimal(1000), "tokens_per_success": Decimal(1500) if successes else None,
            "cost_per_run": Decimal("0.01"), "cost_per_success": Decimal("0.02") if successes else None,
            "mean_latency_ms": None, "errors": 0, "running": 0, **extra}


def experiment(n: int, model: str, maze: str, ending: str, actions: int, efficiency: float | None) -> dict:
    return {"experiment_id": n, "llm_provider": "ollama", "model_name": model, "prompt_version": "v1",
            "prompt_hash": "h1", "compared_config": {}, "maze": maze, "maze_tiles": 49 if maze == "perfect-7" else 81,
            "shortest_path_length": 8, "ending": ending, "status": "succeeded" if ending == "success" else "timed_out",
            "actions": actions, "path_efficiency": None if efficiency is None else Decimal(str(efficiency)),
            "input_tokens": 900, "output_tokens": 100, "cost_usd": Decimal("0.01")}


class Texts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.texts = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.texts.append(data)


@pytest.fixture
def html() -> str:
    rows = [group("calm", None, 2, 1), group(HOSTILE, None, 2, 0)]
    by_maze = [group("calm", "perfect-9", 1, 0), group("calm", "perfect-7", 1, 1), group(HOSTILE, "perfect-7", 2, 0)]
    experiments = [experiment(1, "calm", "perfect-7", "success", 10, 0.8),
                   experiment(2, "calm", "perfect-9", "agent", 400, None),
                   experiment(3, HOSTILE, "perfect-7", "agent", 400, None),
                   experiment(4, HOSTILE, "perfect-7", "agent", 400, None)]
    return page(rows, by_maze, experiments, GroupBy.family, Filters(tag="t"), {1: "replays/experiment-1.html"},
                now=datetime(2025, 6, 1, tzinfo=UTC))


def test_model_text_is_never_markup(html):
    assert HOSTILE not in html and "&lt;script&gt;" in html
    parsed = Texts()
    parsed.feed(html)
    assert "script" not in parsed.tags and parsed.tags.count("svg") == 5
    assert any(HOSTILE in t for t in parsed.texts)  # shown as text, escaped once


def test_the_ladder_orders_mazes_by_size_and_a_success_links_its_replay(html):
    assert html.index(">perfect-7</text>") < html.index(">perfect-9</text>")
    assert 'href="replays/experiment-1.html"' in html
    assert "1 of 1 runs succeeded (100%" in html and "no success" in html


def test_every_series_differs_in_marker_or_dash_as_well_as_colour():
    styles = [(s[1], s[2]) for s in charts.STYLES]
    assert len(set(styles)) == len(styles) and len({s[0] for s in charts.STYLES}) == len(charts.STYLES)


@pytest.mark.parametrize("low, high, ticks", [(0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1.0]), (0, 7, [0, 2, 4, 6, 8]),
                                              (0, 1500, [0, 500, 1000, 1500])])
def test_nice_ticks_cover_the_range_with_round_steps(low, high, ticks):
    assert charts.nice_ticks(low, high) == ticks


def test_log_ticks_are_powers_of_ten():
    assert charts.log_ticks(30, 900) == [10, 20, 50, 100, 200, 500, 1000]  # a short range: 2 and 5 between
    assert charts.log_ticks(8, 2300) == [1, 10, 100, 1000, 10000]
