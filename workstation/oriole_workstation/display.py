"""Text written by others (model names, failure reasons, provider errors, prompts, model text) shown, never obeyed.

A terminal obeys control characters: an escape sequence in a provider's error can clear the screen, retitle
the window or plant a link (OSC 8). A bidirectional override or isolate reorders what a reader sees, in a
terminal and in a browser alike; a zero-width or format character hides text. A spreadsheet evaluates a cell
that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return before one) as a formula. So every
place that shows stored or provider text writes such characters out (``\\x1b``, ``\\u202e``):

- the terminal (tables, ``ls``/``watch``, status lines, errors): ``terminal_safe``; ``--json`` output escapes
  every character beyond ASCII (lossless, as JSON allows);
- CSV (``report --format csv``, ``export --format csv``): ``csv_safe``, which also prefixes a formula with ``'``;
  JSON text in a cell keeps JSON's own escapes (``json_safe``);
- HTML and SVG (the report page, its charts, the replay): ``terminal_safe``, then escaped (never markup).

(Rich markup is one more way to be obeyed: the CLI prints such text with markup off.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

# What is obeyed or hidden rather than shown: the Unicode categories Cc (C0, DEL, C1), Cf (format characters:
# bidirectional marks, embeddings, overrides and isolates, zero-width characters, the byte-order mark, tags),
# Zl and Zp (line and paragraph separators) and Cs (lone surrogates). Listed, not looked up per character, so a
# long text is checked at regex speed; tests/unit/test_hostile_input.py checks the list against unicodedata.
OBEYED = (
    "\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_UNSAFE_IN_A_CELL = re.compile(f"[{OBEYED}]")
_UNSAFE_IN_LINES = re.compile(f"(?![\t\n])[{OBEYED}]")  # a text shown whole keeps its tabs and line breaks
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_safe(text: str, *, lines: bool = False) -> str:
    """``text`` with every character that would be obeyed written out (``\\x1b``, ``\\u202e``); with ``lines``,
    line breaks and tabs are kept (a prompt shown whole), otherwise they are written out too (a cell, one line)."""
    return (_UNSAFE_IN_LINES if lines else _UNSAFE_IN_A_CELL).sub(_visible, text)


def wrote(path: object, more: str = "") -> str:
    """``wrote PATH`` (and ``more``) as a command prints it: the path was typed by someone, so it is shown like
    stored text, never obeyed (an escape or a bidirectional character in a file name is written out)."""
    return terminal_safe(f"wrote {path}{more}")


def json_safe(text: str) -> str:
    """JSON text with every such character as JSON's own escape (``\\u202e``): the same JSON, nothing obeyed."""
    return _UNSAFE_IN_LINES.sub(lambda match: json.dumps(match.group())[1:-1], text)


def csv_safe(value: object, *, json_text: bool = False) -> object:
    """A CSV cell a spreadsheet shows as text: such characters written out (line breaks kept: the cell is
    quoted), and a string that would start a formula (after any spaces) prefixed with ``'``. ``json_text``: the
    cell holds JSON, whose own escapes keep it the same JSON. Anything but a string is left as it is."""
    if not isinstance(value, str):
        return value
    value = json_safe(value) if json_text else terminal_safe(value, lines=True)
    return "'" + value if value.lstrip(" ").startswith(_FORMULA_STARTS) else value


TERMINAL_COLUMNS = 100  # what `oriole report --figures`' captions and a terminal of unknown width are fitted to
SHORT_SEED = 4  # digits of a seed a table keeps
Cells = tuple[str, ...]


def short_maze(name: str) -> str:
    """A maze name for a table: a seeded name keeps its family-size and the seed's first digits
    (``perfect-11@1234567890`` -> ``perfect-11@1234…``); every other name as it is."""
    family_size, at, seed = name.partition("@")
    return name if not at or len(seed) <= SHORT_SEED + 1 else f"{family_size}@{seed[:SHORT_SEED]}…"


def shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, an ellipsis marking what was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


UNPRICED = "unpriced"  # a cost no price is known for: unknown, never $0 (a free model's cost)


