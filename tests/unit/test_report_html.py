"""The HTML report, its charts and the paper figures, pure over hand-made rows, read back as a reviewer would:
no line between categories, every label whole, series apart by colour and marker, a caption per chart, "no
runs" where there are none, provenance, the leaderboard first, and stored text shown, never obeyed."""

from __future__ import annotations

import io
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from oriole_workstation import charts, drawing, report_html
from oriole_workstation.analysis import GroupRow, with_maze_intervals
from oriole_workstation.confounds import confounds
from oriole_workstation.report import (
    GroupBy,
    comparison_query,
    origin_of,
    pivot_cells,
    sql_literal,
)
from oriole_workstation.results import Filters
from oriole_workstation.rows import ComparedExperiment, ComparisonRow

HOSTILE = "<script>alert('x')</script>"
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
SVG = "{http://www.w3.org/2000/svg}"


def wilson(successes: int, runs: int, z: float = 1.96) -> tuple[Decimal, Decimal]:
    p = successes / runs
    centre, spread = p + z * z / (2 * runs), z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))
    return (
        Decimal(str(round((centre - spread) / (1 + z * z / runs), 4))),
        Decimal(str(round((centre + spread) / (1 + z * z / runs), 4))),
    )


# What the built experiments do not vary: the rest of an ``experiment_results`` row.
UNVARIED = {
    "maze_id": 1,
    "goal_found": False,
    "goal_first_seen_step": None,
    "goal_reached_step": None,
    "moves": 0,
    "failed_moves": 0,
    "recalls": 0,
    "invalid_calls": 0,
    "turns": 1,
    "unique_tiles_visited": 1,
    "revisits": 0,
    "counted": True,
    "path_length": 20,
    "optimal_path_length": 10,
    "last_action_at": None,
    "completed_at": None,
    "duration_seconds": None,
    "model_calls": 0,
    "mean_latency_ms": None,
    "varied_config": {},
    "config": {},
    "agent_id": None,
    "comment": None,
    "tags": [],
    "failure_reason": None,
    "agent_label": None,
}


def column_figures(built: tuple[list[GroupRow], list[ComparedExperiment]]) -> dict[str, drawing.Drawing]:
    """The paper figures of built rows, with their provenance."""
    rows, experiments = built
    origin = origin_of(experiments, Filters(), GroupBy.family, "test", NOW)
    return report_html.figures(rows, experiments, GroupBy.family, charts.COLUMN, origin)


def build(spec: list[tuple], by_maze: bool = False) -> tuple[list[GroupRow], list[ComparedExperiment]]:
    """Comparison rows and experiments from ``(provider, model, config, family, size, endings, tokens)``, each
    ending on its own maze (``<family>-<size>@<n>``) twice, so the runs share mazes."""
    experiments = []
    for provider, model, config, family, size, endings, tokens in spec:
        for n, ending in enumerate(endings):
            experiments.append(
                {
                    "experiment_id": len(experiments) + 1,
                    "llm_provider": provider,
                    "model_name": model,
                    "prompt_version": "v1",
                    "prompt_hash": "c0ffee" * 10 + "beef",
                    "compared_config": config,
                    "maze": f"{family}-{size}@{n // 2}",
                    "maze_family": family,
                    "maze_size": f"{size}x{size}",
                    "maze_hash": f"{family}{size}-{n // 2}",
                    "maze_tiles": size * size,
                    "shortest_path_length": 10,
                    "ending": ending,
                    "ending_cause": {"success": "goal", "agent": "max_moves"}.get(ending, "provider"),
                    "status": {"success": "succeeded", "agent": "timed_out"}.get(ending, "failed"),
                    "actions": 20 + 7 * n,
                    "path_efficiency": Decimal("0.5") + Decimal(n) / 100 if ending == "success" else None,
                    "spl": Decimal("0.5") + Decimal(n) / 100 if ending == "success" else Decimal(0),
                    "input_tokens": tokens,
                    "output_tokens": tokens // 10,
                    "cost_usd": Decimal(tokens) / 100_000,
                    "seed": 1000 + len(experiments),
                    "sweep_id": "mixed",
                    "code_version": "0.9.0+local",
                    "started_at": NOW,
                }
            )
    typed = [ComparedExperiment(**UNVARIED, **e) for e in experiments]
    by = GroupBy.maze if by_maze else GroupBy.family
    per_maze = [] if by_maze else group(typed, by_maze=True)
    return with_maze_intervals(group(typed, by_maze), per_maze, confounds(typed, by), by), typed


