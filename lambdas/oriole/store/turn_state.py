"""A turn's loaded state and what it writes back: the one place where experiment columns meet the core.

``LoadedTurn`` is the row ``Store.load_turn`` reads, typed once. It builds what the core plays with (the
world, the rules, the recall memory and the history the model is shown) and, after the turn, produces the
rows and the experiment delta ``Store.commit_turn`` writes. ``WORLD_COUNTERS`` and ``WORLD_VALUES`` name
which experiment columns hold which part of the world, in both directions, so the mapping lives here only.
``TurnResult`` is what an agent task returns to the state machine, from a fresh turn or a committed one.

Model text is data and reaches the database only through ``LoadedTurn.write``, which makes it storable (see
``oriole.text``): a model call whose text holds a NUL or a lone surrogate is stored escaped, marked
``response.escaped``, and ``oriole.text.unescape`` gives each of its strings back exactly; the turn's actions
keep a readable copy with U+FFFD in place of such characters. The turn is kept either way.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any, ClassVar

from oriole.catalog import snapshot_value
from oriole.core import memory as memories
from oriole.core.maze import Maze, vision
from oriole.core.picture import MAP, TEXT_ONLY, Camera, Observation
from oriole.core.requests import call_record
from oriole.core.tools import INVALID_ACTION, ActionRecord, RecallWindow, Rules, WorldState, tool_specs
from oriole.core.turn_loop import (
    AgentSetup,
    Message,
    ModelCall,
    ModelResponse,
    Replay,
    TurnOutcome,
    TurnSettings,
    estimate_tokens,
    message_as_json,
    response_as_json,
)
from oriole.inputs import TaskOutput
from oriole.provider_registry import PROVIDERS
from oriole.statuses import ExperimentStatus, TurnEnd
from oriole.store.mazes import MazeRow
from oriole.text import JsonObject, escaped, replaced

# experiment column -> WorldState field: counters the commit adds this turn's increments to
WORLD_COUNTERS: dict[str, str] = {
    "action_count": "step",
    "move_count": "moves",
    "failed_move_count": "failed_moves",
    "recall_count": "recalls",
    "invalid_call_count": "invalid_calls",
}
# experiment column -> WorldState field: values the commit replaces
WORLD_VALUES: dict[str, str] = {
    "moves_at_last_recall": "moves_at_last_recall",
    "goal_found": "goal_found",
    "goal_first_seen_step": "goal_first_seen_step",
    "goal_reached_step": "goal_reached_step",
    "gave_up_reason": "gave_up_reason",
}


@dataclass(frozen=True)
class ExperimentState:
    """The experiment's columns a turn reads (``COLUMNS``, in this order), as the last committed turn left them."""

    id: int
    status: ExperimentStatus
    maze_id: int
    llm_provider: str
    model_name: str
    prompt_text: str
    config: JsonObject
    seed: int
    current_x: int
    current_y: int
    turn_count: int
    agent_state: JsonObject
    memory: JsonObject
    history_tokens: int
    input_tokens: int
    output_tokens: int
    replay_of: int | None  # a replay's scratch experiment: the experiment it replays
    action_count: int
    move_count: int
    failed_move_count: int
    recall_count: int
    invalid_call_count: int
    moves_at_last_recall: int | None
    goal_found: bool
    goal_first_seen_step: int | None
    goal_reached_step: int | None
    gave_up_reason: str | None


COLUMNS: tuple[str, ...] = tuple(field.name for field in fields(ExperimentState))
assert set(WORLD_COUNTERS) | set(WORLD_VALUES) <= set(COLUMNS), "the world's columns are read by every turn"


@dataclass(frozen=True)
class RecentAction:
    """One of the experiment's latest actions, as the history and the recall window read it."""

    step_number: int
    action_type: str
    to_x: int
    to_y: int
    success: bool
    error: str | None
    tiles_seen: list[list[int]]


@dataclass(frozen=True)
class CommittedTurn:
    """A turn row already in the database (a retried task finds it and returns it)."""

    action_count: int
    end_reason: TurnEnd
    input_tokens: int
    output_tokens: int


class TurnResult(TaskOutput):
    """What an agent task hands back to the state machine: small, never the conversation."""

    turn_number: int
    actions: int
    end_reason: TurnEnd
    goal_found: bool
    position: tuple[int, int]
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class TurnWrite:
    """Everything one turn writes, in the shapes ``Store.commit_turn`` sends as one statement."""

    turn: JsonObject
    actions: list[JsonObject]
    calls: list[JsonObject]
    experiment: JsonObject
    parts: list[JsonObject]  # what the calls' request records name by hash: {"hash", "body"}


def _json_object_of(columns: Iterable[str], alias: str) -> str:
    """SQL building a JSON object of ``alias``'s ``columns``, each under its own name."""
    return "jsonb_build_object(" + ", ".join(f"'{c}', {alias}.{c}" for c in columns) + ")"


