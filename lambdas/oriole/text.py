"""Text at the boundaries: what PostgreSQL cannot store, and how long a message may grow.

PostgreSQL refuses two kinds of character anywhere in ``text`` and ``jsonb``: NUL (U+0000) and a lone UTF-16
surrogate (U+D800-U+DFFF, which has no UTF-8 form). A model may send either; a researcher's input may hold
either. Inputs are refused (``unstorable`` names the problem); model text is data, so it is kept and made
storable instead: ``escaped`` rewrites a whole row reversibly (``unescape`` gives the original back), and
``replaced`` puts U+FFFD where such a character was, for copies whose exact form lives elsewhere. ``jsonb``
also refuses the numbers JSON has no name for (NaN, infinities, which Python's JSON parser accepts): both
store them as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``.

``bounded`` cuts a message to a length every consumer can carry: an error message becomes a Lambda error
payload, a Step Functions state (at most 256 KB in all) and a ``failure_reason``.

JSON from outside (a model's answer, a file) is read by ``load_json``: an integer of more digits than
``MAX_INT_DIGITS`` becomes a ``LongInteger`` (a float that a message shows by its length, never as ``inf``:
Python refuses to read one of more than 4,300 digits, with a ValueError no caller expects; a float of any length
is read, as infinity at worst), and every value is held to one fixed depth, whatever the stack: JSON nested
deeper than the caller's limit is ``NestedTooDeeply``, whether the parser ran out of stack on it (which depends
on how deep the caller already was) or read it whole. ``nesting_depth`` measures a value without recursion, so a
deep value can be refused before any recursive code (escaping, storing, a schema) meets it.

A secret a server may echo (an API key) is taken out of everything it sends back by a ``Scrubber``: raw bytes,
parsed strings, JSON escapes of any mix, before anything is cut to an excerpt or a bounded message.

A number written as text (a flag, a Parameter Store value, a header) is read by ``ascii_int`` and
``ascii_float``: ASCII digits only, as JSON writes numbers. Python's ``int()`` and ``float()`` also take
Arabic-Indic or fullwidth digits, ``1_000`` and surrounding spaces, none of which a researcher means as a
number in a file or a setting.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, overload

JsonObject = dict[str, Any]  # a JSON object as Python holds it: a task's event, a jsonb value, a snapshot

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
MAX_MESSAGE_CHARS = 2000  # an error message or a failure reason: a few KB, far under the 256 KB state limit
REPLACEMENT = "\ufffd"
_ESCAPED = re.compile(r"\\(\\|u([0-9a-f]{4}))")
MAX_INT_DIGITS = 100  # far beyond any count; a JSON integer longer than this is read as a float
MAX_JSON_DEPTH = 64  # files and answers nest a few levels; deeper is refused before it meets recursive code
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:nan|inf|infinity)", re.IGNORECASE
)


def unstorable(text: str) -> str | None:
    """Why PostgreSQL cannot store ``text`` (its first NUL or lone surrogate), or None when it can."""
    found = UNSTORABLE.search(text)
    if found is None:
        return None
    kind = "a NUL character" if found.group() == "\x00" else "an unpaired surrogate character"
    return f"contains {kind} (U+{ord(found.group()):04X}) at position {found.start()}, which cannot be stored"


def _walk(value: object, change: Callable[[str], str]) -> object:
    """``value`` (JSON-like: dicts, lists, strings, scalars) with ``change`` applied to every string and key,
    and every non-finite number named."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {change(k) if isinstance(k, str) else k: _walk(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(v, change) for v in value]
    return value


