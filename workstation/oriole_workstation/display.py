"""Text written by others (model names, failure reasons, provider errors, prompts) shown, never obeyed.

A terminal obeys control characters: an escape sequence in a provider's error can clear the screen or
retitle the window, a bidirectional override can hide text. A spreadsheet evaluates a cell that starts with
``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return before one) as a formula. Every place the CLI prints
stored or provider text goes through ``terminal_safe``; ``oriole report --format csv`` writes its text cells
through ``csv_safe``. (Rich markup is a third way to be obeyed: the CLI prints such text with markup off.)
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, bidirectional marks and overrides, and lone surrogates (unprintable anyway)
_UNSAFE_IN_A_CELL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, *, lines: bool = False) -> str:
    """``text`` with every control character written out (``\\x1b``, ``\\u202e``); with ``lines``, newlines and
    tabs are kept (a prompt shown whole), otherwise they are written out too (a table cell, one line)."""
    return (_UNSAFE_IN_LINES if lines else _UNSAFE_IN_A_CELL).sub(_visible, text)


def csv_safe(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a string that would start a formula gets a leading ``'``."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value
