"""How a comparison groups its runs: a **series** is an agent (its sweep-file label, else provider and model) with its
prompt and the configuration that sets its group apart; a **panel** is a maze family and size, or one maze. Every
table, page, figure and analysis names and orders them the same way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from oriole_workstation.rows import Grouped, agent_name


class GroupBy(StrEnum):
    family = "family"
    maze = "maze"


def config_text(config: dict[str, Any]) -> str:
    return " ".join(f"{k}={json.dumps(v)}" for k, v in sorted(config.items())) or "-"


def prompt_labels(rows: Sequence[Grouped]) -> dict[tuple[str, str], str]:
    """Each (prompt version, hash) as shown: the version, with the hash's first characters when one version
    was stored with two texts."""
    hashes: dict[str, set[str]] = {}
    for row in rows:
        hashes.setdefault(row.prompt_version, set()).add(row.prompt_hash)
    return {
        (version, h): version + (f"@{h[:8]}" if len(known) > 1 else "")
        for version, known in hashes.items()
        for h in known
    }


def agent_text(row: Grouped) -> str:
    """The agent as every table, page and figure names it: its sweep-file label, else ``provider/model``."""
    return agent_name(row.agent_label, row.llm_provider, row.model_name)


def detail_text(row: Grouped, prompts: dict[tuple[str, str], str]) -> str:
    """What sets a group apart besides its agent: its prompt (when the rows hold several) and its compared
    configuration; empty when nothing does."""
    parts = [prompts[row.prompt_version, row.prompt_hash]] if len(prompts) > 1 else []
    if row.compared:
        parts.append(config_text(row.compared))
    return " · ".join(parts)


SeriesKey = tuple[str, str, str, str, str, str]  # provider, model, label, prompt version and hash, config as JSON
PanelKey = tuple[str, ...]  # (family, size), or (maze,)


def series_key(row: Grouped) -> SeriesKey:
    """A series (an agent with its prompt and compared configuration): what every chart draws as one row."""
    return (
        row.llm_provider,
        row.model_name,
        row.agent_label or "",
        row.prompt_version,
        row.prompt_hash,
        json.dumps(row.compared, sort_keys=True),
    )


def series_order(key: SeriesKey) -> tuple[object, ...]:
    """Series sorted by agent, prompt, then configuration, numbers by value (maxMoves 400 before 1500)."""
    config = json.loads(key[5])
    return (
        *key[:5],
        tuple(
            (k, (0, v, "") if isinstance(v, int | float) else (1, 0, json.dumps(v))) for k, v in sorted(config.items())
        ),
    )


def panel_key(row: Grouped, by: GroupBy) -> PanelKey:
    """The panel (a column of the leaderboard) a row or an experiment belongs to: its family and size, or its
    maze (a comparison by maze, and every experiment, names one)."""
    return (str(row.maze),) if by is GroupBy.maze else (row.maze_family, row.maze_size)


def panel_title(key: PanelKey) -> str:
    return " ".join(key)


def panels_in_order(rows: Sequence[Grouped], by: GroupBy) -> list[PanelKey]:
    """The panels in the comparison's order (family, then size, then maze)."""
    return list(dict.fromkeys(panel_key(r, by) for r in rows))