def storable_json(value: object) -> str | None:
    """``value``'s JSON text when PostgreSQL can store all of it as it is; None when it may not. One pass of the C
    JSON encoder: its text holds a NUL as ``\\u0000`` and a lone surrogate as itself, and it refuses a non-finite
    number or a value JSON cannot hold. None is not the last word (a backslash can make a text look so): the exact
    answer is ``_has_unstorable``'s. The turn's commit sends this text, so that its rows are encoded once."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    if "\\u0000" in text or (not text.isascii() and UNSTORABLE.search(text) is not None):  # a surrogate is not ASCII
        return None
    return text


def _has_unstorable(value: object) -> bool:
    """Whether anything in ``value`` cannot be stored. Every turn asks this of each row it writes, so the common
    answer (nothing) comes from ``storable_json``; only a row that may hold such a value is walked value by value
    for the exact answer."""
    if isinstance(value, str):
        return UNSTORABLE.search(value) is not None
    return storable_json(value) is None and _has_unstorable_walk(value)


def _has_unstorable_walk(value: object) -> bool:
    if isinstance(value, str):
        return UNSTORABLE.search(value) is not None
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_unstorable_walk(k) or _has_unstorable_walk(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(map(_has_unstorable_walk, value))
    return False


def _escape(text: str) -> str:
    return UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text.replace("\\", "\\\\"))


def unescape(text: str) -> str:
    """The original of a string of an ``escaped`` row."""
    return _ESCAPED.sub(lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(2), 16)), text)


def escaped(value: JsonObject) -> tuple[JsonObject, bool]:
    """``value`` (a row) made storable, and whether it had to change.

    When anything in ``value`` cannot be stored, every string in it is escaped (``\\`` doubled, each NUL or
    lone surrogate written ``\\uXXXX``), so that ``unescape`` restores each string of the row exactly;
    otherwise ``value`` is returned as it is.
    """
    if not _has_unstorable(value):
        return value, False
    row = _walk(value, _escape)
    assert isinstance(row, dict), "the walk keeps an object an object"
    return row, True


@overload
def replaced(value: str) -> str: ...
@overload
def replaced(value: JsonObject) -> JsonObject: ...
@overload
def replaced(value: list[Any] | tuple[Any, ...]) -> list[Any]: ...
@overload
def replaced(value: object) -> object: ...
def replaced(value: object) -> object:
    """``value`` with each NUL or lone surrogate replaced by U+FFFD (a readable copy; the exact text is kept
    elsewhere, escaped)."""
    return _walk(value, lambda s: UNSTORABLE.sub(REPLACEMENT, s)) if _has_unstorable(value) else value


def stored_message(text: str) -> str:
    """A message as a ``failure_reason`` stores it: bounded, and storable whatever a provider put in it."""
    return replaced(bounded(text))


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text``, cut to at most ``limit`` characters with a note of how much was left out."""
    if len(text) <= limit:
        return text
    kept = max(limit - 40, 0)  # the note takes fewer than 40 characters
    return f"{text[:kept]}... ({len(text) - kept} more characters)"


class LongInteger(float):
    """A JSON integer of more than ``MAX_INT_DIGITS`` digits, read as a float (infinity past about 308 digits) and
    shown by its length: a message says ``an integer of 5,000 digits``, not ``inf``."""

    digits: int

    def __new__(cls, text: str) -> LongInteger:
        value = super().__new__(cls, text)
        value.digits = len(text.lstrip("+-"))
        return value

    def __repr__(self) -> str:
        return f"an integer of {self.digits:,} digits"

    __str__ = __repr__


class NestedTooDeeply(ValueError):
    """JSON nested deeper than the reader's limit."""


def bounded_int(digits: str) -> int | float:
    """A JSON integer as Python reads it (``parse_int``): an int, or a ``LongInteger`` past ``MAX_INT_DIGITS``
    digits."""
    return int(digits) if len(digits) <= MAX_INT_DIGITS else LongInteger(digits)


def nesting_depth(value: object, limit: int) -> int:
    """How deeply ``value`` nests lists and dicts (a scalar is 0), counted without recursion and no further than
    ``limit + 1``."""
    deepest, level = 0, [(value, 1)]
    while level:
        item, depth = level.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list | tuple) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        level.extend((child, depth + 1) for child in children)
    return deepest


def _refused_int(digits: str) -> int:
    if len(digits) > MAX_INT_DIGITS:
        raise ValueError(f"a number of {len(digits):,} digits (at most {MAX_INT_DIGITS})")
    return int(digits)


def load_json(raw: str | bytes, max_depth: int = MAX_JSON_DEPTH, *, long_integers: bool = True) -> object:
    """``raw`` as JSON; ValueError naming the problem when it is not JSON, or ``NestedTooDeeply`` past
    ``max_depth``. An integer past ``MAX_INT_DIGITS`` digits is read as a ``LongInteger``, or with
    ``long_integers=False`` (a file a person wrote) refused.

    The depth is the same wherever the caller stands: the parser recurses once a level, so how deep it can go
    depends on the stack it starts from; JSON it cannot finish for lack of stack and JSON it reads whole but
    deeper than ``max_depth`` are refused alike (``max_depth`` stays far below what any caller's stack leaves)."""
    try:
        value = json.loads(raw, parse_int=bounded_int if long_integers else _refused_int)
    except RecursionError:
        raise NestedTooDeeply(f"nested deeper than {max_depth} levels") from None
    if nesting_depth(value, max_depth) > max_depth:
        raise NestedTooDeeply(f"nested deeper than {max_depth} levels")
    return value