def group(experiments: list[ComparedExperiment], by_maze: bool) -> list[ComparisonRow]:
    """What ``compare_experiments`` returns for these experiments."""
    groups: dict[tuple, list[ComparedExperiment]] = {}
    for e in experiments:
        key = (
            e.llm_provider,
            e.model_name,
            e.maze_family,
            e.maze_size,
            e.maze if by_maze else None,
            str(e.compared_config),
        )
        groups.setdefault(key, []).append(e)
    rows = []
    for (provider, model, family, size, maze, _), found in groups.items():
        runs = [e for e in found if e.ending in ("success", "agent")]
        wins = [e for e in runs if e.ending == "success"]
        ended = [e for e in found if e.ending is not None]
        low, high = wilson(len(wins), len(runs)) if runs else (None, None)
        all_low, all_high = wilson(len(wins), len(ended)) if ended else (None, None)
        cost = sum(e.cost_usd for e in ended)
        tokens = Decimal(sum(e.tokens for e in ended))
        censored = sum(e.ending == "censored" for e in found)
        errors = sum(e.ending == "error" for e in found)
        mazes = len({e.maze for e in runs})
        rows.append(
            ComparisonRow(
                **{
                    "llm_provider": provider,
                    "model_name": model,
                    "agent_label": None,
                    "prompt_version": "v1",
                    "prompt_hash": found[0].prompt_hash,
                    "maze_family": family,
                    "maze_size": size,
                    "maze": maze,
                    "mazes": mazes,
                    "few_mazes": mazes < 10,
                    "config": found[0].compared_config,
                    "all_runs": len(ended),
                    "runs": len(runs),
                    "successes": len(wins),
                    "agent_failures": len(runs) - len(wins),
                    "censored": censored,
                    "errors": errors,
                    "running": 0,
                    "superseded": 0,
                    "success_rate": Decimal(len(wins)) / len(runs) if runs else None,
                    "success_rate_low": low,
                    "success_rate_high": high,
                    "success_rate_all": Decimal(len(wins)) / len(ended) if ended else None,
                    "success_rate_all_low": all_low,
                    "success_rate_all_high": all_high,
                    "undecided_share": Decimal(censored + errors) / len(ended) if ended else None,
                    "many_undecided": (censored + errors) * 20 > len(ended),
                    "median_actions_to_goal": Decimal(20) if wins else None,
                    "median_path_length": Decimal(20) if wins else None,
                    "median_path_efficiency": Decimal("0.5") if wins else None,
                    "spl": Decimal("0.25") if runs else None,
                    "spl_all": Decimal("0.2") if ended else None,
                    "tokens": tokens,
                    "tokens_per_run": tokens / len(ended) if ended else None,
                    "tokens_per_success": tokens / len(wins) if wins else None,
                    "cost_usd": cost,
                    "unpriced_runs": 0,
                    "cost_per_run": cost / len(ended) if ended else None,
                    "cost_per_success": cost / len(wins) if wins else None,
                    "mean_latency_ms": None,
                }
            )
        )
    return rows


BASELINES = [
    ("baseline", agent, {}, family, size, ["success", "success", "agent", "success"], 0)
    for agent in ("explorer", "random")
    for family, size in (("perfect", 11), ("dense", 21))
]
ERRORED = ("ollama", "broken", {}, "perfect", 11, ["error"], 0)
LLM = ("ollama", "qwen2.5:7b", {}, "perfect", 11, ["success", "agent"], 5000)


def page(spec: list[tuple], by: GroupBy = GroupBy.family, animations: dict | None = None) -> str:
    rows, experiments = build(spec, by_maze=by is GroupBy.maze)
    return report_html.page(
        rows,
        experiments,
        by,
        Filters(tags=("sweep:mixed",)),
        animations or {},
        database="db.example:5432/oriole",
        now=NOW,
    )


class Parsed(HTMLParser):
    """The page's elements in order (tag, attributes), the text of each, and each inline SVG's source."""

    def __init__(self, text: str):
        super().__init__()
        self.elements, self.texts, self._open = [], [], []
        self.feed(text)
        self.svgs = {m[1]: m[0] for m in re.finditer(r'<svg id="([\w-]+)".*?</svg>', text, re.S)}

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.texts.append(data)


