"""The memory modes, one entry each: what the model remembers of its earlier turns (``historyMode``), and how the
summary mode summarises what fell out of its window (``compaction``).

A memory mode is its class (``implementation``: one class behind ``oriole.core.memory.MemoryMode``) and its entry
here. From this table come the catalog's choices and descriptions of ``historyMode`` and ``compaction``, the class
a turn remembers with (``oriole.core.memory.memory_mode``), and which modes' turns load the earlier turns' messages
(``Store.load_turn`` asks the classes, never names a mode).

Plain data, at the bottom of the runtime's layers beside ``oriole.provider_registry``: it imports nothing of the
project, and names each class by its dotted path (imported when a turn first asks for it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One choice: its name (the configuration value), the class that implements it, what it means (the catalog's
    description and the docs show it)."""

    name: str
    implementation: str  # "oriole.core.memory.ConversationMemory"
    description: str
    # A choice no new experiment may make, kept so that the experiments that made it read and replay as they ran:
    # what to use instead (the catalog refuses it at the boundary with these words).
    retired: str = ""


def _table(*entries: Entry) -> dict[str, Entry]:
    return {entry.name: entry for entry in entries}


MEMORY_MODES: dict[str, Entry] = _table(
    Entry(
        "actions",
        "oriole.core.memory.ActionsMemory",
        "a context message with its last historyActions actions",
    ),
    Entry(
        "conversation",
        "oriole.core.memory.ConversationMemory",
        "the earlier turns' messages, trimmed oldest first to the context budget",
    ),
    Entry(
        "summary",
        "oriole.core.memory.SummaryMemory",
        "the last historyTurns turns' messages plus a summary of everything older",
    ),
)

COMPACTIONS: dict[str, Entry] = _table(
    Entry(
        "model",
        "oriole.core.memory.ModelCompaction",
        "the model summarises its own earlier turns in a separate, accounted call",
    ),
    Entry(
        "map",
        "oriole.core.memory.MapCompaction",
        "the map the agent has seen, the tiles it visited, the frontier, past the window (before harness 3)",
        retired="it handed the agent a computed map and frontier, a planning aid rather than a memory: that aid is "
        "now mapAid (true: in every turn's context), beside any memory mode",
    ),
)


def choices(entries: dict[str, Entry]) -> tuple[str, ...]:
    """The values a new experiment may give (the retired ones left out)."""
    return tuple(name for name, entry in entries.items() if not entry.retired)


def retired(entries: dict[str, Entry]) -> tuple[tuple[str, str], ...]:
    """The retired values, each with what to use instead: a stored snapshot may hold one, an input may not."""
    return tuple((name, entry.retired) for name, entry in entries.items() if entry.retired)


def described(entries: dict[str, Entry]) -> str:
    """The choices a new experiment may give as a parameter's description lists them: ``a (what a is), b (what b
    is) or c (...)``."""
    parts = [f"{entry.name} ({entry.description})" for entry in entries.values() if not entry.retired]
    return ", ".join(parts[:-1]) + " or " + parts[-1] if len(parts) > 1 else parts[0]
