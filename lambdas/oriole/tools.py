"""The agent's tools: their definitions, the validation of a tool call, and its execution.

A model (or a baseline agent) only ever names a tool and, optionally, a one-line ``reasoning``.
It never supplies an experiment id or a position: those come from the stored experiment, so a model
cannot act on another experiment or teleport. Every call, valid or not, becomes one action.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field

from oriole import maze as rules
from oriole.maze import Maze, Position, Tile

MOVE_TOOLS: dict[str, str] = {f"move_{d}": d for d in rules.DIRECTIONS}
RECALL_TOOL = "recall_all"
INVALID_ACTION = "invalid"
MAX_REASONING_CHARS = 2000

_ARGUMENTS_SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "description": "One short sentence on why you chose this action."}
    },
    "additionalProperties": False,
}


@dataclass(frozen=True)
class ToolSpec:
    """A tool as every provider describes it to its model: a name, what it does, its JSON schema."""

    name: str
    description: str
    parameters: dict = field(default_factory=lambda: _ARGUMENTS_SCHEMA)


TOOL_SPECS: tuple[ToolSpec, ...] = (
    *(ToolSpec(name, f"Move one tile {d}. Fails, and you stay put, if a wall or the maze edge is there.")
      for name, d in MOVE_TOOLS.items()),
    ToolSpec(RECALL_TOOL, "Recall the tiles you have seen and the positions you visited over your recent "
                          "actions. Needs a number of moves between two uses."),
)


@dataclass(frozen=True)
class ToolCall:
    """A tool call as a model sent it: arguments may be an object, a JSON string, or garbage."""

    name: str
    arguments: object = None
    call_id: str | None = None


@dataclass(frozen=True)
class Rules:
    """The experiment's gameplay settings, taken from its configuration snapshot."""

    maze: Maze
    vision_range: int
    goal_condition: str
    recall_interval: int
    max_recall_actions: int


@dataclass
class WorldState:
    """Where the agent is and what it has done so far; advanced by every action."""

    position: Position
    step: int = 0
    moves: int = 0
    failed_moves: int = 0
    recalls: int = 0
    invalid_calls: int = 0
    moves_at_last_recall: int | None = None
    goal_found: bool = False
    goal_first_seen_step: int | None = None
    goal_reached_step: int | None = None


@dataclass(frozen=True)
class ActionRecord:
    """One stored action, and the result that goes back to the model."""

    step_number: int
    action_type: str
    tool_name: str
    arguments: dict | None
    reasoning: str | None
    from_pos: Position
    to_pos: Position
    success: bool
    error: str | None
    tiles_seen: list[list[int]]
    goal_visible: bool
    result: dict


class ToolCallError(ValueError):
    """A tool call that cannot be executed; the message goes back to the model."""


def parse_arguments(raw: object) -> dict:
    """Validate a call's arguments against the tools' schema: nothing but an optional string ``reasoning``."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError) as err:  # a number of 4,300+ digits, or nesting past the parser
            detail = err.msg if isinstance(err, json.JSONDecodeError) else "too large or too deeply nested"
            raise ToolCallError(f"arguments are not valid JSON ({detail}); send an object such as "
                                '{"reasoning": "..."}') from None
    if not isinstance(raw, dict):
        raise ToolCallError(f"arguments must be an object, got {type(raw).__name__}")
    extra = sorted(set(raw) - {"reasoning"})
    if extra:
        raise ToolCallError(f"unexpected argument(s) {', '.join(extra)}; tools take only 'reasoning'")
    reasoning = raw.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        raise ToolCallError("'reasoning' must be a string")
    if reasoning is not None and len(reasoning) > MAX_REASONING_CHARS:
        raise ToolCallError(f"'reasoning' is longer than {MAX_REASONING_CHARS} characters")
    return raw


def observation(maze: Maze, pos: Position, vision_range: int) -> tuple[list[Tile], dict]:
    """What the agent sees at ``pos``: the raw tiles and the compact form a model reads."""
    tiles = rules.vision(maze, pos, vision_range)
    return tiles, {"position": list(pos), "visible": rules.group_tiles(tile.as_list() for tile in tiles)}


class Memory:
    """The recent actions recall_all summarises: each action's resulting position and the tiles it saw."""

    def __init__(self, size: int, entries: list[tuple[Position, list[list[int]]]] = ()):
        self._entries: deque = deque(entries, maxlen=size)

    def remember(self, record: ActionRecord) -> None:
        self._entries.append((record.to_pos, record.tiles_seen))

    def summary(self) -> dict:
        return rules.recall_summary(list(self._entries))


