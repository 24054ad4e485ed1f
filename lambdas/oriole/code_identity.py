"""The code an experiment runs: the commit it was built from, whether the checkout held uncommitted changes, and a hash
of the runtime package's files, the same locally and in the Lambda asset.

The hash (``runtime_hash``) is computed from the files the runtime was imported from: the ``oriole`` package and its
migrations (``oriole.migrations``), each by its path inside the package, interpreter caches left out. An editable
install, a wheel and the Lambda asset (``infra/bundling.py`` copies the same files to the same paths) give the same
hash for the same code; ``infra`` hashes the source tree with ``files_digest`` too, and a test holds the two equal.

The commit and the flag come from git (``git_state``), which the Lambda asset does not carry: CDK records them when
it synthesizes the stack, from the checkout it synthesizes, and sets them on the functions (``ORIOLE_CODE_COMMIT``,
``ORIOLE_CODE_DIRTY``, read by ``oriole.environment``). A local run, whose runtime is imported from a checkout, asks
git itself; a runtime installed from a wheel knows neither (None: not recorded).
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from oriole.environment import Environment

NOT_CODE = ("__pycache__", "*.pyc")  # what neither the hash nor the Lambda asset holds (infra/bundling.py)
MIGRATIONS = "migrations"  # where oriole.migrations sits in the package (a folder of its own in an editable install)
GIT_SECONDS = 10.0


def is_code(name: str) -> bool:
    """Whether a file, by its path inside the package, is part of the code (no part of it an interpreter cache)."""
    return not any(fnmatch(part, pattern) for part in name.split("/") for pattern in NOT_CODE)


def files_digest(files: Iterable[tuple[str, bytes]]) -> str:
    """SHA-256 over each file's path inside the package and the SHA-256 of its bytes, in the order of the paths."""
    digest = hashlib.sha256()
    for name, content in sorted(files):
        digest.update(f"{name}\0{hashlib.sha256(content).hexdigest()}\n".encode())
    return digest.hexdigest()


def _walk(folder: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for entry in folder.iterdir():
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            yield from _walk(entry, name + "/")
        elif entry.is_file():
            yield name, entry


def runtime_files() -> dict[str, Traversable]:
    """The runtime package's files by their path inside it (``core/maze.py``, ``migrations/0001_schema.sql``), read
    where Python imported them from."""
    package = {name: f for name, f in _walk(resources.files("oriole"), "") if not name.startswith(MIGRATIONS + "/")}
    migrations = dict(_walk(resources.files("oriole.migrations"), MIGRATIONS + "/"))
    return {name: f for name, f in (package | migrations).items() if is_code(name)}


@functools.cache
def runtime_hash() -> str:
    """The hash of the runtime package's files (``files_digest``), computed once per process."""
    return files_digest((name, f.read_bytes()) for name, f in runtime_files().items())


def git_state(path: Path) -> tuple[str | None, bool | None]:
    """The commit checked out where ``path`` lives, and whether that checkout holds uncommitted changes (``git status``
    lists anything: a tracked file changed or staged, or a file git does not ignore and does not track); (None, None)
    when ``path`` is no tracked part of a git checkout (a wheel in a virtual environment, the Lambda asset) or git
    cannot be run."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(path), *args], capture_output=True, text=True, check=True, timeout=GIT_SECONDS
        ).stdout

    try:
        if not git("ls-files", "--", ".").strip():
            return None, None
        commit = git("rev-parse", "HEAD").strip()
        dirty = bool(git("status", "--porcelain").strip())
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit or None, dirty


@functools.cache
def _checkout_state() -> tuple[str | None, bool | None]:
    return git_state(Path(str(resources.files("oriole"))))


@dataclass(frozen=True)
class CodeIdentity:
    """What an experiment records of the code that started it: ``version`` (the package version and, on AWS, the
    asset's hash as CDK set it; locally ``+local.`` and the runtime hash's first 12 digits), the commit (None when
    unknown), whether the checkout held uncommitted changes (None when unknown) and the runtime hash."""

    version: str
    commit: str | None
    dirty: bool | None
    runtime_hash: str


def current(env: Environment | None = None) -> CodeIdentity:
    """The code running now: the commit and flag the deployment recorded (its environment), else the checkout's."""
    from oriole import __version__

    env = env or Environment.read()
    digest = runtime_hash()
    commit, dirty = (env.code_commit, env.code_dirty) if env.code_commit else _checkout_state()
    return CodeIdentity(env.code_version or f"{__version__}+local.{digest[:12]}", commit, dirty, digest)
