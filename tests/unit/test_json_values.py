"""``json_values.loads`` is ``json.loads``: the same value (the same types, every digit of a number) or the same
error, for whatever bytes a ``json`` or ``jsonb`` column could send and for any others."""

from __future__ import annotations

import codecs
import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from oriole.store.json_values import loads

# JSON values, numbers of every kind among them: integers beyond 64 bits, floats at their limits, -0.0
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**64 + 2)
    | st.integers(min_value=10**300, max_value=10**400)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# how a value's text may be written: as jsonb writes it, as a json column may keep it (spaces, new lines, escapes)
layouts = st.sampled_from(
    [
        {"ensure_ascii": False},
        {"ensure_ascii": True},
        {"ensure_ascii": False, "indent": 2},
        {"ensure_ascii": False, "separators": (",", ":")},
    ]
)
# what may surround it, or be done to its bytes
wrappings = st.sampled_from(
    [
        lambda b: b,
        lambda b: b" " + b,
        lambda b: b + b"\n",
        lambda b: codecs.BOM_UTF8 + b,
        lambda b: b.decode().encode("utf-16"),
        lambda b: b.decode().encode("utf-32-le"),
        lambda b: b + b"x",
        lambda b: b[:-1],
        lambda b: b + b"\xff",
    ]
)


def outcome(data: str | bytes, read) -> str:
    """What reading ``data`` gives, as text that tells every value and type apart (``repr``: 1, 1.0 and True differ,
    and -0.0 from 0.0), or the error's type and message."""
    try:
        return repr(read(data))
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        return f"{type(error).__name__}: {error}"


@given(values, layouts, wrappings)
def test_a_written_value_reads_as_json_loads_reads_it(value, layout, wrap):
    data = wrap(json.dumps(value, **layout).encode("utf-8", "surrogatepass"))
    assert outcome(data, loads) == outcome(data, json.loads)
    text = data.decode("utf-8", "replace")  # psycopg hands bytes; a str is read as json.loads reads one too
    assert outcome(text, loads) == outcome(text, json.loads)


@given(st.binary(max_size=40))
@example(b"")
@example(b"\x00")
@example(b"1\x00")
@example(b'"\x00"')
@example(b"1" * 5000)  # beyond the digits Python turns into an int: the same ValueError
@example(b"[" * 100_000)  # deeper than the interpreter's recursion: the same RecursionError
@example(b"NaN")
@example(b"-Infinity")
@example(b'"\xed\xa0\x80"')  # a lone surrogate encoded as UTF-8: json.loads decodes it with surrogatepass
def test_any_bytes_read_as_json_loads_reads_them(data):
    assert outcome(data, loads) == outcome(data, json.loads)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("1" + "0" * 400, 10**400),  # 1e400 as jsonb writes it
        ("1e400", float("inf")),  # as a json column may keep it
        ("-0.0", -0.0),
        ("0.1", 0.1),
    ],
)
def test_numbers_keep_every_digit_and_their_type(text, expected):
    value = loads(text.encode())
    assert type(value) is type(expected) and repr(value) == repr(expected)