@dataclass(frozen=True)
class LoadedTurn:
    """The experiment as one turn loads it, its recent actions, the maze (unless cached) and the turn's
    committed row (when a previous attempt already wrote it)."""

    experiment: ExperimentState
    recent_actions: list[RecentAction]
    maze_row: MazeRow | None
    committed: CommittedTurn | None
    earlier_turns: tuple[memories.StoredTurn, ...] = ()  # the newest ones, oldest first (conversation, summary)
    recorded: JsonObject | None = None  # a replay's: the original's provider and its calls of this turn

    # What ``Store.load_turn`` selects besides the experiment's columns, in ``from_values``' order: the maze's
    # row, the committed turn's, the recent actions' (each a JSON object of its dataclass's fields), earlier turns.
    MAZE_JSON: ClassVar[str] = _json_object_of((f.name for f in fields(MazeRow)), "m")
    COMMITTED_JSON: ClassVar[str] = _json_object_of((f.name for f in fields(CommittedTurn)), "t")
    ACTION_JSON: ClassVar[str] = _json_object_of((f.name for f in fields(RecentAction)), "r")

    @classmethod
    def from_values(cls, *values: Any) -> LoadedTurn:
        """The row of ``Store.load_turn`` (psycopg's ``args_row``): the experiment's ``COLUMNS``, then the maze,
        the committed turn, the recent actions, the earlier turns and a replay's recorded calls, as JSON."""
        experiment, (maze, committed, recent, earlier, recorded) = values[: len(COLUMNS)], values[len(COLUMNS) :]
        state = ExperimentState(*experiment)
        return cls(
            experiment=replace(state, status=ExperimentStatus(state.status)),
            recent_actions=[RecentAction(**action) for action in recent],
            maze_row=None if maze is None else MazeRow(**maze),
            committed=None if committed is None else CommittedTurn(**committed),
            earlier_turns=tuple(memories.StoredTurn(**turn) for turn in earlier or ()),
            recorded=recorded,
        )

    @property
    def id(self) -> int:
        return self.experiment.id

    @property
    def status(self) -> ExperimentStatus:
        return self.experiment.status

    @property
    def turn_count(self) -> int:
        return self.experiment.turn_count

    @property
    def config(self) -> JsonObject:
        return self.experiment.config

    @property
    def position(self) -> tuple[int, int]:
        return self.experiment.current_x, self.experiment.current_y

    def agent_setup(self, maze: Maze) -> AgentSetup:
        """What the experiment's provider builds this turn's agent from."""
        experiment = self.experiment
        recorded = self.recorded
        replay = (
            None if recorded is None else Replay(recorded["provider"], self.turn_count + 1, tuple(recorded["calls"]))
        )
        return AgentSetup(experiment.model_name, self.config, experiment.seed, experiment.agent_state, maze, replay)

    def world(self) -> WorldState:
        """The world as the last committed turn left it."""
        world = {field: getattr(self.experiment, column) for column, field in (WORLD_COUNTERS | WORLD_VALUES).items()}
        return WorldState(position=self.position, **world)

    def rules(self, maze: Maze) -> Rules:
        config = self.config
        return Rules(
            maze, config["visionRange"], config["goalCondition"], config["recallInterval"], config["maxRecallActions"]
        )

    def setting(self, key: str) -> Any:
        """A snapshot value (``catalog.snapshot_value``); a snapshot taken before the setting existed gets the
        catalog default."""
        return snapshot_value(self.config, key)

    def recall_window(self, game: Rules) -> RecallWindow:
        """What ``recall_all`` summarises: the last ``maxRecallActions`` actions' positions and sightings, and
        the start tile's sighting while the window reaches back to it."""
        size = self.config["maxRecallActions"]
        maze = game.maze
        start = (maze.start, [t.as_list() for t in vision(maze, maze.start, game.vision_range)])
        return RecallWindow(
            size,
            [((a.to_x, a.to_y), a.tiles_seen) for a in self.recent_actions[-size:]],
            start=start,
            actions=self.experiment.action_count,
        )

    def observation(self) -> Observation:
        """How the agent observes the maze; a baseline reads text whatever the setting (it ignores pictures)."""
        if not PROVIDERS[self.experiment.llm_provider].calls_model:
            return TEXT_ONLY
        return Observation(self.setting("observation"), self.setting("imageView"))

    def camera(self, maze: Maze) -> Camera | None:
        """What draws the turn's pictures (None without pictures); a map view starts from the map seen so far."""
        observation = self.observation()
        if not observation.pictures:
            return None
        known = self.map_memory(maze).known if observation.view == MAP else None
        return Camera(observation.view, maze, self.config["visionRange"], known)

    def keeps_map(self) -> bool:
        """Whether the experiment's memory carries the map the agent has seen: for the map compaction (historyMode
        summary) or for map pictures."""
        observation = self.observation()
        return (self.history_mode == memories.SUMMARY and self.setting("compaction") == memories.MAP) or (
            observation.pictures and observation.view == MAP
        )

    def settings(
        self, world: WorldState, deadline: Callable[[], bool] | None = None, camera: Camera | None = None
    ) -> TurnSettings:
        """The turn's budget and the agent loop's variables from the snapshot (``deadline``: see run_turn;
        ``camera``: see ``camera``)."""
        remaining = self.config["maxMoves"] - world.step
        per_turn = self.config["maxActionsPerTurn"]
        budget, reason = (per_turn, TurnEnd.ACTION_BUDGET) if per_turn < remaining else (remaining, TurnEnd.MAX_MOVES)
        return TurnSettings(
            budget=budget,
            budget_reason=reason,
            actions_left=remaining,
            circuit_breaker=self.setting("circuitBreakerThreshold"),
            repetition_limit=self.setting("repetitionThreshold"),
            tools=tool_specs(self.setting("enableGiveUp")),
            text_tool_calls=self.setting("textToolCalls"),
            deadline=deadline,
            observation=self.observation(),
            camera=camera,
        )

    @property
    def history_mode(self) -> str:
        mode: str = self.setting("historyMode")
        return mode

    def window(self) -> list[memories.StoredTurn]:
        """The earlier turns whose messages the turn carries (conversation, summary), oldest first."""
        return (
            list(self.earlier_turns[-self.setting("historyTurns") :]) if self.history_mode != memories.ACTIONS else []
        )

    def conversation(self) -> list[list[Message]]:
        return [turn.messages() for turn in self.window()]

    def summarised_turns(self) -> int:
        """How many turns are older than the window: what summary mode compacts."""
        if self.history_mode != memories.SUMMARY:
            return 0
        window: int = self.setting("historyTurns")
        return max(0, self.turn_count - window)

    def map_memory(self, maze: Maze) -> memories.MapMemory:
        """The map compaction's state, as the previous turn left it (the start's sighting on the first)."""
        state = self.experiment.memory
        known = memories.MapMemory((maze.width, maze.height), state if "map" in state else None)
        if "map" not in state:
            known.learn(maze.start, [t.as_list() for t in vision(maze, maze.start, self.config["visionRange"])])
        return known

    def to_compact(self) -> memories.StoredTurn | None:
        """For model compaction: the turn that just left the window and is not in the summary yet."""
        through = self.experiment.memory.get("through_turn", 0)
        newest_old = self.summarised_turns()
        older = [t for t in self.earlier_turns if t.number == newest_old]
        return older[0] if newest_old > through and older else None

    def compaction_record(self, summary: object) -> JsonObject | None:
        """What the summary stands for on this turn: the turns it replaced and their tokens, before and after."""
        summarised = self.summarised_turns()
        if not summarised:
            return None
        window_tokens = sum(t.message_tokens for t in self.window())
        return {
            "compaction": self.setting("compaction"),
            "turns_summarised": summarised,
            "tokens_before": max(0, self.experiment.history_tokens - window_tokens),
            "tokens_after": estimate_tokens(summary),
        }

    def history(self) -> list[JsonObject]:
        """The last ``historyActions`` actions as the model reads them in its turn context."""
        count = self.config["historyActions"]
        return [_history_entry(a) for a in self.recent_actions[-count:]] if count else []

    def result(self, turn_number: int) -> TurnResult:
        """The committed turn's result (a retried task returns it instead of playing again)."""
        assert self.committed is not None
        committed = self.committed
        return TurnResult(
            turn_number=turn_number,
            actions=committed.action_count,
            end_reason=committed.end_reason,
            goal_found=self.experiment.goal_found,
            position=self.position,
            input_tokens=committed.input_tokens,
            output_tokens=committed.output_tokens,
        )

    def write(
        self,
        outcome: TurnOutcome,
        world: WorldState,
        started_at: datetime,
        agent_state: JsonObject,
        memory: JsonObject,
        context: JsonObject | None,
        settings: Mapping[str, Any] = {},
    ) -> TurnWrite:
        """The turn's rows and the experiment's delta: counter increments (the SQL adds them; tokens and cost
        come from the turn row), the new position and values, whether the turn stalled (no valid action), the
        memory state for the next turn, and what the requests left out or summarised (``context``). Each call
        row carries its request record (``oriole.core.requests``; ``settings``: the agent's) and its answer."""
        turn = _turn_row(
            outcome,
            world,
            started_at,
            self.config.get("pricing"),
            (self.experiment.input_tokens, self.experiment.output_tokens),
        )
        turn_messages = [m for call in outcome.calls if call.kind == "turn" for m in call.new_messages]
        turn_messages += [
            Message("assistant", c.response.text, c.response.tool_calls) for c in outcome.calls if c.kind == "turn"
        ]
        turn |= {
            "closing_messages": replaced([message_as_json(m) for m in outcome.closing]),
            "message_tokens": memories.message_tokens([*turn_messages, *outcome.closing]),
            "context": context,
        }
        delta = {
            column: getattr(world, field) - getattr(self.experiment, column) for column, field in WORLD_COUNTERS.items()
        }
        delta |= {column: getattr(world, field) for column, field in WORLD_VALUES.items()}
        delta |= {
            "current_x": world.position[0],
            "current_y": world.position[1],
            "agent_state": agent_state,
            "memory": replaced(memory),
            "stalled": all(a.action_type == INVALID_ACTION for a in outcome.actions),
        }
        carried = [t.number for t in self.window()]
        calls: list[JsonObject] = []
        parts: JsonObject = {}
        for index, call in enumerate(outcome.calls, 1):
            record, named = call_record(call, settings, carried)
            calls.append(_stored_call(_call_row(index, call) | {"request": record}))
            parts |= named
        return TurnWrite(
            turn,
            [replaced(_action_row(a)) for a in outcome.actions],
            calls,
            delta,
            [{"hash": h, "body": body} for h, body in replaced(parts).items()],
        )


