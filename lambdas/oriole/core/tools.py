"""The agent's tools: their definitions, the validation of a tool call, and its execution.

A model (or a baseline agent) only ever names a tool and, optionally, a one-line ``reasoning``.
It never supplies an experiment id or a position: those come from the stored experiment, so a model
cannot act on another experiment or teleport. Every call, valid or not, becomes one action.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from oriole.core import maze as rules
from oriole.core.maze import Maze, Position, Tile
from oriole.text import JsonObject, NestedTooDeeply, load_json, nesting_depth

MOVE_TOOLS: dict[str, str] = {f"move_{d}": d for d in rules.DIRECTIONS}
RECALL_TOOL = "recall_all"
GIVE_UP_TOOL = "give_up"
INVALID_ACTION = "invalid"
MAX_REASONING_CHARS = 2000
MAX_ARGUMENT_DEPTH = 16  # the arguments are one flat object; deeper is answered as an invalid call, not kept
TOO_DEEP = f'arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels; send one object such as {{"reasoning": "..."}}'

_REASONING = {"type": "string", "description": "One short sentence on why you chose this action."}
_ARGUMENTS_SCHEMA = {"type": "object", "properties": {"reasoning": _REASONING}, "additionalProperties": False}
_GIVE_UP_SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "description": "Why you stop: what makes the goal unreachable for you."},
        "reasoning": _REASONING,
    },
    "required": ["reason"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class ToolSpec:
    """A tool as every provider describes it to its model: a name, what it does, its JSON schema."""

    name: str
    description: str
    parameters: JsonObject = field(default_factory=lambda: _ARGUMENTS_SCHEMA)


TOOL_SPECS: tuple[ToolSpec, ...] = (
    *(
        ToolSpec(name, f"Move one tile {d}. Fails, and you stay put, if a wall or the maze edge is there.")
        for name, d in MOVE_TOOLS.items()
    ),
    ToolSpec(
        RECALL_TOOL,
        "Recall the tiles you have seen and the positions you visited over your recent "
        "actions. Needs a number of moves between two uses.",
    ),
)
# Offered only when the experiment enables it (enableGiveUp): a loop-breaking tool that ends the experiment.
GIVE_UP_SPEC = ToolSpec(
    GIVE_UP_TOOL,
    "Stop for good: ends the whole experiment without reaching the goal. Use it "
    "only when you are sure you cannot reach the goal.",
    _GIVE_UP_SCHEMA,
)
MAX_GIVE_UP_REASON_CHARS = 500


def tool_specs(give_up: bool) -> tuple[ToolSpec, ...]:
    """The tools an experiment offers its agent."""
    return (*TOOL_SPECS, GIVE_UP_SPEC) if give_up else TOOL_SPECS


NATIVE, TEXT = "native", "text"  # how a tool call reached us: the provider's tool calling, or JSON in the text


@dataclass(frozen=True)
class ToolCall:
    """A tool call as a model sent it: arguments may be an object, a JSON string, or garbage. ``problem`` says
    why the call is invalid before it is read (arguments too deeply nested to keep)."""

    name: str
    arguments: object = None
    call_id: str | None = None
    source: str = NATIVE
    problem: str | None = None


def model_call(name: str, arguments: object, call_id: str | None = None, source: str = NATIVE) -> ToolCall:
    """A call as a model sent it, kept as it came unless its arguments nest deeper than ``MAX_ARGUMENT_DEPTH``:
    those are dropped (no recursive code meets them: escaping, storing, the earlier turns) and the call is answered
    as invalid, saying why."""
    if nesting_depth(arguments, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
        return ToolCall(
            name,
            None,
            call_id,
            source,
            problem=TOO_DEEP,
        )
    return ToolCall(name, arguments, call_id, source)


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
    action_count: int = 0  # the actions so far; the latest one's step_number
    moves: int = 0
    failed_moves: int = 0
    recalls: int = 0
    invalid_calls: int = 0
    moves_at_last_recall: int | None = None
    goal_found: bool = False
    goal_first_seen_step: int | None = None
    goal_reached_step: int | None = None
    gave_up_reason: str | None = None


@dataclass(frozen=True)
class ActionRecord:
    """One stored action, and the result that goes back to the model."""

    step_number: int
    action_type: str
    tool_name: str
    arguments: JsonObject | None
    reasoning: str | None
    from_pos: Position
    to_pos: Position
    success: bool
    error: str | None
    tiles_seen: list[list[int]]
    goal_visible: bool
    result: JsonObject


class ToolCallError(ValueError):
    """A tool call that cannot be executed; the message goes back to the model."""


def parse_arguments(raw: object, tool: str = RECALL_TOOL) -> JsonObject:
    """Validate a call's arguments against the tool's schema: an optional string ``reasoning``, and for
    ``give_up`` a required string ``reason``."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = load_json(raw, MAX_ARGUMENT_DEPTH)
        except NestedTooDeeply:
            raise ToolCallError(TOO_DEEP) from None
        except ValueError as err:
            detail = err.msg if isinstance(err, json.JSONDecodeError) else str(err)
            raise ToolCallError(
                f'arguments are not valid JSON ({detail}); send an object such as {{"reasoning": "..."}}'
            ) from None
    if not isinstance(raw, dict):
        raise ToolCallError(f"arguments must be an object, got {type(raw).__name__}")
    allowed = {"reasoning", "reason"} if tool == GIVE_UP_TOOL else {"reasoning"}
    extra = sorted(set(raw) - allowed)
    if extra:
        raise ToolCallError(
            f"unexpected argument(s) {', '.join(extra)}; {tool} takes only "
            + " and ".join(f"'{name}'" for name in sorted(allowed))
        )
    if tool == GIVE_UP_TOOL:
        _check_reason(raw.get("reason"))
    reasoning = raw.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        raise ToolCallError("'reasoning' must be a string")
    if reasoning is not None and len(reasoning) > MAX_REASONING_CHARS:
        raise ToolCallError(f"'reasoning' is longer than {MAX_REASONING_CHARS} characters")
    return raw


