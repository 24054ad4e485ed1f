"""What the model remembers across turns (``historyMode``): each memory mode one class behind ``MemoryMode``, named
by its entry in ``oriole.memory_registry`` (the table the catalog's choices come from).

- ``actions`` (``ActionsMemory``): nothing but the turn context's last ``historyActions`` actions (built by the
  turn's setup, ``oriole.core.turn``, whatever the mode).
- ``conversation`` (``ConversationMemory``): the earlier turns' messages, rebuilt from the stored model calls,
  whole turns: the last ``historyTurns`` of them.
- ``summary`` (``SummaryMemory``): the last ``historyTurns`` turns' messages, and everything older compacted into a
  summary the turn context carries, by its ``compaction`` (``COMPACTIONS`` in the registry): ``model``
  (``ModelCompaction``) asks the model to summarise its own earlier turns in a separate call that is stored and
  accounted like any other. ``map`` (``MapCompaction``, retired: kept so that the experiments that chose it replay
  as they ran) handed over the map the agent has seen, the tiles it stood on and the frontier: a planning aid, not a
  memory, now the setting ``mapAid`` whatever the mode (``MapMemory.summary`` in every turn's context, as
  ``map_aid``: ``oriole.core.turn``).

A mode reads what the experiment remembers when the turn starts (``Remembered``), says which earlier turns the
turn carries (``carried``), what it adds before the turn is played (``recollect``: a summary and the calls that
made it) and what it keeps for the next turn (``remember``). Pure functions over stored rows, no I/O.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from oriole.core.known_map import GOAL, OPEN, UNKNOWN, WALL, KnownMap
from oriole.core.maze import DIRECTIONS, Maze, Position, vision
from oriole.core.tools import NATIVE, ToolCall
from oriole.core.turn_loop import (
    Agent,
    Message,
    ModelCall,
    ModelRequest,
    ModelResponse,
    Sent,
    estimate_tokens,
    message_as_json,
    message_from_json,
)
from oriole.memory_registry import COMPACTIONS, MEMORY_MODES, Entry
from oriole.text import JsonObject

FRONTIER_TILES = 20
COMPACTION_PROMPT = (
    "You summarise an agent's progress in a 2D grid maze so that it can continue without its full history. "
    "Keep what matters for finding the goal: where it has been, walls and dead ends it found, open branches it "
    "has not explored, where the goal is if it was seen. Answer with the summary only, in at most 200 words."
)


@dataclass(frozen=True)
class StoredTurn:
    """One earlier turn as ``Store.load_turn`` reads it: its calls (request messages and response), the
    tool results no call read (``closing``) and the estimated tokens of all its messages."""

    number: int
    calls: Sequence[JsonObject]
    closing: Sequence[JsonObject]
    message_tokens: int

    def messages(self) -> list[Message]:
        """The turn's conversation as the model saw it: each call's new messages then its answer, and the
        results of the last answer's calls."""
        messages: list[Message] = []
        for call in self.calls:
            messages += [message_from_json(m) for m in call["request"]]
            messages.append(answer_message(call["response"]))
        return messages + [message_from_json(m) for m in self.closing]


def answer_message(response: JsonObject, text_tool_calls: bool = False) -> Message:
    """A stored answer as the assistant message it was: native tool calls travel as calls, text calls stay
    in the text (with ``text_tool_calls`` on, the turn loop sends the text alone)."""
    if text_tool_calls:
        return Message("assistant", response.get("text"))
    calls = tuple(
        ToolCall(c["name"], c.get("arguments"), c.get("id"), c.get("source", NATIVE))
        for c in response.get("tool_calls") or ()
    )
    return Message("assistant", response.get("text"), tool_calls=tuple(c for c in calls if c.source == NATIVE))


def message_tokens(messages: Iterable[Message]) -> int:
    """The estimated tokens of messages (what a compaction leaves out, what a turn adds to the earlier turns)."""
    return sum(estimate_tokens(message_as_json(m)) for m in messages)


# --- map compaction -------------------------------------------------------------------------------------


