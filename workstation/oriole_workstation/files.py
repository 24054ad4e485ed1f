"""Files a researcher names: read with a bound before anything parses them (sweep files, prompt files, maze
files, the prices file), and written with a refusal that names them (reports).

A path can name something that is not a file: ``/dev/zero`` never ends, a FIFO blocks its reader until someone
writes, a folder cannot be read. The file is opened without blocking and looked at through its descriptor (so
what is checked is what is read), refused unless it is a regular file, and read no further than the limit;
its text must be UTF-8, and a refusal says which byte is not.

A TOML file is also measured before it is parsed: Python's TOML parser spends time quadratic in the parts of a
dotted key (``a.a.a...= 1``: 100 KB of it took a minute, 1 MB over an hour), so ``toml_key_parts`` counts the
longest key (and table header) in one linear pass that reads strings and comments as the parser does, and a key
of more parts than the file may nest is refused before the parser sees it.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from pathlib import Path

from oriole.errors import OrioleError
from oriole.text import NestedTooDeeply, nesting_depth


def read_text(path: Path, limit: int, error: type[OrioleError], advice: str = "") -> str:
    """The UTF-8 text of the regular file at ``path``, at most ``limit`` bytes; anything else is ``error``, one
    line naming the file and what is wrong (``advice`` is added to a refusal for size)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        raise error(f"cannot read {path}: {err.strerror}") from None
    try:
        kind = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(kind):
            what = "a folder" if stat.S_ISDIR(kind) else "a pipe" if stat.S_ISFIFO(kind) else "a device or socket"
            raise error(f"{path} is {what}, not a regular file: nothing was read")
        raw = os.read(descriptor, limit + 1)
    except OSError as err:
        raise error(f"cannot read {path}: {err.strerror}") from None
    finally:
        os.close(descriptor)
    if len(raw) > limit:
        raise error(f"{path} is larger than {limit:,} bytes" + (f"; {advice}" if advice else ""))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(
            f"{path} is not UTF-8 text (byte 0x{raw[err.start]:02x} at offset {err.start}); save it as UTF-8"
        ) from None


class OutputRefused(OrioleError):
    """A file or folder a command was asked to write cannot be written there."""


def make_folder(path: Path, error: type[OrioleError], option: str) -> Path:
    """The folder ``path`` (an ``option`` that names a folder for several files), made when missing; a path that is
    a file, or one the system refuses, is ``error`` in one line that says so."""
    if path.exists() and not path.is_dir():
        raise error(f"{path} ({option}) is a file, not a folder: name the folder the files are written into")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # a file on the way to it, no permission, a read-only or full disk
        raise error(f"cannot make the folder {path} ({option}): {err.strerror}") from None
    return path


def write_text(path: Path, text: str, error: type[OrioleError]) -> None:
    """Write ``text`` (UTF-8) to ``path``; a path the system refuses (a folder, a missing folder, no permission, a
    full disk, a device) is ``error``, one line naming the path."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise error(f"cannot write {path}: {err.strerror}") from None


_TOML_QUOTE_OR_COMMENT = re.compile("[\"'#]")
# what a quote or a hash opens, as tomllib reads it: a triple-quoted string (its closing quotes may follow two of
# its own), a one-line string (a backslash escapes in basic strings only), a comment
_TOML_OPENED = {
    '"""': re.compile(r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""(?:""?)?'),
    "'''": re.compile(r"'''[\s\S]*?'''(?:''?)?"),
    '"': re.compile(r'"(?:[^"\\\n]|\\.)*"'),
    "'": re.compile(r"'[^'\n]*'"),
    "#": re.compile(r"#[^\n]*"),
}
# a dotted key in a text whose strings are written "": bare or quoted parts, dots with spaces or tabs around them
_TOML_DOTTED = re.compile(r'(?:[A-Za-z0-9_-]+|"")(?:[ \t]*\.[ \t]*(?:[A-Za-z0-9_-]+|""))*')


def toml_key_parts(text: str) -> int:
    """The most parts of any dotted key or table header in TOML ``text`` (a dotted number such as ``1.5`` counts
    as two: more than enough for a bound), in one pass; a string that never ends stops the count where the
    parser would stop."""
    return max((found.group().count(".") + 1 for found in _TOML_DOTTED.finditer(_toml_skeleton(text))), default=0)


def load_toml(text: str, max_depth: int) -> dict:
    """``text`` as TOML (ValueError when it is not), refused before it is parsed when a dotted key has more than
    ``max_depth`` parts (it would nest deeper than that) and after it when a value nests deeper."""
    parts = toml_key_parts(text)
    if parts > max_depth:
        raise NestedTooDeeply(f"nested deeper than {max_depth} levels (a dotted key of {parts:,} parts)")
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise NestedTooDeeply(f"nested deeper than {max_depth} levels") from None
    if nesting_depth(data, max_depth) > max_depth:
        raise NestedTooDeeply(f"nested deeper than {max_depth} levels")
    return data


def _toml_skeleton(text: str) -> str:
    """``text`` with each string written ``""`` and each comment left out, read as tomllib reads them; it stops at
    a string that never ends, where the parser stops too."""
    kept, position = [], 0
    while (found := _TOML_QUOTE_OR_COMMENT.search(text, position)) is not None:
        start = found.start()
        kept.append(text[position:start])
        opener = text[start : start + 3] if text.startswith(found.group() * 3, start) else found.group()
        closed = _TOML_OPENED[opener].match(text, start)
        if closed is None:
            return "".join(kept)
        kept.append("" if opener == "#" else '""')
        position = closed.end()
    kept.append(text[position:])
    return "".join(kept)
