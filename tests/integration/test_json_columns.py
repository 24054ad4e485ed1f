"""The project's connection (``db.connect``) reads JSON columns as psycopg reads them by default (``json.loads``):
every value the same, every number with its digits and type, as PostgreSQL sends them from ``json`` (the text as
given) and from ``jsonb`` (its own form: ``1e400`` as 401 digits, ``1.50`` as written)."""

from __future__ import annotations

import psycopg

from oriole.store import db

TEXTS = (
    "{}",
    '{"temperature": 0.2, "seed": 7, "goalCondition": "reach"}',
    "[1e400, -1e400, 1E-400, 123456789012345678901234567890123, 18446744073709551617, -9223372036854775809]",
    "[1.50, 0.1, -0.0, 2.5e-3, 1e308, 4.9e-324, 0, -0, 1.0]",
    '{"a": {"b": [true, false, null, "\\u00e9\\ud83d\\ude00", "tab\\there"]}, "a ": 1}',
    '  {"spaced" : [ 1 , 2 ] }  ',
    '"just text"',
    "12",
)


def test_json_and_jsonb_values_read_as_json_loads_reads_them(database_url):
    statement = "SELECT t::json, t::jsonb FROM unnest(%s::text[]) t"
    with psycopg.connect(database_url) as plain, db.connect(database_url) as project:
        expected = plain.execute(statement, (list(TEXTS),)).fetchall()
        got = project.cursor(row_factory=psycopg.rows.tuple_row).execute(statement, (list(TEXTS),)).fetchall()
    assert len(got) == len(TEXTS)
    assert repr(got) == repr(expected)  # repr tells 1 from 1.0 and True, and -0.0 from 0.0
    assert got[2][1][0] == 10**400 and got[2][0][0] == float("inf")  # jsonb's 401 digits; json's text, as given
