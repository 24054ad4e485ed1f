"""JSON values read from the database as ``json.loads`` reads them, in less time.

psycopg decodes every ``json`` and ``jsonb`` value it receives with ``json.loads``, whose own work on each call (its
argument's type, the encoding of bytes guessed, the text decoded, whitespace matched before and after) costs more
than decoding a small value: ``experiment_results`` has two JSON columns, a snapshot and its varied settings
(``{}`` for most), 80,000 values at 40,000 experiments, about 4 us each whatever their size. ``loads`` hands the
text straight to the scanner ``json.loads`` ends in (``json.scanner.make_scanner`` of a default ``JSONDecoder``, the
C one where CPython has it, as ``json.loads``'s is): the same parse, so the same values (an integer of any size
stays that integer: ``jsonb`` writes ``1e400`` as its 401 digits), in 0.3-2 us. Whatever that scanner does not take
whole, as UTF-8 text with nothing around the value (bytes that are not UTF-8, a BOM, whitespace, which a ``json``
value may keep, an error), goes to ``json.loads`` itself, which answers or raises as it always did. A faster
library decoder (orjson) was not taken: it reads an integer beyond 64 bits as a float and refuses ``1e400``, both of
which ``jsonb`` stores, so it would change numbers.
"""

from __future__ import annotations

import json
import json.scanner
from typing import Any

from psycopg.abc import AdaptContext
from psycopg.types.json import set_json_loads

# what json.loads's default decoder scans with (typeshed types its argument as the C scanner, which only reads the
# decoder's settings from it)
_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def loads(data: str | bytes) -> Any:
    """``json.loads(data)``: the same value, or the same error."""
    try:
        text = data if isinstance(data, str) else str(data, "utf-8")
        value, end = _scan(text, 0)
        if end == len(text):
            return value
    except (StopIteration, ValueError):  # no value at the start, not UTF-8, not JSON: json.loads says which
        pass
    return json.loads(data)


def read_json_with_loads(context: AdaptContext) -> None:
    """Decode the ``json`` and ``jsonb`` values ``context`` (a connection, a cursor) receives with ``loads``."""
    set_json_loads(loads, context)
