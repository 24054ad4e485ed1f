"""Labels a reader can tell apart: an agent's label and a model name (what the leaderboard's rows are called).

Two labels that differ as strings but read the same would be two rows of a table that look like one: ``café``
written composed and decomposed, ``gpt-4.1-mini`` with a Cyrillic i (U+0456), ``gpt`` in fullwidth letters. So a
label is refused when Unicode's compatibility normalisation (NFKC) would change it (decomposed letters,
fullwidth, mathematical or other styled forms), or when it mixes scripts with a letter that looks like a letter
of another script it holds (``label_problem``); and two labels of one sweep are refused when they read the same
(``look_alike``): character by character each the same or confusable with the other (Unicode's confusables, from
``confusable_homoglyphs``). A new experiment's or sweep's name is also held against the names already stored
(``check_against_stored``), so a leaderboard never shows two rows that read the same.

A label in ASCII is never checked further: the data is loaded only when a label holds another character.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable, Iterable
from itertools import groupby
from typing import Any

from oriole.errors import InvalidExecutionInput

NEUTRAL_SCRIPTS = frozenset({"COMMON", "INHERITED"})  # digits, punctuation, combining marks: in every script


@functools.cache
def _data() -> tuple[Any, Any]:
    """The confusables and the scripts (loaded once, when a label first needs them)."""
    from confusable_homoglyphs import categories, confusables

    return confusables, categories


def label_problem(text: str) -> str | None:
    """Why ``text`` cannot name an agent in a table a person reads, or None when it can.

    A word (a run of letters between digits, spaces and punctuation) whose letters come from two scripts, one of
    them looking like a letter of the other (``mini`` with a Cyrillic i, U+0456, among Latin letters), or a word of one
    script that could be read, letter for letter, as another script the label also holds, is refused; words of
    different scripts side by side (``qwen 中文``) are not."""
    if text.isascii():
        return None
    if not unicodedata.is_normalized("NFKC", text):
        plain = unicodedata.normalize("NFKC", text)
        return (
            "holds characters that Unicode reads as others (a letter and a combining mark for one letter, a "
            f"fullwidth, styled or compatibility form): it would read the same as {plain!r}; write it so"
        )
    _, categories = _data()
    scripts = [categories.alias(char) for char in text]
    present = set(scripts) - NEUTRAL_SCRIPTS
    runs = groupby(zip(text, scripts, strict=True), lambda pair: pair[1] in NEUTRAL_SCRIPTS)
    for word in (list(run) for neutral, run in runs if not neutral):
        found = _lookalike_letter(word, present)
        if found is not None:
            char, glyph = found
            return (
                f"mixes scripts: {char!r} ({unicodedata.name(char, 'a character').lower()}) at position "
                f"{text.index(char) + 1} looks like {glyph!r}, a letter of another script it holds; write each "
                "word in one script"
            )
    return None


def _lookalike_letter(word: list[tuple[str, str]], present: set[str]) -> tuple[str, str] | None:
    """A letter of ``word`` ((character, script) pairs) that passes for a letter of another script, and that
    letter: the word mixes scripts and a letter of its rarest one looks like one of the other, or the
    whole word reads, letter for letter, as plain Latin beside Latin words (``llama coppa`` in Cyrillic letters)."""
    own = {script for _, script in word}
    if len(own) > 1:
        rarest = min(sorted(own), key=lambda script: sum(s == script for _, s in word))
        return next(((c, g) for c, s in word if s == rarest and (g := _looks_like(c, own - {s}))), None)
    if "LATIN" not in present - own:
        return None
    plain = [(c, g) for c, _ in word if (g := _looks_like(c, {"LATIN"})) and g.isascii()]
    return plain[0] if len(plain) == len(word) else None


def _looks_like(char: str, scripts: set[str]) -> str | None:
    """A character of one of ``scripts`` that ``char`` is confusable with, or None."""
    confusables, categories = _data()
    for glyph in confusables.confusables_data.get(char, ()):
        if len(glyph["c"]) == 1 and categories.alias(glyph["c"]) in scripts:
            found: str = glyph["c"]
            return found
    return None


def look_alike(first: str, second: str) -> bool:
    """Whether two different labels read the same: equal after NFKC normalisation, or character by character
    each the same or confusable with the other."""
    if first == second or (first.isascii() and second.isascii()):
        return False
    a, b = unicodedata.normalize("NFKC", first), unicodedata.normalize("NFKC", second)
    return len(a) == len(b) and all(x == y or _confusable(x, y) for x, y in zip(a, b, strict=True))


def check_against_stored(names: Iterable[str], stored: Callable[[bool], list[str]]) -> None:
    """Refuse a name that reads like one stored experiments' rows are shown under but is written differently
    (``gpt-4.1-mini`` with a Cyrillic i beside a stored ``gpt-4.1-mini``; ``café`` decomposed beside it composed):
    both would be leaderboard rows that read the same. ``stored(ascii_too)`` gives the stored names
    (``Store.agent_names``); an ASCII name is held only against the stored ones beyond ASCII."""
    names = sorted(set(names))
    if not names:
        return
    known = stored(not all(name.isascii() for name in names))
    for name in names:
        twin = next((other for other in known if look_alike(name, other)), None)
        if twin is not None:
            raise InvalidExecutionInput(
                f"agent {spelled(name)} reads the same as {spelled(twin)}, the name of experiments already stored, "
                "but differs in its characters: their rows could not be told apart; write it as the stored one "
                "is written, or choose another label"
            )


def spelled(text: str) -> str:
    """``text`` quoted with every character beyond ASCII as its code point (``'m\\u0456ni'``): how a refusal
    shows two spellings that read the same."""
    return ascii(text)


def _confusable(x: str, y: str) -> bool:
    confusables, _ = _data()
    return any(
        glyph["c"] == other for char, other in ((x, y), (y, x)) for glyph in confusables.confusables_data.get(char, ())
    )