def _history_entry(action: RecentAction) -> JsonObject:
    entry: JsonObject = {
        "step": action.step_number,
        "action": action.action_type,
        "position": [action.to_x, action.to_y],
        "success": action.success,
    }
    if action.error:
        entry["error"] = action.error
    return entry


def cost_usd(input_tokens: int, output_tokens: int, pricing: JsonObject) -> float:
    """Dollars for the tokens at the prices captured in the snapshot, to the cent's ten-thousandth the cost
    columns keep (6 decimals)."""
    per_mtok: tuple[float, float] = (pricing["inputPerMTok"], pricing["outputPerMTok"])
    return round((input_tokens * per_mtok[0] + output_tokens * per_mtok[1]) / 1_000_000, 6)


def turn_cost(before: tuple[int, int], usage: tuple[int, int], pricing: JsonObject | None) -> float | None:
    """A turn's cost: what the experiment's tokens cost after it, less what they cost before it (``before``: the
    experiment's input and output tokens so far). Each total is rounded once, so the turns' costs add up to
    exactly the cost of the experiment's tokens (rounding each turn's own cost would drift a millionth of a
    dollar a turn). None without a price: unpriced is unknown, never $0 (the experiment's total stays NULL)."""
    if pricing is None:
        return None
    after = (before[0] + usage[0], before[1] + usage[1])
    return round(cost_usd(*after, pricing) - cost_usd(*before, pricing), 6)