def ascii_int(text: str, max_digits: int = MAX_INT_DIGITS, *, signed: bool = True) -> int | None:
    """``text`` as a whole number written in ASCII digits (a sign if ``signed``, at most ``max_digits`` digits),
    or None for anything else: ``3.0``, ``true``, ``1_000``, Arabic-Indic or fullwidth digits, spaces."""
    if not _INT_TEXT.fullmatch(text) or len(text.lstrip("+-")) > max_digits or (not signed and text[0] in "+-"):
        return None
    return int(text)


def ascii_float(text: str) -> float | None:
    """``text`` as a number written in ASCII (an integer, a decimal, an exponent; ``nan`` and ``inf`` are read,
    for the caller to refuse by name), or None for anything else."""
    if len(text) > 2 * MAX_INT_DIGITS or not _FLOAT_TEXT.fullmatch(text):
        return None
    return float(text)


_JSON_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_ESCAPED_AS = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
MAX_UNESCAPES = 3  # JSON text in JSON text in an answer: a call's arguments as a string, a tool call in the text


def _unescaped(match: re.Match[str]) -> str:
    return chr(int(match[1], 16)) if match[1] else _ESCAPED_AS[match[2]]


class Scrubber:
    """One secret (an API key) taken out of whatever a server sends back, however it is written: as sent, or as
    JSON writes it (``\\"`` and ``\\\\`` escaped, characters beyond ASCII as they are or as ``\\u`` escapes) in
    the raw bytes; and in every string of a JSON answer once parsed, where escapes of any mix (``\\u0073k-...``)
    spell it, also inside JSON text a string carries (a call's arguments, a tool call written in the text).

    Whatever is cut afterwards (an excerpt, a bounded message) is cut from text without the secret, so no part of
    it survives the cut."""

    def __init__(self, secret: str | None, shown_as: str):
        self.shown_as = shown_as
        forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]} if secret else set()
        self._forms = sorted(forms, key=len, reverse=True)
        encoded = {form.encode(codec) for form in forms for codec in ("latin-1", "utf-8")}
        self._raw = sorted(encoded, key=len, reverse=True)

    def text(self, text: str) -> str:
        """``text`` without the secret, written as it is or spelt with JSON escapes (read up to
        ``MAX_UNESCAPES`` times over)."""
        if not self._forms:
            return text
        text = self._replaced(text)
        unescaped = text
        for _ in range(MAX_UNESCAPES):
            if "\\" not in unescaped:
                break
            unescaped = _JSON_ESCAPE.sub(_unescaped, unescaped)
            if any(form in unescaped for form in self._forms):
                return self._replaced(unescaped)
        return text

    def body(self, raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> bytes:
        """A body without the secret: its bytes, and, when the secret is spelt with escapes, the body written again
        with its strings scrubbed (a JSON body, its parsed strings; any other body, its text)."""
        for form in self._raw:
            raw = raw.replace(form, self.shown_as.encode())
        if not self._forms:
            return raw
        try:
            value = load_json(raw, max_depth)
        except ValueError:  # not JSON, or too deep: its text, as an excerpt of it would show it
            text = raw.decode("utf-8", errors="replace")
            clean = self.text(text)
            return raw if clean == text else clean.encode()
        found: list[bool] = []
        clean_value = _strings(value, self._text_noting(found))
        return json.dumps(clean_value).encode() if found else raw

    def _text_noting(self, found: list[bool]) -> Callable[[str], str]:
        def change(text: str) -> str:
            clean = self.text(text)
            if clean != text:
                found.append(True)
            return clean

        return change

    def _replaced(self, text: str) -> str:
        for form in self._forms:
            text = text.replace(form, self.shown_as)
        return text


def _strings(value: object, change: Callable[[str], str]) -> object:
    """``value`` (parsed JSON) with ``change`` applied to every string and key; nothing else is touched."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(k) if isinstance(k, str) else k: _strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, change) for v in value]
    return value