def dollars(value: float | Decimal | None, digits: int = 4) -> str:
    """``$0.0123``; ``unpriced`` for a cost without a price."""
    return UNPRICED if value is None else f"${float(value):,.{digits}f}"


def total_dollars(costs: Sequence[float | Decimal | None], digits: int = 4) -> str:
    """What runs cost together: ``$0.0123``; ``at least $0.0123, 2 runs unpriced`` where some have no price (their
    cost is unknown, so the sum is a lower bound); ``unpriced`` where none has one."""
    known = [float(c) for c in costs if c is not None]
    return priced_total(sum(known) if known else None, len(costs) - len(known), digits)


def priced_total(priced: float | Decimal | None, unpriced: int, digits: int = 4) -> str:
    """A total of ``priced`` dollars (None: no run has a price) over runs of which ``unpriced`` have no price."""
    if priced is None:
        return UNPRICED
    if not unpriced:
        return dollars(priced, digits)
    return f"at least {dollars(priced, digits)}, {unpriced} run{'s' if unpriced != 1 else ''} unpriced"


def shorten_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, its start (a third) and its end kept around an ellipsis:
    ``baseline/explorer`` in 12 is ``base…xplorer``."""
    if len(text) <= width:
        return text
    head = max((width - 1) // 3, 0)
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :] if width > 1 else "…"


def columns(headers: Cells, rows: Sequence[Sequence[object]]) -> str:
    """Plain aligned columns, two spaces apart, numbers right-aligned, no space at the end of a line: easy to
    paste and to grep; stored text is shown, never obeyed (``terminal_safe``)."""
    cells = [headers, *(tuple(terminal_safe(str(value)) for value in row) for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(_looks_numeric(row[i]) for row in cells[1:]) for i in range(len(headers))]
    lines = [
        "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(row, widths, numeric, strict=True)).rstrip()
        for row in cells
    ]
    return "\n".join(lines) + "\n"


def _looks_numeric(text: str) -> bool:
    """A number, a price, a percentage or a count of a budget (``52/10,000``): right-aligned."""
    return (
        text == "-" or text.lstrip("$").replace(".", "", 1).replace(",", "").replace("%", "").replace("/", "").isdigit()
    )


def table_width(headers: Cells, rows: Sequence[Cells]) -> int:
    """How wide ``columns`` prints these cells."""
    return sum(max(len(row[j]) for row in (headers, *rows)) for j in range(len(headers))) + 2 * (len(headers) - 1)


@dataclass(frozen=True)
class Shorten:
    """A step of a table's fitting rule: shorten this text column, to ``narrowest`` characters at the least; its
    end cut, or with ``middle`` its middle (a name that tells itself apart at its end: ``provider/model``)."""

    column: str
    narrowest: int
    middle: bool = False


@dataclass(frozen=True)
class Drop:
    """A step of a table's fitting rule: leave this column out."""

    column: str


def fit_columns(
    headers: Cells, rows: Sequence[Cells], width: int | None, rule: Sequence[Shorten | Drop]
) -> tuple[Cells, list[Cells]]:
    """The table at most ``width`` wide (None: as it is), by its rule: each step in turn, until the table fits, shortens
    a text column (an ellipsis marks the cut) or leaves a column out. An id or a count is in no rule: it is never cut
    or dropped."""
    rows = [tuple(row) for row in rows]
    if width is None:
        return headers, rows
    for step in rule:
        over = table_width(headers, rows) - width
        if over <= 0 or step.column not in headers:
            continue
        j = headers.index(step.column)
        if isinstance(step, Drop):
            kept = [i for i in range(len(headers)) if i != j]
            headers, rows = tuple(headers[i] for i in kept), [tuple(row[i] for i in kept) for row in rows]
        else:
            keep = max(max(len(row[j]) for row in (headers, *rows)) - over, step.narrowest)
            cut = shorten_middle if step.middle else shorten
            rows = [(*row[:j], cut(row[j], keep), *row[j + 1 :]) for row in rows]
    return headers, rows