def _turn_row(
    outcome: TurnOutcome,
    world: WorldState,
    started_at: datetime,
    pricing: JsonObject | None,
    tokens_before: tuple[int, int],
) -> JsonObject:
    usage = outcome.usage
    return {
        "first_step": world.step - len(outcome.actions) + 1,
        "action_count": len(outcome.actions),
        "model_calls": len(outcome.calls),
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "latency_ms": usage.latency_ms,
        "throttles": outcome.throttles,
        "cost_usd": turn_cost(tokens_before, (usage.input_tokens, usage.output_tokens), pricing),
        "end_reason": outcome.end_reason,
        "started_at": started_at,
    }


def _call_row(index: int, call: ModelCall) -> JsonObject:
    r: ModelResponse = call.response
    return {
        "call_index": index,
        "request_messages": [message_as_json(m) for m in call.new_messages],
        "response": response_as_json(r),
        "input_tokens": r.usage.input_tokens,
        "output_tokens": r.usage.output_tokens,
        "latency_ms": r.usage.latency_ms,
        "stop_reason": r.stop_reason,
        "durations": r.durations,
        "throttles": r.throttles,
        "kind": call.kind,
        "answer": None if r.raw is None else base64.b64encode(r.raw).decode(),
    }


def _stored_call(row: JsonObject) -> JsonObject:
    """The call row as stored: escaped, and marked so, when any of its text cannot be stored as it came."""
    row, altered = escaped(row)
    if altered:
        row["response"]["escaped"] = True
    return row


def _action_row(a: ActionRecord) -> JsonObject:
    return {
        "step_number": a.step_number,
        "action_type": a.action_type,
        "tool_name": a.tool_name,
        "arguments": a.arguments,
        "reasoning": a.reasoning,
        "from_x": a.from_pos[0],
        "from_y": a.from_pos[1],
        "to_x": a.to_pos[0],
        "to_y": a.to_pos[1],
        "success": a.success,
        "error": a.error,
        "tiles_seen": a.tiles_seen,
        "goal_visible": a.goal_visible,
    }