def _check_reason(reason: object) -> None:
    if not isinstance(reason, str) or not reason.strip():
        raise ToolCallError("give_up needs a 'reason': a string saying why you stop")
    if len(reason) > MAX_GIVE_UP_REASON_CHARS:
        raise ToolCallError(f"'reason' is longer than {MAX_GIVE_UP_REASON_CHARS} characters")


def observation(maze: Maze, pos: Position, vision_range: int) -> tuple[list[Tile], JsonObject]:
    """What the agent sees at ``pos``: the raw tiles and the compact form a model reads."""
    tiles = rules.vision(maze, pos, vision_range)
    return tiles, {"position": list(pos), "visible": rules.group_tiles(tiles)}


class RecallWindow:
    """What recall_all summarises: each recent action's resulting position and the tiles it saw, and what
    the agent saw from the start tile while the window still reaches back to it."""

    def __init__(
        self,
        size: int,
        entries: Iterable[tuple[Position, list[list[int]]]] = (),
        start: tuple[Position, list[list[int]]] | None = None,
        actions: int = 0,
    ):
        self._entries: deque[tuple[Position, list[list[int]]]] = deque(entries, maxlen=size)
        self._size = size
        self._start = start
        self._actions = actions  # actions taken so far in the experiment

    def remember(self, record: ActionRecord) -> None:
        self._entries.append((record.to_pos, record.tiles_seen))
        self._actions += 1

    def summary(self) -> JsonObject:
        entries = list(self._entries)
        if self._start is not None and self._actions <= self._size:
            entries.insert(0, self._start)
        return rules.recall_summary(entries)


def execute(
    call: ToolCall, world: WorldState, game: Rules, recall: RecallWindow, tools: tuple[ToolSpec, ...] = TOOL_SPECS
) -> ActionRecord:
    """Validate and run one tool call against the maze, advancing ``world``; always yields one action.

    ``tools`` are the tools this experiment offers: a tool it does not offer is an invalid call.
    """
    world.action_count += 1
    start = world.position
    try:
        if call.problem:  # unreadable before its name means anything (a text near miss, arguments too deep)
            raise ToolCallError(call.problem)
        if call.name not in {spec.name for spec in tools}:
            raise ToolCallError(f"unknown tool {call.name!r}; available: {', '.join(s.name for s in tools)}")
        arguments = parse_arguments(call.arguments, call.name)
    except ToolCallError as err:
        world.invalid_calls += 1
        record = _record(world, call, INVALID_ACTION, None, start, start, False, str(err), [])
    else:
        if call.name == RECALL_TOOL:
            record = _recall(world, call, arguments, game, recall)
        elif call.name == GIVE_UP_TOOL:
            world.gave_up_reason = arguments["reason"].strip()
            record = _record(world, call, GIVE_UP_TOOL, arguments, start, start, True, None, [])
        else:
            record = _move(world, call, arguments, game)
    recall.remember(record)
    return record


def _move(world: WorldState, call: ToolCall, arguments: JsonObject, game: Rules) -> ActionRecord:
    start = world.position
    end, success = rules.move(game.maze, start, MOVE_TOOLS[call.name])
    world.moves += 1
    if not success:
        world.failed_moves += 1
    world.position = end
    tiles, seen = observation(game.maze, end, game.vision_range)
    goal_seen = rules.goal_visible(tiles)
    if goal_seen and world.goal_first_seen_step is None:
        world.goal_first_seen_step = world.action_count
    if end == game.maze.goal and world.goal_reached_step is None:
        world.goal_reached_step = world.action_count
    if rules.goal_met(game.goal_condition, game.maze, end, tiles):
        world.goal_found = True
    error = None if success else f"cannot move {MOVE_TOOLS[call.name]}: wall at the target tile"
    record = _record(
        world, call, call.name, arguments, start, end, success, error, [t.as_list() for t in tiles], goal_seen
    )
    return _with_result(record, {**seen, "goal_found": world.goal_found})


def _recall(
    world: WorldState, call: ToolCall, arguments: JsonObject, game: Rules, recall: RecallWindow
) -> ActionRecord:
    remaining = rules.recall_moves_remaining(world.moves, world.moves_at_last_recall, game.recall_interval)
    world.recalls += 1
    pos = world.position
    if remaining:
        error = f"recall_all is cooling down: {remaining} more move(s) before it can be used again"
        return _record(world, call, RECALL_TOOL, arguments, pos, pos, False, error, [])
    world.moves_at_last_recall = world.moves
    record = _record(world, call, RECALL_TOOL, arguments, pos, pos, True, None, [])
    return _with_result(record, {"position": list(pos), "memory": recall.summary()})


def _record(
    world: WorldState,
    call: ToolCall,
    action_type: str,
    arguments: JsonObject | None,
    start: Position,
    end: Position,
    success: bool,
    error: str | None,
    tiles: list[list[int]],
    goal_seen: bool = False,
) -> ActionRecord:
    reasoning = arguments.get("reasoning") if arguments else None
    result = {"success": success, "position": list(end)}
    if error:
        result["error"] = error
    number = world.action_count  # this action's step_number: the latest of the actions counted
    return ActionRecord(
        number, action_type, call.name, arguments, reasoning, start, end, success, error, tiles, goal_seen, result
    )


def _with_result(record: ActionRecord, extra: JsonObject) -> ActionRecord:
    return ActionRecord(**{**record.__dict__, "result": {**record.result, **extra}})
