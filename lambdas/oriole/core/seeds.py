"""Seeds derived from names, never drawn: a sweep's sampled mazes and each repetition's seed are hashes of the
sweep's seed id (its own id, or the id it takes its seeds from with ``seed_from``), so running the file again,
resuming it, or running it under another id with ``--seed-from`` gives the same mazes and the same seeds, and
every random baseline walks the same path action for action.

A repetition's seed derives from the sweep, the maze and the repetition only, never from the agent, its prompt or
its settings: every agent of a sweep meets the same seed on the same (maze, repetition), so two agents' runs pair
up for a paired comparison (``oriole report --pairs``)."""

from __future__ import annotations

import hashlib

MAX_SEED = 2**31 - 1  # the catalog's seed range (``/oriole/experiments/seed``), what Ollama and OpenAI take


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def maze_sample_seed(seed_id: str, family: str, size: int, index: int) -> int:
    """The seed of the ``index``-th draw of a maze sample (``FAMILY-SIZE@SEED``): 48 bits of a hash."""
    return int(_digest(f"{seed_id}/{family}-{size}/{index}")[:12], 16)


def repetition_seed(seed_id: str, maze: str, repetition: int) -> int:
    """The seed of one repetition on one maze (its name) of a sweep, whoever plays it, from 0 to MAX_SEED."""
    return int(_digest(f"{seed_id}/maze:{maze}/r{repetition}")[:8], 16) & MAX_SEED