def svg_root(text: str, chart_id: str) -> ET.Element:
    """An inline chart as XML (given the namespace a standalone file carries)."""
    source = Parsed(text).svgs[chart_id]
    return ET.fromstring(source.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def label_texts(root: ET.Element) -> list[str]:
    """Each series label as read, its wrapped lines joined."""
    return [" ".join(t.itertext()) for t in root.iter(f"{SVG}text") if t.get("class") == "series-label"]


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


# --- honest charts ---------------------------------------------------------------------------------------


def test_the_success_chart_joins_no_two_categories_with_a_line():
    text = page([*BASELINES, LLM, ERRORED])
    root = svg_root(text, "success")
    assert not root.findall(f".//{SVG}polyline") and not root.findall(f".//{SVG}path")
    assert all(p.get("class") == "marker" for p in root.iter(f"{SVG}polygon"))
    dots = [g for g in root.iter(f"{SVG}g") if g.get("class") == "dot"]
    assert len(dots) == 5  # one per group with runs: explorer and random on two panels, qwen on one
    for dot in dots:  # a dot's lines are its whisker and caps: level, or upright and short
        for line in dot.iter(f"{SVG}line"):
            y1, y2 = float(line.get("y1")), float(line.get("y2"))
            assert y1 == y2 or abs(y1 - y2) < 10


def test_panels_are_the_families_and_sizes_or_the_mazes():
    by_family = svg_root(page(BASELINES), "success")
    titles = [t.text for t in by_family.iter(f"{SVG}text") if t.get("class") == "panel-title"]
    assert titles == ["perfect 11x11", "dense 21x21"]
    by_maze = svg_root(page(BASELINES, GroupBy.maze), "success")
    titles = [t.text for t in by_maze.iter(f"{SVG}text") if t.get("class") == "panel-title"]
    assert titles == ["perfect-11@0", "perfect-11@1", "dense-21@0", "dense-21@1"]


def test_every_label_is_whole_however_long():
    config = {"maxMoves": 500, "visionRange": 2, "temperature": 0.7, "memoryMode": "summary"}
    model = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    spec = [
        ("bedrock", model, config, "perfect", 11, ["success", "agent"], 900),
        ("bedrock", model, {**config, "temperature": 0.0}, "perfect", 11, ["success"], 900),
    ]
    text = page(spec)
    assert "…" not in text and "..." not in text
    whole = squeezed(f'bedrock/{model} maxMoves=500 memoryMode="summary" temperature=0.7 visionRange=2')
    for chart in ("success", "efficiency", "actions", "tokens", "cost"):
        assert whole in map(squeezed, label_texts(svg_root(text, chart))), chart
    figure = column_figures(build(spec))["success"]
    keyed = label_texts(ET.fromstring(drawing.to_svg(figure)))
    assert squeezed(f'bedrock/{model} · maxMoves=500 memoryMode="summary" temperature=0.0 visionRange=2') in map(
        squeezed, keyed
    )


def test_every_wrapped_line_fits_its_room():
    spec = [("openai", "m" * 90, {"maxMoves": n}, "perfect", 11, ["success"], 10) for n in (1, 2)]
    figure = column_figures(build(spec))["success"]
    for shape in figure.shapes:
        if isinstance(shape, drawing.Text) and shape.role == "series-label":
            assert all(shape.x + drawing.text_width(line, shape.size) <= figure.width for line in shape.lines)


def test_sixteen_series_differ_in_colour_and_marker_together():
    series = [charts.Series((n,), f"agent-{n}", "", n) for n in range(16)]
    assert len({(s.colour, s.shape) for s in series}) == 16
    assert len({s.code for s in series}) == 16
    same_shape = [
        (a, b) for a in series for b in series if a.index < b.index and a.shape == b.shape and a.hollow == b.hollow
    ]
    assert all(luminance(a.colour) - luminance(b.colour) for a, b in same_shape)  # told apart in grey too
    assert all(abs(luminance(a.colour) - luminance(b.colour)) > 0.5 for a, b in same_shape)


def luminance(colour: str) -> float:
    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_every_chart_has_a_caption_saying_what_a_point_and_a_whisker_are():
    parsed = Parsed(page([*BASELINES, LLM]))
    figures = [a["id"] for tag, a in parsed.elements if tag == "figure"]
    assert figures == ["figure-success", "figure-efficiency", "figure-actions", "figure-tokens", "figure-cost"]
    text = page([*BASELINES, LLM])
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", text)
    assert len(captions) == len(figures) and all(c.startswith("Each ") for c in captions)
    assert (
        "the whisker is its 95% interval over mazes (a bootstrap, repetitions nested; Wilson&#x27;s with the mazes as "
        "trials where every maze has the same rate, flag w)" in captions[0]
    )
    assert "the grey band behind a whisker over mazes is the Wilson interval" in captions[0]


def test_an_agent_whose_only_experiment_errored_has_no_runs_not_zero_percent():
    text = page([*BASELINES, ERRORED])
    root = svg_root(text, "success")
    empty = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "no-runs"]
    assert "no runs (1 error)" in empty
    assert "no runs" in empty  # the broken agent on dense 21x21, where it never ran
    assert '<td class="none">no runs (1 error)</td>' in text