class MapMemory:
    """The map the agent has seen and the tiles it stood on, one character per tile (compact to store): what the map
    aid (``mapAid``), the map views (``imageView``/``textView`` map) and the retired map compaction read, kept in
    the experiment's memory turn by turn."""

    def __init__(self, size: Sequence[int], state: JsonObject | None = None):
        state = state or {}
        self.known = KnownMap(size, state.get("map"))
        self.visited = list(state.get("visited") or "0" * (self.known.width * self.known.height))

    @classmethod
    def kept(cls, maze: Maze, state: JsonObject, vision_range: int) -> MapMemory:
        """The map as the previous turn left it in the experiment's memory (the start's sighting on the first)."""
        known = cls((maze.width, maze.height), state if "map" in state else None)
        if "map" not in state:
            known.learn(maze.start, [t.as_list() for t in vision(maze, maze.start, vision_range)])
        return known

    def state(self) -> JsonObject:
        return {"map": str(self.known), "visited": "".join(self.visited)}

    def learn(self, position: Position, tiles: Iterable[Sequence[int]]) -> None:
        """What one action (or the start) showed: the tiles seen, and where the agent stood."""
        self.known.see(tiles)
        x, y = position
        if 0 <= x < self.known.width and 0 <= y < self.known.height:
            self.visited[y * self.known.width + x] = "1"

    def summary(self, position: Position) -> JsonObject:
        """The map aid (and the retired map compaction's summary): the known map as text rows, how much was
        visited, the frontier."""
        width = self.known.width
        rows = []
        for y in range(self.known.height):
            rows.append(
                "".join(
                    "*"
                    if self.visited[y * width + x] == "1" and self.known.get((x, y)) == OPEN
                    else self.known.get((x, y))
                    for x in range(width)
                )
            )
        return {
            "known_map": rows,
            "legend": f"{WALL} wall, {OPEN} open, * visited, {GOAL} goal, {UNKNOWN} not seen; row y, column x",
            "visited_tiles": self.visited.count("1"),
            "frontier": self._frontier(position),
        }

    def _frontier(self, position: Position) -> list[list[int]]:
        """Known open tiles next to unseen ones, nearest first: where exploring can go on."""
        known = self.known
        tiles = [
            (x, y)
            for y in range(known.height)
            for x in range(known.width)
            if known.get((x, y)) == OPEN
            and any(known.get((x + dx, y + dy)) == UNKNOWN for dx, dy in DIRECTIONS.values())
        ]
        tiles.sort(key=lambda t: (abs(t[0] - position[0]) + abs(t[1] - position[1]), t[1], t[0]))
        return [list(t) for t in tiles[:FRONTIER_TILES]]


def compaction_request(previous: str | None, turn: StoredTurn) -> ModelRequest:
    """Ask the model to fold one more turn into its running summary (no tools: it can only write)."""
    content = {
        "previous_summary": previous or "(none yet)",
        "turn": turn.number,
        "messages": [message_as_json(m) for m in turn.messages()],
    }
    return ModelRequest(COMPACTION_PROMPT, (), (Message("user", content),))


def summary_text(response: ModelResponse) -> str:
    """The summary a compaction call returned (an answer without text summarises nothing)."""
    return (response.text or "").strip()


# --- the memory modes -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Remembered:
    """What the experiment remembers when a turn starts, as the turn's load gives it: the turns played so far, the
    newest earlier turns (oldest first; loaded only for a mode that carries turns), the memory state the previous
    turn kept (``experiments.memory``) and the estimated tokens of every earlier turn's messages; and the settings
    that shape it (``historyTurns``, ``compaction``)."""

    turn_count: int
    earlier_turns: tuple[StoredTurn, ...]
    state: JsonObject
    history_tokens: int
    history_turns: int
    compaction: str


@dataclass(frozen=True)
class Recollection:
    """What memory adds to a turn before it is played: the summary its context carries (``memory_summary``), the
    compaction calls that made it (stored and accounted with the turn's), and what the summary stands for (stored
    in ``turns.context``)."""

    summary: JsonObject | None = None
    calls: tuple[ModelCall, ...] = ()
    record: JsonObject | None = None


class MemoryMode(Protocol):
    """One value of ``historyMode``. ``carries_turns``: its turns carry earlier turns' messages (so the turn's load
    reads them); ``keeps_map``: it keeps the map the agent has seen in the experiment's memory."""

    carries_turns: ClassVar[bool]

    def __init__(self, remembered: Remembered) -> None: ...

    @property
    def keeps_map(self) -> bool: ...

    def carried(self) -> list[StoredTurn]:
        """The earlier turns whose messages the turn carries, oldest first."""
        ...

    def recollect(self, agent: Agent, known: MapMemory | None, position: Position) -> Recollection:
        """What the turn's context gets before it is played (``known``: the map kept so far, when the experiment
        keeps it; ``position``: where the turn starts)."""
        ...

    def remember(self, recollection: Recollection) -> JsonObject:
        """The mode's own part of the memory state the next turn reads (the known map is kept beside it)."""
        ...


class ActionsMemory:
    """``actions``: no earlier turn's messages, nothing to summarise; the turn context's recent actions are all."""

    carries_turns: ClassVar[bool] = False

    def __init__(self, remembered: Remembered):
        self.remembered = remembered

    @property
    def keeps_map(self) -> bool:
        return False

    def carried(self) -> list[StoredTurn]:
        return []

    def recollect(self, agent: Agent, known: MapMemory | None, position: Position) -> Recollection:
        return Recollection()

    def remember(self, recollection: Recollection) -> JsonObject:
        return {}


