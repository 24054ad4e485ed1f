"""Prompt versions outside a deployment: the shipped ones, plus the researcher's own kept in
``.oriole/prompts/<version>.md`` (seeded into the local Parameter Store on every run), or Parameter
Store itself with ``--aws``."""

from __future__ import annotations

import re
from pathlib import Path

from oriole import catalog
from oriole.errors import OrioleError, UnknownPromptVersion
from oriole.text import unstorable
from oriole_workstation import files
from oriole_workstation.database import home

VERSION_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,64}")  # matched whole (fullmatch)
MAX_PROMPT_BYTES = 8192  # Parameter Store's advanced-tier limit for one value


def _local_dir() -> Path:
    path = home() / "prompts"
    path.mkdir(parents=True, exist_ok=True)
    return path


class PromptRejected(OrioleError):
    """A prompt version that Parameter Store or an experiment could not use."""


def check(version: str, text: str) -> None:
    """Refuse what Parameter Store or an experiment could not use, with the reason; a version that is all
    digits would read as an id."""
    if not VERSION_PATTERN.fullmatch(version) or version.isdigit():
        raise PromptRejected(
            f"prompt version {version!r} must be 1-64 letters, digits, '.', '_' or '-', and not all digits"
        )
    if not text.strip():
        raise PromptRejected("the prompt file is empty")
    if problem := unstorable(text):
        raise PromptRejected(f"the prompt {problem}")
    if len(text.encode()) > MAX_PROMPT_BYTES:
        raise PromptRejected(
            f"the prompt is {len(text.encode())} bytes; Parameter Store holds at most {MAX_PROMPT_BYTES}"
        )


def read_text(path: Path) -> str:
    """A prompt file's text; a file that cannot be read, is not a regular file, is far too large or is not UTF-8
    is a ``PromptRejected`` naming it (``oriole_workstation.files``)."""
    return files.read_text(
        path,
        MAX_PROMPT_BYTES,
        PromptRejected,
        f"a prompt holds at most {MAX_PROMPT_BYTES:,} bytes (Parameter Store's limit)",
    )


def local_prompts() -> dict[str, str]:
    """Version -> text: the shipped prompts, overlaid by the ones put locally."""
    prompts = {v: catalog.shipped_prompt(v) for v in catalog.SHIPPED_PROMPT_VERSIONS}
    prompts.update({p.stem: read_text(p) for p in sorted(_local_dir().glob("*.md"))})
    return prompts


def _taken(version: str, text: str, stored: str | None) -> bool:
    """Whether ``text`` is stored already under ``version``; a version stored with another text is taken: the
    experiments that ran it keep its hash, and a new text gets a new version."""
    if stored is None:
        return False
    if stored == text:
        return True
    raise PromptRejected(
        f"prompt version {version} is taken (stored with another text, sha256 "
        f"{catalog.prompt_hash(stored)[:16]}): put this text under a new version"
    )


def put_local(version: str, text: str) -> bool:
    """Store a version locally; False when it was stored with this very text already."""
    check(version, text)
    path = _local_dir() / f"{version}.md"
    shipped = catalog.shipped_prompt(version) if version in catalog.SHIPPED_PROMPT_VERSIONS else None
    if _taken(version, text, read_text(path) if path.is_file() else shipped):
        return False
    (_local_dir() / f"{version}.md").write_text(text, encoding="utf-8")
    return True


def aws_prompts(ssm) -> dict[str, str]:
    paginator = ssm.get_paginator("get_parameters_by_path")
    return {
        p["Name"].rsplit("/", 1)[-1]: p["Value"]
        for page in paginator.paginate(Path=catalog.PROMPTS_PATH, Recursive=False)
        for p in page["Parameters"]
    }


def put_aws(ssm, version: str, text: str) -> bool:
    """Store a version in Parameter Store; False when it was stored with this very text already."""
    check(version, text)
    if _taken(version, text, aws_prompts(ssm).get(version)):
        return False
    tier = "Advanced" if len(text.encode()) > 4096 else "Standard"
    ssm.put_parameter(Name=catalog.prompt_name(version), Value=text, Type="String", Overwrite=False, Tier=tier)
    return True


def get(prompts: dict[str, str], version: str) -> str:
    if version not in prompts:
        raise UnknownPromptVersion(f"no prompt version {version!r}; known: {', '.join(sorted(prompts))}")
    return prompts[version]