def test_token_and_cost_charts_appear_only_where_there_are_tokens():
    baselines = Parsed(page(BASELINES))
    assert {"success", "efficiency", "actions"} == set(baselines.svgs)
    mixed = Parsed(page([*BASELINES, LLM]))
    assert {"tokens", "cost"} <= set(mixed.svgs)
    tokens = svg_root(page([*BASELINES, LLM]), "tokens")
    assert label_texts(tokens) == ["ollama/qwen2.5:7b"]  # the baselines' zeros are not drawn
    assert [t.text for t in tokens.iter(f"{SVG}text") if t.get("class") == "no-runs"] == ["no runs"]  # dense 21x21
    assert "agents without tokens (baselines) are left out" in tokens.find(f"{SVG}desc").text


def test_distributions_are_split_like_the_table():
    root = svg_root(page(BASELINES), "efficiency")
    assert [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "panel-title"] == [
        "perfect 11x11",
        "dense 21x21",
    ]
    assert [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "count"] == ["n=3"] * 4


def test_a_success_dot_links_its_animation():
    text = page(BASELINES, animations={1: "animations/experiment-1.html"})
    assert 'href="animations/experiment-1.html"' in Parsed(text).svgs["efficiency"]
    assert '<a href="animations/experiment-1.html">1</a>' in text


# --- a page that stands on its own -----------------------------------------------------------------------


def test_the_leaderboard_comes_first_then_provenance_and_the_intervals():
    parsed = Parsed(page(BASELINES))
    sections = [a["id"] for tag, a in parsed.elements if tag == "section"]
    assert sections[:4] == ["leaderboard-section", "provenance", "intervals", "success"]
    assert sections[-2:] == ["comparison", "experiments"]


def test_the_leaderboard_is_agent_by_family_and_size_with_intervals():
    text = page([*BASELINES, ERRORED])
    table = re.search(r'<table id="leaderboard">.*?</table>', text, re.S)[0]
    assert re.findall(r'<th scope="col">(.*?)</th>', table) == ["agent", "perfect 11x11", "dense 21x21"]
    agents = [cell.replace("<wbr>", "") for cell in re.findall(r'<th scope="row">(.*?)</th>', table)]
    assert agents == ["baseline/explorer", "baseline/random", "ollama/broken"]
    assert '<th scope="row">baseline/<wbr>explorer</th>' in table  # a break allowed between the name's parts
    assert '<span class="rate">75.0%</span> <span class="runs">3/4</span>' in table
    assert '<span class="interval">maze 50.0%-100.0%</span>' in table  # the runs share two mazes
    assert "few mazes" in table  # flagged: two mazes say little about their family


def test_the_pivot_is_the_same_leaderboard_for_a_terminal():
    rows, _ = build([*BASELINES, ERRORED])
    headers, cells = pivot_cells(rows)
    assert headers == ("agent", "perfect 11x11", "dense 21x21")
    assert cells[0] == ("baseline/explorer", "75.0% (50.0-100.0) 3/4 m", "75.0% (50.0-100.0) 3/4 m")
    assert cells[2] == ("ollama/broken", "no runs (1 error)", "no runs")


def test_the_comparison_table_puts_the_configuration_under_the_agent():
    spec = [
        ("baseline", "explorer", {"maxMoves": 100}, "perfect", 11, ["success"], 0),
        ("baseline", "explorer", {"maxMoves": 900}, "perfect", 11, ["success"], 0),
    ]
    table = re.search(r'<table id="comparison-table">.*?</table>', page(spec), re.S)[0]
    assert ">config<" not in table
    assert '<th scope="row">baseline/<wbr>explorer<span class="detail">maxMoves=900</span></th>' in table


