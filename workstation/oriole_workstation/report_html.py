"""``oriole report --format html``: one self-contained page (no network, no script, nothing fetched) with the
comparison table, inline SVG charts and every experiment it counts, linked to its replay when rendered.

Pure over the rows ``Results`` reads, so it is tested without a database. Every text from the data is escaped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from oriole_workstation import charts
from oriole_workstation.charts import Bar, Point, Sample, Series
from oriole_workstation.display import html_safe as escape  # escaped, and nothing obeyed
from oriole_workstation.report import GroupBy, comparison_rows, config_text, prompt_labels, running_note, table_cells
from oriole_workstation.results import Filters, Results

RUN_DEFINITION = ("Runs are the experiments that ended on the agent's merits: a success, a limit reached, or an "
                  "ending the agent caused (such as stalling). Infrastructure and provider failures are errors and "
                  "enter no rate; running experiments are not counted.")

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; }
.meta, figcaption, .note { color: #555; font-size: 0.9rem; }
table { border-collapse: collapse; font-size: 0.8rem; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.45rem; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } td { white-space: nowrap; } .wide { overflow-x: auto; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0; } .pair { display: flex; flex-wrap: wrap; gap: 1rem; }
svg.chart { max-width: 100%; height: auto; }
@media print { body { margin: 0; max-width: none; } .wide { overflow: visible; } td { white-space: normal; }
               h2 { break-after: avoid; } figure { break-inside: avoid; } }
"""


def series_of(rows: Sequence[dict], config_key: str = "config") -> dict[tuple, Series]:
    """One series per model x prompt x compared configuration, labelled with only what tells them apart."""
    prompts = prompt_labels(list(rows))
    several_prompts = len(prompts) > 1
    found: dict[tuple, Series] = {}
    for row in rows:
        key = series_key(row, config_key)
        if key in found:
            continue
        parts = [f"{row['llm_provider']}/{row['model_name']}"]
        if several_prompts:
            parts.append(prompts[row["prompt_version"], row["prompt_hash"]])
        if row[config_key]:
            parts.append(config_text(row[config_key]))
        found[key] = Series(key, " · ".join(parts), len(found))
    return found


def series_key(row: dict, config_key: str = "config") -> tuple:
    return (row["llm_provider"], row["model_name"], row["prompt_version"], row["prompt_hash"],
            json.dumps(row[config_key], sort_keys=True))


def _percent(value) -> str:
    return "-" if value is None else f"{float(value) * 100:.0f}%"


def ladder_chart(series: dict[tuple, Series], by_maze: Sequence[dict], experiments: Sequence[dict]) -> str:
    """Success rate and its interval per agent across the mazes, smallest maze first."""
    size = {e["maze"]: (e["maze_tiles"], e["shortest_path_length"], e["maze"]) for e in experiments}
    mazes = sorted({r["maze"] for r in by_maze if r["runs"]}, key=lambda m: size.get(m, (0, 0, m)))
    points: dict[tuple, list[Point]] = {}
    for r in by_maze:
        if not r["runs"]:
            continue
        label = series[series_key(r)].label
        note = (f"{label} · {r['maze']}: {r['successes']} of {r['runs']} runs succeeded ({_percent(r['success_rate'])},"
                f" 95% CI {_percent(r['success_rate_low'])}-{_percent(r['success_rate_high'])})")
        points.setdefault(series_key(r), []).append(Point(r["maze"], float(r["success_rate"]),
                                                          float(r["success_rate_low"]),
                                                          float(r["success_rate_high"]), note))
    for group in points.values():
        group.sort(key=lambda p: mazes.index(p.category))
    return charts.ladder(list(series.values()), points, mazes, "Success rate per agent across the mazes", "ladder")


def _samples(series: dict[tuple, Series], experiments: Sequence[dict], column: str,
             replays: dict[int, str]) -> dict[tuple, list[Sample]]:
    found: dict[tuple, list[Sample]] = {}
    for e in experiments:
        if e["ending"] != "success" or e[column] is None:
            continue
        note = (f"experiment {e['experiment_id']} · {e['maze']} · {e['actions']} actions"
                + (f" · efficiency {float(e['path_efficiency']):.3f}" if e["path_efficiency"] is not None else ""))
        found.setdefault(series_key(e, "compared_config"), []).append(
            Sample(float(e[column]), note, replays.get(e["experiment_id"])))
    return found


def distribution_charts(series: dict[tuple, Series], experiments: Sequence[dict], replays: dict[int, str]) -> str:
    efficiency = _samples(series, experiments, "path_efficiency", replays)
    actions = _samples(series, experiments, "actions", replays)
    values = [s.value for group in actions.values() for s in group]
    wide = bool(values) and max(values) / max(min(values), 1) >= 20
    return (_figure(charts.distribution(list(series.values()), efficiency, "Path efficiency of the successes",
                                        "path efficiency (shortest path / moves; 1.0 is optimal)", "efficiency"),
                    "Path efficiency of each success: dots are experiments, the box spans the middle half, the thick "
                    "line is the median.")
            + _figure(charts.distribution(list(series.values()), actions, "Actions to the goal of the successes",
                                          "actions to the goal", "actions", log_scale=wide),
                      "Actions each success took to reach the goal."))


