"""``oriole export``: the experiments a report selects, as files a notebook reads, with a data dictionary.

One file per table (experiments: the ``experiment_results`` view; turns; actions; model calls), read from one
consistent snapshot and streamed in batches, so a large export never sits in memory. Types are kept:
integers as integers, timestamps as UTC timestamps, numeric values as 64-bit floats, JSON as its text, text
arrays as lists. Parquet needs pyarrow (``pip install 'oriole[analysis]'``); JSON Lines and CSV need nothing.

Files are read by people too (``cat``, a spreadsheet): JSON Lines escape every character beyond ASCII (the
same data), and a CSV cell is written out as ``display.csv_safe`` shows it (no escape sequence, no formula).
"""

from __future__ import annotations

import csv
import functools
import json
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from oriole.errors import OrioleError
from oriole_workstation import files
from oriole_workstation.display import csv_safe
from oriole_workstation.results import EXPORT_TABLES, ExportCursor, Filters, Results

DICTIONARY = "DATA_DICTIONARY.md"
# PostgreSQL type -> (the exported type, as the data dictionary names it; its Arrow type)
TYPES = {
    "int2": ("integer (32-bit)", "int32"),
    "int4": ("integer (32-bit)", "int32"),
    "int8": ("integer (64-bit)", "int64"),
    "float4": ("float (64-bit)", "float64"),
    "float8": ("float (64-bit)", "float64"),
    "numeric": ("float (64-bit)", "float64"),
    "bool": ("boolean", "bool_"),
    "text": ("text", "string"),
    "json": ("JSON, as text", "string"),
    "jsonb": ("JSON, as text", "string"),
    "timestamptz": ("timestamp (UTC)", "timestamp"),
    "_text": ("list of text", "list_of_string"),
}
TABLES = {
    "experiments": "One row per experiment: the experiment_results view (outcome, effort, exploration, tokens, "
    "cost, latency, the varied configuration).",
    "turns": "One row per agent turn; the experiment's totals are the sums of its turns.",
    "actions": "One row per action, in step order: every move, wall hit, recall and invalid call.",
    "model_calls": "One row per model call, with what it added to the conversation and the answer.",
}


class Format(StrEnum):
    parquet = "parquet"
    jsonl = "jsonl"
    csv = "csv"
    inspect = "inspect"  # Inspect AI evaluation logs (inspect_logs), not tables


class MissingExtra(OrioleError):
    """An optional dependency is not installed."""


def export(results: Results, filters: Filters, output: Format, folder: Path) -> dict[str, int]:
    """Write one file per table and the data dictionary into ``folder``; rows written per table."""
    write = _writer(output)
    files.make_folder(folder, files.OutputRefused, "--output")
    counts, types = {}, {}
    with results.snapshot():
        for table in EXPORT_TABLES:
            with closing(results.exported(table, filters)) as cursor:
                types[table] = dict(zip(cursor.names, cursor.type_names(), strict=True))
                counts[table] = write(cursor, folder / f"{table}.{output.value}")
    descriptions = {table: results.descriptions(table) for table in EXPORT_TABLES}
    (folder / DICTIONARY).write_text(dictionary(output, filters, counts, types, descriptions), encoding="utf-8")
    return counts


def _writer(output: Format) -> Callable[[ExportCursor, Path], int]:
    if output is Format.parquet:
        try:
            import pyarrow  # noqa: F401 - checked before anything is written
        except ImportError:
            raise MissingExtra(
                "--format parquet needs pyarrow: pip install 'oriole[analysis]' (or export --format jsonl or csv)"
            ) from None
        return write_parquet
    return write_jsonl if output is Format.jsonl else write_csv


def _arrow_type(type_name: str):
    import pyarrow as pa

    kind = TYPES.get(type_name, ("text", "string"))[1]
    if kind == "timestamp":
        return pa.timestamp("us", tz="UTC")
    if kind == "list_of_string":
        return pa.list_(pa.string())
    return getattr(pa, kind)()