def test_provenance_names_where_the_numbers_come_from():
    text = page([*BASELINES, LLM])
    block = re.search(r'<dl class="provenance">.*?</dl>', text, re.S)[0]
    terms = re.findall(r"<dt>(.*?)</dt>", block)
    assert terms == [
        "generated",
        "database",
        "scope",
        "sweeps",
        "experiments",
        "mazes",
        "code versions",
        "commits",
        "harness",
        "model builds",
        "prompts",
        "seeds",
        "query",
    ]
    assert re.search(r"<code>\w+/[^<]+ build not recorded</code>", block)  # a model's, started before issue 31
    assert "baseline/" not in block.split("<dt>model builds</dt>")[1].split("</dd>")[0]  # a baseline calls none
    assert "db.example:5432/oriole" in block and "<code>mixed</code> (18 experiments)" in block
    assert "<code>0.9.0+local</code> (18 experiments)" in block
    assert block.count("<code>not recorded</code> (18 experiments)") == 2  # started before commits and harnesses
    assert "v1 sha256:" + "c0ffee" * 10 + "beef" in block
    assert "18 values, 1000 to 1017" in block and "4 different grids: dense-21@0, dense-21@1, perfect-11@0" in block
    assert (
        "SELECT * FROM compare_experiments(experiments =&gt; ARRAY(SELECT id FROM chosen_experiments(tags =&gt; "
        "ARRAY[&#x27;sweep:mixed&#x27;])), by_maze =&gt; false);"
    ) in block


def test_the_query_shown_quotes_what_it_is_given():
    assert sql_literal("it's") == "'it''s'" and sql_literal(None) == "NULL" and sql_literal(True) == "true"
    query = comparison_query(Filters(models=("o'brien",), since=datetime(2025, 1, 2, tzinfo=UTC)), GroupBy.maze)
    assert query == (
        "SELECT * FROM compare_experiments(experiments => ARRAY(SELECT id FROM chosen_experiments(models => "
        "ARRAY['o''brien'], since => '2025-01-02 00:00:00+00:00'::timestamptz)), by_maze => true);"
    )


def test_stored_text_is_shown_never_obeyed():
    spec = [
        ("ollama", HOSTILE, {}, "perfect", 11, ["success"], 10),
        ("ollama", "m\x1b[2J\u202eevil", {}, "perfect", 11, ["success"], 10),
    ]
    text = page(spec)
    assert HOSTILE not in text and "&lt;script&gt;" in text and "\x1b" not in text and "\u202e" not in text
    assert "m\\x1b[2J\\u202eevil" in text
    parsed = Parsed(text)
    assert "script" not in {tag for tag, _ in parsed.elements}
    assert any(HOSTILE in t for t in parsed.texts)
    for chart in parsed.svgs:
        svg_root(text, chart)  # every chart is well-formed XML


# --- figures for a paper ---------------------------------------------------------------------------------


def test_paper_figures_are_a_column_wide_with_readable_fonts():
    found = column_figures(build([*BASELINES, LLM]))
    assert set(found) == {"success", "efficiency", "actions", "tokens", "cost"}
    for d in found.values():
        root = ET.fromstring(drawing.to_svg(d))
        assert root.get("width") == "252pt" and root.get("height").endswith("pt")
        assert root.find(f"{SVG}desc").text == d.caption
        assert min(float(t.get("font-size")) for t in root.iter(f"{SVG}text")) >= 6.5


def test_every_figure_carries_its_provenance_in_its_caption_and_its_svg_metadata():
    rows, experiments = build([*BASELINES, LLM])
    experiments = [replace(e, sweep_id="ladder\u202e", code_version="abc1234") for e in experiments]
    for name, d in column_figures((rows, experiments)).items():
        assert d.caption.endswith(
            f"sweep ladder\\u202e · code abc1234 · 2025-06-01 · n = {len(experiments)} experiments on 4 mazes."
        ), name
        root = ET.fromstring(drawing.to_svg(d))
        items = {e.tag.split("}")[1]: e.text for e in root.find(f"{SVG}metadata")[0]}
        assert items["sweeps"] == f"ladder\\u202e ({len(experiments)})" and items["code-versions"].startswith("abc1234")
        assert (
            items["query"].startswith("SELECT * FROM compare_experiments(")
            and items["generated"] == "2025-06-01T12:00:00Z"
        )
        assert set(items) >= {"prompts", "experiments", "runs", "mazes", "seeds", "database", "scope", "oriole"}


