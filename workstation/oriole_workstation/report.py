"""``oriole report``: the comparison view as a terminal table, CSV or JSON.

The numbers all come from SQL (``compare_experiments`` in migrations/0003_analysis_views.sql); this module
only filters, formats and prints them, so the report and a researcher's own query always agree.
"""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from enum import StrEnum

from oriole_workstation.display import csv_safe, terminal_safe
from oriole_workstation.results import Results


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


class GroupBy(StrEnum):
    family = "family"
    maze = "maze"


def _plain(value: object) -> object:
    """A database value as JSON and CSV want it: numbers as numbers, JSON as JSON."""
    if isinstance(value, Decimal):
        return float(value)
    return value


def as_json(rows: list[dict]) -> str:
    return json.dumps([{k: _plain(v) for k, v in row.items()} for row in rows], indent=2) + "\n"


def as_csv(rows: list[dict]) -> str:
    """Every column of the comparison, one row per group; ``config`` as a JSON object; a text cell that a
    spreadsheet would read as a formula is neutralised (``csv_safe``)."""
    if not rows:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))  # RFC 4180 CRLF: a CR in a cell gets quoted
    writer.writeheader()
    for row in rows:
        writer.writerow({k: csv_safe(json.dumps(v, sort_keys=True) if isinstance(v, dict) else v)
                         for k, v in row.items()})
    return buffer.getvalue()


def columns(headers: tuple[str, ...], rows: list[tuple]) -> str:
    """Plain aligned columns, numbers right-aligned: never truncated, easy to paste and to grep; stored text is
    shown, never obeyed (``terminal_safe``)."""
    cells = [headers, *(tuple(terminal_safe(str(value)) for value in row) for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(_looks_numeric(row[i]) for row in cells[1:]) for i in range(len(headers))]
    lines = ["  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(row, widths, numeric, strict=True)).rstrip()
             for row in cells]
    return "\n".join(lines) + "\n"


def _looks_numeric(text: str) -> bool:
    return text == "-" or text.lstrip("$").replace(".", "", 1).replace(",", "").replace("%", "").isdigit()


def _config(config: dict) -> str:
    return " ".join(f"{k}={json.dumps(v)}" for k, v in sorted(config.items())) or "-"


def _percent(value: Decimal | None) -> str:
    return "-" if value is None else f"{float(value) * 100:.1f}%"


def _interval(low: Decimal | None, high: Decimal | None) -> str:
    return "-" if low is None else f"{_percent(low)}-{_percent(high)}"


def _number(value: Decimal | None, digits: int) -> str:
    return "-" if value is None else f"{float(value):,.{digits}f}"


def _dollars(value: Decimal | None) -> str:
    return "-" if value is None else f"${float(value):.4f}"


def as_table(rows: list[dict], by: GroupBy = GroupBy.family) -> str:
    """The comparison for a terminal: one line per model x prompt x maze family (or maze) x config.

    A prompt shows its hash as well when one version was stored with two texts.
    """
    if not rows:
        return "no finished experiments match\n"
    hashes: dict[str, set[str]] = {}
    for row in rows:
        hashes.setdefault(row["prompt_version"], set()).add(row["prompt_hash"])
    headers = ("agent", "prompt", "maze" if by is GroupBy.maze else "family", "config", "runs", "success",
               "95% CI", "median actions", "median efficiency", "tokens/run", "cost/run", "cost/success", "errors")
    lines = [(
        f"{r['llm_provider']}/{r['model_name']}",
        r["prompt_version"] + (f"@{r['prompt_hash'][:8]}" if len(hashes[r["prompt_version"]]) > 1 else ""),
        r["maze"] if by is GroupBy.maze else r["maze_family"],
        _config(r["config"]),
        r["runs"],
        _percent(r["success_rate"]),
        _interval(r["success_rate_low"], r["success_rate_high"]),
        _number(r["median_actions_to_goal"], 0),
        _number(r["median_path_efficiency"], 3),
        _number(r["tokens_per_run"], 0),
        _dollars(r["cost_per_run"]),
        _dollars(r["cost_per_success"]),
        r["errors"],
    ) for r in rows]
    text = columns(headers, lines)
    running = sum(r["running"] for r in rows)
    if running:
        text += f"({running} experiment(s) still running are not counted)\n"
    return text


def render_report(store: Results, output: Format = Format.table, by: GroupBy = GroupBy.family, **filters) -> str:
    """The comparison over the experiments matching ``filters`` (see ``Results.comparison``), formatted."""
    rows = store.comparison(by_maze=by is GroupBy.maze, **filters)
    if output is Format.csv:
        return as_csv(rows)
    if output is Format.json:
        return as_json(rows)
    return as_table(rows, by)
