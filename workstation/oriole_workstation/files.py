"""Files a researcher names: read with a bound before anything parses them (sweep files, prompt files, maze
files), and written with a refusal that names them (reports).

A path can name something that is not a file: ``/dev/zero`` never ends, a FIFO blocks its reader until someone
writes, a folder cannot be read. The file is opened without blocking and looked at through its descriptor (so
what is checked is what is read), refused unless it is a regular file, and read no further than the limit;
its text must be UTF-8, and a refusal says which byte is not.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from oriole.errors import OrioleError


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


def write_text(path: Path, text: str, error: type[OrioleError]) -> None:
    """Write ``text`` (UTF-8) to ``path``; a path the system refuses (a folder, a missing folder, no permission, a
    full disk, a device) is ``error``, one line naming the path."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise error(f"cannot write {path}: {err.strerror}") from None