def test_a_figure_paints_as_a_png_at_300_dpi():
    d = column_figures(build(BASELINES))["success"]
    image = Image.open(io.BytesIO(drawing.to_png(d)))
    assert image.size[0] == math.ceil(252 * 300 / 72) and round(image.info["dpi"][0]) == 300
    assert len(image.convert("L").getcolors(256)) > 10  # drawn, not blank


# --- axes and text ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "low, high, ticks", [(0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1.0]), (0, 7, [0, 2, 4, 6, 8]), (0, 1500, [0, 500, 1000, 1500])]
)
def test_nice_ticks_cover_the_range_with_round_steps(low, high, ticks):
    assert charts.nice_ticks(low, high) == ticks


def test_log_ticks_are_powers_of_ten():
    assert charts.log_ticks(30, 900) == [10, 20, 50, 100, 200, 500, 1000]  # a short range: 2 and 5 between
    assert charts.log_ticks(8, 2300) == [1, 10, 100, 1000, 10000]


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200), st.floats(min_value=20, max_value=400)
)
def test_wrapping_keeps_every_character_and_fits(text, width):
    lines = drawing.wrap(text, width, 10)
    assert squeezed(" ".join(lines)) == squeezed(text)
    assert all(drawing.text_width(line, 10) <= width or len(line.strip()) == 1 for line in lines)


# --- what a figure lets a reader see ------------------------------------------------------------------------


def column_chart(labels: list[str], titles: list[str], cell: charts.Cell) -> ET.Element:
    series = [charts.Series((label,), label, "", n) for n, label in enumerate(labels)]
    panels = [charts.Panel(title, {(label,): cell for label in labels}) for title in titles]
    axis = charts.rate_axis("success rate")
    return ET.fromstring(drawing.to_svg(charts.distributions(series, panels, axis, charts.COLUMN, "t", "c")))


def texts(root: ET.Element, role: str) -> list[list[str]]:
    """Each text of a role as its lines."""
    return [list(t.itertext()) for t in root.iter(f"{SVG}text") if t.get("class") == role]


SAMPLES = charts.Cell(samples=tuple(charts.Sample(v, "") for v in (0.2, 0.4, 0.4, 0.5, 0.5, 0.5, 0.6, 0.8)))


def test_a_paper_figure_names_its_rows_in_full_where_the_names_fit():
    short = ["GPT-4o", "Qwen 8B", "oracle", "random"]
    root = column_chart(short, ["perfect 11x11"], SAMPLES)
    assert [" ".join(lines) for lines in texts(root, "series-label")] == short and not texts(root, "key-code")
    long = ["bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0", "openai/Qwen/Qwen3-8B-Instruct-AWQ"]
    root = column_chart(long, ["perfect 11x11"], SAMPLES)
    assert [lines for lines in texts(root, "key-code")] == [["A"], ["B"]]  # keyed, every label in full below


def test_a_seeded_maze_keeps_its_seed_whole_in_a_panel_title():
    root = column_chart(["oracle"], ["perfect-11@1234567890", "perfect-11@987654321"], SAMPLES)
    titles = texts(root, "panel-title")
    assert titles[0][-1] == "@1234567890" and titles[1][-1] == "@987654321", titles


def test_the_box_and_the_median_are_drawn_over_the_markers():
    root = column_chart(["oracle"], ["perfect 11x11"], SAMPLES)
    group = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "distribution")
    kinds = [child.tag.removeprefix(SVG) for child in group]
    assert kinds[-4:] == ["rect", "rect", "line", "line"] and "g" not in kinds[-4:]  # after every marker
    median = list(group)[-1]
    assert float(median.get("x1")) == pytest.approx(float(median.get("x2")))


def test_provenance_tells_a_commit_with_uncommitted_changes_from_the_clean_one_and_names_the_harness():
    from oriole_workstation import provenance

    _, experiments = build(BASELINES)
    commit, harness = "ab12" * 10, "c0de" * 16
    recorded = [
        replace(e, code_commit=commit, code_dirty=n % 2 == 0, harness_version="1", harness_hash=harness)
        for n, e in enumerate(experiments)
    ]
    origin = provenance.read(recorded, "everything", "SELECT 1", "db", NOW)
    half = len(recorded) // 2
    assert origin.commits == {f"{commit[:12]} + uncommitted changes": half, commit[:12]: len(recorded) - half}
    assert origin.harnesses == {"1 sha256:c0dec0dec0de": len(recorded)}
    assert "+ uncommitted changes" in origin.sentence() and origin.metadata()["harnesses"] == (
        f"1 sha256:c0dec0dec0de ({len(recorded)})"
    )