class ConversationMemory(ActionsMemory):
    """``conversation``: the last ``historyTurns`` turns' messages, whole (trimmed oldest first to the context
    budget by the turn loop)."""

    carries_turns: ClassVar[bool] = True

    def carried(self) -> list[StoredTurn]:
        return list(self.remembered.earlier_turns[-self.remembered.history_turns :])


class Compaction(Protocol):
    """One value of ``compaction``: how ``SummaryMemory`` summarises the turns older than its window."""

    keeps_map: ClassVar[bool]

    def summarise(
        self, memory: SummaryMemory, agent: Agent, known: MapMemory | None, position: Position
    ) -> Recollection:
        """The summary and the calls that made it (the record is the memory's)."""
        ...

    def remember(self, memory: SummaryMemory, recollection: Recollection) -> JsonObject:
        """What the compaction keeps for the next turn."""
        ...


class MapCompaction:
    """``map`` (retired, for the experiments that chose it): the known map as text rows, how much was visited and
    the frontier, from where the turn starts, once turns leave the window. The map aid (``mapAid``) is this
    content in every turn's context, named for what it is."""

    keeps_map: ClassVar[bool] = True

    def summarise(
        self, memory: SummaryMemory, agent: Agent, known: MapMemory | None, position: Position
    ) -> Recollection:
        assert known is not None, "a memory that keeps the map is given the kept map"
        return Recollection(known.summary(position))

    def remember(self, memory: SummaryMemory, recollection: Recollection) -> JsonObject:
        return {}  # the map itself is kept with the known map


class ModelCompaction:
    """``model``: the model folds the turn that just left the window into its running summary, in a call of its
    own; the summary and the last turn it covers are kept."""

    keeps_map: ClassVar[bool] = False
    KEPT = ("summary", "through_turn")

    def summarise(
        self, memory: SummaryMemory, agent: Agent, known: MapMemory | None, position: Position
    ) -> Recollection:
        previous = memory.remembered.state.get("summary")
        turn = memory.to_compact()
        if turn is None:
            return Recollection({"summary": previous})
        request = compaction_request(previous, turn)
        response = agent.respond(request)
        call = ModelCall(request.messages, response, kind="compaction", sent=Sent(request.system_prompt, request.tools))
        return Recollection({"summary": summary_text(response) or previous}, (call,))

    def remember(self, memory: SummaryMemory, recollection: Recollection) -> JsonObject:
        state = memory.remembered.state
        if recollection.summary is None:
            return {key: state[key] for key in self.KEPT if key in state}
        compacted = memory.to_compact()
        through = compacted.number if compacted else state.get("through_turn", 0)
        return {"summary": recollection.summary["summary"], "through_turn": through}


class SummaryMemory(ConversationMemory):
    """``summary``: the window of ``conversation``, and a summary of the turns older than it, made by the
    experiment's ``compaction``."""

    def __init__(self, remembered: Remembered):
        super().__init__(remembered)
        self.compaction: Compaction = _implementation(COMPACTIONS, remembered.compaction)()

    @property
    def keeps_map(self) -> bool:
        return self.compaction.keeps_map

    def summarised_turns(self) -> int:
        """How many turns are older than the window: what the summary stands for."""
        return max(0, self.remembered.turn_count - self.remembered.history_turns)

    def to_compact(self) -> StoredTurn | None:
        """The turn that just left the window and is not in the running summary yet (model compaction)."""
        through = self.remembered.state.get("through_turn", 0)
        newest_old = self.summarised_turns()
        older = [t for t in self.remembered.earlier_turns if t.number == newest_old]
        return older[0] if newest_old > through and older else None

    def recollect(self, agent: Agent, known: MapMemory | None, position: Position) -> Recollection:
        summarised = self.summarised_turns()
        if not summarised:
            return Recollection()
        made = self.compaction.summarise(self, agent, known, position)
        window_tokens = sum(t.message_tokens for t in self.carried())
        record = {
            "compaction": self.remembered.compaction,
            "turns_summarised": summarised,
            "tokens_before": max(0, self.remembered.history_tokens - window_tokens),
            "tokens_after": estimate_tokens(made.summary),
        }
        return Recollection(made.summary, made.calls, record)

    def remember(self, recollection: Recollection) -> JsonObject:
        return self.compaction.remember(self, recollection)


def _implementation(table: dict[str, Entry], name: str) -> type:
    """The class a registry entry names (imported on first use)."""
    module, _, attribute = table[name].implementation.rpartition(".")
    found: type = getattr(importlib.import_module(module), attribute)
    return found


def memory_mode(name: str) -> type[MemoryMode]:
    """The class of the memory mode ``historyMode`` names (``oriole.memory_registry.MEMORY_MODES``)."""
    mode: type[MemoryMode] = _implementation(MEMORY_MODES, name)
    return mode


def carrying_modes() -> tuple[str, ...]:
    """The memory modes whose turns carry earlier turns' messages: the ones whose turns load them."""
    return tuple(name for name in MEMORY_MODES if memory_mode(name).carries_turns)