def execute(call: ToolCall, world: WorldState, game: Rules, memory: Memory) -> ActionRecord:
    """Validate and run one tool call against the maze, advancing ``world``; always yields one action."""
    world.step += 1
    start = world.position
    try:
        if call.name not in MOVE_TOOLS and call.name != RECALL_TOOL:
            raise ToolCallError(f"unknown tool {call.name!r}; available: {', '.join(s.name for s in TOOL_SPECS)}")
        arguments = parse_arguments(call.arguments)
    except ToolCallError as err:
        world.invalid_calls += 1
        record = _record(world, call, INVALID_ACTION, None, start, start, False, str(err), [])
    else:
        if call.name == RECALL_TOOL:
            record = _recall(world, call, arguments, game, memory)
        else:
            record = _move(world, call, arguments, game)
    memory.remember(record)
    return record


def _move(world: WorldState, call: ToolCall, arguments: dict, game: Rules) -> ActionRecord:
    start = world.position
    end, success = rules.move(game.maze, start, MOVE_TOOLS[call.name])
    world.moves += 1
    if not success:
        world.failed_moves += 1
    world.position = end
    tiles, seen = observation(game.maze, end, game.vision_range)
    goal_seen = rules.goal_visible(tiles)
    if goal_seen and world.goal_first_seen_step is None:
        world.goal_first_seen_step = world.step
    if end == game.maze.goal and world.goal_reached_step is None:
        world.goal_reached_step = world.step
    if rules.goal_met(game.goal_condition, game.maze, end, tiles):
        world.goal_found = True
    error = None if success else f"cannot move {MOVE_TOOLS[call.name]}: wall at the target tile"
    record = _record(world, call, call.name, arguments, start, end, success, error,
                     [t.as_list() for t in tiles], goal_seen)
    return _with_result(record, {**seen, "goal_found": world.goal_found})


def _recall(world: WorldState, call: ToolCall, arguments: dict, game: Rules, memory: Memory) -> ActionRecord:
    remaining = rules.recall_moves_remaining(world.moves, world.moves_at_last_recall, game.recall_interval)
    world.recalls += 1
    pos = world.position
    if remaining:
        error = f"recall_all is cooling down: {remaining} more move(s) before it can be used again"
        return _record(world, call, RECALL_TOOL, arguments, pos, pos, False, error, [])
    world.moves_at_last_recall = world.moves
    record = _record(world, call, RECALL_TOOL, arguments, pos, pos, True, None, [])
    return _with_result(record, {"position": list(pos), "memory": memory.summary()})


def _record(world: WorldState, call: ToolCall, action_type: str, arguments: dict | None, start: Position,
            end: Position, success: bool, error: str | None, tiles: list[list[int]],
            goal_seen: bool = False) -> ActionRecord:
    reasoning = arguments.get("reasoning") if arguments else None
    result = {"success": success, "position": list(end)}
    if error:
        result["error"] = error
    return ActionRecord(world.step, action_type, call.name, arguments, reasoning, start, end, success, error,
                        tiles, goal_seen, result)


def _with_result(record: ActionRecord, extra: dict) -> ActionRecord:
    return ActionRecord(**{**record.__dict__, "result": {**record.result, **extra}})
