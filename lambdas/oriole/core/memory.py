"""What the model remembers across turns (``historyMode``), as pure functions over stored rows.

- ``actions``: nothing but the turn context's last ``historyActions`` actions (built elsewhere).
- ``conversation``: the earlier turns' messages, rebuilt from the stored model calls, whole turns.
- ``summary``: the last ``historyTurns`` turns' messages, and everything older compacted into a summary the
  turn context carries: ``map`` is deterministic (the map the agent has seen, the tiles it stood on, the
  frontier, kept up to date on the experiment turn by turn), ``model`` asks the model to summarise its own
  history in a separate call that is stored and accounted like any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from oriole.core.known_map import GOAL, OPEN, UNKNOWN, WALL, KnownMap
from oriole.core.maze import DIRECTIONS, Position
from oriole.core.tools import NATIVE, ToolCall
from oriole.core.turn_loop import (
    Message,
    ModelRequest,
    ModelResponse,
    estimate_tokens,
    message_as_json,
    message_from_json,
)
from oriole.text import JsonObject

ACTIONS, CONVERSATION, SUMMARY = "actions", "conversation", "summary"
MAP, MODEL = "map", "model"
FRONTIER_TILES = 20
_CELLS = {0: OPEN, 1: WALL, 2: GOAL}
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
    """The estimated tokens of messages (what a compaction leaves out, what a turn adds to the history)."""
    return sum(estimate_tokens(message_as_json(m)) for m in messages)


# --- map compaction -------------------------------------------------------------------------------------


class MapMemory:
    """The map the agent has seen and the tiles it stood on, one character per tile (compact to store)."""

    def __init__(self, size: Sequence[int], state: JsonObject | None = None):
        state = state or {}
        self.known = KnownMap(size, state.get("map"))
        self.visited = list(state.get("visited") or "0" * (self.known.width * self.known.height))

    def state(self) -> JsonObject:
        return {"map": str(self.known), "visited": "".join(self.visited)}

    def learn(self, position: Position, tiles: Iterable[Sequence[int]]) -> None:
        """What one action (or the start) showed: the tiles seen, and where the agent stood."""
        for x, y, cell in tiles:
            self.known.set((x, y), _CELLS[cell])
        x, y = position
        if 0 <= x < self.known.width and 0 <= y < self.known.height:
            self.visited[y * self.known.width + x] = "1"

    def summary(self, position: Position) -> JsonObject:
        """The summary message's content: the known map as text rows, how much was visited, the frontier."""
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


# --- model compaction -----------------------------------------------------------------------------------


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