def cost_charts(series: dict[tuple, Series], rows: Sequence[dict]) -> str:
    """Tokens and dollars per success for each group of the table."""
    families = len({r["maze"] or r["maze_family"] for r in rows}) > 1

    def label(r: dict) -> str:
        return series[series_key(r)].label + (f" · {r['maze'] or r['maze_family']}" if families else "")

    tokens = [Bar(series[series_key(r)], label(r), _float(r["tokens_per_success"]),
                  "no success" if r["tokens_per_success"] is None else f"{float(r['tokens_per_success']):,.0f}")
              for r in rows if r["runs"]]
    cost = [Bar(series[series_key(r)], label(r), _float(r["cost_per_success"]),
                "no success" if r["cost_per_success"] is None else f"${float(r['cost_per_success']):.4f}")
            for r in rows if r["runs"]]
    return ('<div class="pair">'
            + _figure(charts.bars(tokens, "Tokens per success", "input + output tokens per success", "tokens"),
                      "Tokens of every run divided by the successes.")
            + _figure(charts.bars(cost, "Cost per success", "USD per success", "cost"),
                      "Dollars of every run divided by the successes (0 without a price list).")
            + "</div>")


def _float(value) -> float | None:
    return None if value is None else float(value)


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def _cell(value: object) -> str:
    text = escape(str(value))
    numeric = isinstance(value, int | float) or text.lstrip("$").replace(".", "").replace(",", "").replace(
        "%", "").replace("-", "").isdigit()
    return f'<td class="number">{text}</td>' if numeric else f"<td>{text}</td>"


def table(headers: Sequence[str], rows: Sequence[tuple], table_id: str) -> str:
    head = "".join(f"<th scope=\"col\">{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f'<div class="wide"><table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def experiments_table(series: dict[tuple, Series], experiments: Sequence[dict], replays: dict[int, str]) -> str:
    """Every experiment the page counts, each linked to its replay when one was rendered."""
    headers = ("experiment", "agent", "maze", "ending", "status", "actions", "path efficiency", "tokens", "cost")
    rows = []
    for e in experiments:
        link = replays.get(e["experiment_id"])
        ident = (f'<a href="{escape(link)}">{e["experiment_id"]}</a>' if link else str(e["experiment_id"]))
        cells = [series[series_key(e, "compared_config")].label, e["maze"], e["ending"] or "running", e["status"],
                 e["actions"], "-" if e["path_efficiency"] is None else f"{float(e['path_efficiency']):.3f}",
                 e["input_tokens"] + e["output_tokens"], f"${float(e['cost_usd']):.4f}"]
        rows.append(f'<tr><td class="number">{ident}</td>' + "".join(_cell(c) for c in cells) + "</tr>")
    head = "".join(f"<th scope=\"col\">{escape(h)}</th>" for h in headers)
    return (f'<div class="wide"><table id="experiments-table"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _filters_text(filters: Filters, by: GroupBy) -> str:
    chosen = [f"{name} {value:%Y-%m-%d %H:%M}" if isinstance(value, datetime) else f"{name} {value}"
              for name, value in vars(filters).items() if value is not None]
    return (", ".join(chosen) or "every experiment") + f"; one row per {by.value}"


def render(results: Results, by: GroupBy, filters: Filters, replays: dict[int, str] | None = None) -> str:
    """The page over the experiments matching ``filters``, each linked to ``replays[experiment_id]`` when given."""
    return page(comparison_rows(results, by, filters), results.comparison(filters, by_maze=True),
                results.compared(filters), by, filters, replays or {})


def page(rows: list[dict], by_maze: list[dict], experiments: list[dict], by: GroupBy, filters: Filters,
         replays: dict[int, str], now: datetime | None = None) -> str:
    """The whole page. ``rows`` is the comparison as the table groups it, ``by_maze`` the same per maze (the
    ladder), ``experiments`` what they count (``Results.compared``), ``replays`` experiment id -> relative link."""
    now = now or datetime.now(UTC)
    meta = (f"{_filters_text(filters, by)} · {len(experiments)} experiments · generated "
            f"{now:%Y-%m-%d %H:%M} UTC")
    if not rows:
        body = "<p>No finished experiments match.</p>"
    else:
        series = series_of(rows)
        headers, cells = table_cells(rows, by)
        body = (f'<section id="comparison"><h2>Comparison</h2><p class="note">{escape(RUN_DEFINITION)}</p>'
                f'{table(headers, cells, "comparison-table")}<p class="note">{escape(running_note(rows))}</p></section>'
                f'<section id="success"><h2>Success rate across the mazes</h2>'
                f'{_figure(ladder_chart(series, by_maze, experiments), "Each point is the success rate of an agent on a maze; the whiskers are its 95% Wilson interval. Mazes run from the smallest to the largest.")}'  # noqa: E501
                f'</section><section id="distributions"><h2>Efficiency and effort of the successes</h2>'
                f"{distribution_charts(series, experiments, replays)}</section>"
                f'<section id="costs"><h2>Tokens and cost per success</h2>{cost_charts(series, rows)}</section>'
                f'<section id="experiments"><h2>Experiments</h2><p class="note">'
                f'{"Each id opens its replay." if replays else "Render replays with --with-replays to link them."}'
                f"</p>{experiments_table(series, experiments, replays)}</section>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Oriole report</title>'
            f"<style>{_CSS}</style></head><body><header><h1>Oriole report</h1>"
            f'<p class="meta">{escape(meta)}</p></header>{body}</body></html>\n')