def write_parquet(cursor: ExportCursor, path: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, _arrow_type(t)) for name, t in zip(cursor.names, cursor.type_names(), strict=True)])
    rows = 0
    with pq.ParquetWriter(path, schema) as writer:
        for batch in cursor.batches():
            columns = list(zip(*batch, strict=True))
            writer.write_table(
                pa.Table.from_arrays(
                    [pa.array(column, type=field.type) for column, field in zip(columns, schema, strict=True)],
                    schema=schema,
                )
            )
            rows += len(batch)
    return rows


def _plain(value: object) -> object:
    return value.isoformat() if isinstance(value, datetime) else value


def write_jsonl(cursor: ExportCursor, path: Path) -> int:
    rows = 0
    with path.open("w", encoding="utf-8") as out:
        for batch in cursor.batches():
            for row in batch:
                out.write(json.dumps({n: _plain(v) for n, v in zip(cursor.names, row, strict=True)}) + "\n")
            rows += len(batch)
    return rows


def _csv_value(value: object, json_text: bool) -> object:
    if isinstance(value, list):
        return _safe_text(json.dumps(value, ensure_ascii=False), True)
    return csv_safe(_plain(value), json_text=json_text)


@functools.lru_cache(maxsize=4096)
def _safe_text(text: str, json_text: bool) -> object:
    """A text cell made safe once for the texts that repeat down a column (an action's type and tool, a status, a
    model's reasoning when it repeats itself), the memory bounded whatever the export's size."""
    return csv_safe(text, json_text=json_text)


# Columns whose values the CSV writer takes as they come (numbers, booleans, NULL): no text to make safe, so a
# large export (an actions file of millions of cells) skips the per-cell work for them.
_AS_THEY_COME = frozenset({"int2", "int4", "int8", "float4", "float8", "numeric", "bool", "oid"})


def write_csv(cursor: ExportCursor, path: Path) -> int:
    rows = 0
    kinds = cursor.type_names()
    made_safe = [n for n, kind in enumerate(kinds) if kind not in _AS_THEY_COME]
    json_columns = {n: kinds[n] in ("json", "jsonb") for n in made_safe}
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(cursor.names)
        for batch in cursor.batches():
            cells = [list(row) for row in batch]
            for row in cells:
                for n in made_safe:
                    value = row[n]
                    if isinstance(value, str):
                        row[n] = _safe_text(value, json_columns[n])
                    elif value is not None:
                        row[n] = _csv_value(value, json_columns[n])
            writer.writerows(cells)
            rows += len(batch)
    return rows


def dictionary(
    output: Format,
    filters: Filters,
    counts: dict[str, int],
    types: dict[str, dict[str, str]],
    descriptions: dict[str, dict[str, str | None]],
) -> str:
    """The data dictionary: each file, what a row is, and each column's type and meaning (from the database)."""
    chosen = filters.describe() if filters.chosen else "none"
    lines = [
        "# Data dictionary",
        "",
        f"Written by `oriole export --format {output.value}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"from one snapshot of the database. Filters: {chosen}.",
        "",
        "Timestamps are UTC; numeric values (costs, ratios) are 64-bit floats; JSON columns hold JSON text; "
        "lists are lists (JSON text in CSV); an empty cell or null is SQL NULL.",
        "",
    ]
    for table in EXPORT_TABLES:
        lines += [
            f"## {table}.{output.value} ({counts[table]:,} rows)",
            "",
            TABLES[table],
            "",
            "| column | type | description |",
            "| --- | --- | --- |",
        ]
        lines += [
            f"| `{name}` | {TYPES.get(t, ('text',))[0]} | "
            f"{(descriptions[table].get(name) or '').replace('|', chr(92) + '|')} |"
            for name, t in types[table].items()
        ]
        lines.append("")
    return "\n".join(lines)
