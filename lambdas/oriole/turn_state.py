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

from dataclasses import dataclass
from datetime import datetime

from oriole.maze import Maze
from oriole.text import escaped, replaced
from oriole.tools import INVALID_ACTION, ActionRecord, Memory, Rules, WorldState
from oriole.turn_loop import ModelCall, TurnOutcome, message_as_json

# experiment column -> WorldState field: counters the commit adds this turn's increments to
WORLD_COUNTERS: dict[str, str] = {"action_count": "step", "move_count": "moves",
                                  "failed_move_count": "failed_moves", "recall_count": "recalls",
                                  "invalid_call_count": "invalid_calls"}
# experiment column -> WorldState field: values the commit replaces
WORLD_VALUES: dict[str, str] = {"moves_at_last_recall": "moves_at_last_recall", "goal_found": "goal_found",
                                "goal_first_seen_step": "goal_first_seen_step",
                                "goal_reached_step": "goal_reached_step"}
# every experiment column a turn reads
COLUMNS: tuple[str, ...] = ("id", "status", "maze_id", "llm_provider", "model_name", "prompt_text", "config",
                            "seed", "current_x", "current_y", "turn_count", "agent_state",
                            *WORLD_COUNTERS, *WORLD_VALUES)


@dataclass(frozen=True)
class CommittedTurn:
    """A turn row already in the database (a retried task finds it and returns it)."""

    action_count: int
    end_reason: str
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class TurnResult:
    """What an agent task hands back to the state machine: small, never the conversation."""

    turn_number: int
    actions: int
    end_reason: str
    goal_found: bool
    position: tuple[int, int]
    input_tokens: int
    output_tokens: int

    def as_state(self) -> dict:
        return {"turnNumber": self.turn_number, "actions": self.actions, "endReason": self.end_reason,
                "goalFound": self.goal_found, "position": list(self.position),
                "inputTokens": self.input_tokens, "outputTokens": self.output_tokens}


@dataclass(frozen=True)
class TurnWrite:
    """Everything one turn writes, in the shapes ``Store.commit_turn`` sends as one statement."""

    turn: dict
    actions: list[dict]
    calls: list[dict]
    experiment: dict


@dataclass(frozen=True)
class LoadedTurn:
    """The experiment as one turn loads it, its recent actions, the maze (unless cached) and the turn's
    committed row (when a previous attempt already wrote it)."""

    experiment: dict
    recent_actions: list[dict]
    maze_row: dict | None
    committed: CommittedTurn | None

    @classmethod
    def from_row(cls, row: dict) -> LoadedTurn:
        committed = row["committed_turn"]
        return cls(
            experiment={column: row[column] for column in COLUMNS},
            recent_actions=row["recent_actions"],
            maze_row=row["maze"],
            committed=CommittedTurn(**{k: committed[k] for k in CommittedTurn.__dataclass_fields__})
            if committed else None,
        )

    @property
    def id(self) -> int:
        return self.experiment["id"]

    @property
    def status(self) -> str:
        return self.experiment["status"]

    @property
    def turn_count(self) -> int:
        return self.experiment["turn_count"]

    @property
    def config(self) -> dict:
        return self.experiment["config"]

    @property
    def position(self) -> tuple[int, int]:
        return self.experiment["current_x"], self.experiment["current_y"]

    def world(self) -> WorldState:
        """The world as the last committed turn left it."""
        fields = {field: self.experiment[column] for column, field in (WORLD_COUNTERS | WORLD_VALUES).items()}
        return WorldState(position=self.position, **fields)

    def rules(self, maze: Maze) -> Rules:
        config = self.config
        return Rules(maze, config["visionRange"], config["goalCondition"], config["recallInterval"],
                     config["maxRecallActions"])

    def memory(self) -> Memory:
        """What ``recall_all`` summarises: the last ``maxRecallActions`` actions' positions and sightings."""
        size = self.config["maxRecallActions"]
        return Memory(size, [((a["to_x"], a["to_y"]), a["tiles_seen"]) for a in self.recent_actions[-size:]])

    def history(self) -> list[dict]:
        """The last ``historyActions`` actions as the model reads them in its turn context."""
        count = self.config["historyActions"]
        return [_history_entry(a) for a in self.recent_actions[-count:]] if count else []

    def result(self, turn_number: int) -> TurnResult:
        """The committed turn's result (a retried task returns it instead of playing again)."""
        assert self.committed is not None
        return TurnResult(turn_number, self.committed.action_count, self.committed.end_reason,
                          self.experiment["goal_found"], self.position, self.committed.input_tokens,
                          self.committed.output_tokens)

    def write(self, outcome: TurnOutcome, world: WorldState, started_at: datetime, agent_state: dict) -> TurnWrite:
        """The turn's rows and the experiment's delta: counter increments (the SQL adds them; tokens and cost
        come from the turn row), the new position and values, and whether the turn stalled (no valid action)."""
        turn = _turn_row(outcome, world, started_at, self.config.get("pricing"))
        delta = {column: getattr(world, field) - self.experiment[column] for column, field in WORLD_COUNTERS.items()}
        delta |= {column: getattr(world, field) for column, field in WORLD_VALUES.items()}
        delta |= {"current_x": world.position[0], "current_y": world.position[1], "agent_state": agent_state,
                  "stalled": all(a.action_type == INVALID_ACTION for a in outcome.actions)}
        return TurnWrite(turn, [replaced(_action_row(a)) for a in outcome.actions],
                         [_stored_call(_call_row(i, call)) for i, call in enumerate(outcome.calls, 1)], delta)


def _history_entry(action: dict) -> dict:
    entry = {"step": action["step_number"], "action": action["action_type"],
             "position": [action["to_x"], action["to_y"]], "success": action["success"]}
    if action["error"]:
        entry["error"] = action["error"]
    return entry


def cost_usd(input_tokens: int, output_tokens: int, pricing: dict | None) -> float:
    """Dollars for the tokens at the prices captured in the snapshot (0 without a pricing entry)."""
    if not pricing:
        return 0.0
    return (input_tokens * pricing["inputPerMTok"] + output_tokens * pricing["outputPerMTok"]) / 1_000_000


def _turn_row(outcome: TurnOutcome, world: WorldState, started_at: datetime, pricing: dict | None) -> dict:
    usage = outcome.usage
    return {"first_step": world.step - len(outcome.actions) + 1, "action_count": len(outcome.actions),
            "model_calls": len(outcome.calls), "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens, "latency_ms": usage.latency_ms, "throttles": outcome.throttles,
            "cost_usd": round(cost_usd(usage.input_tokens, usage.output_tokens, pricing), 6),
            "end_reason": outcome.end_reason, "started_at": started_at}


def _call_row(index: int, call: ModelCall) -> dict:
    r = call.response
    return {"call_index": index, "request_messages": [message_as_json(m) for m in call.new_messages],
            "response": {"text": r.text, "thinking": r.thinking,
                         "tool_calls": [{"id": c.call_id, "name": c.name, "arguments": c.arguments}
                                        for c in r.tool_calls]},
            "input_tokens": r.usage.input_tokens, "output_tokens": r.usage.output_tokens,
            "latency_ms": r.usage.latency_ms, "stop_reason": r.stop_reason, "durations": r.durations,
            "throttles": r.throttles}


def _stored_call(row: dict) -> dict:
    """The call row as stored: escaped, and marked so, when any of its text cannot be stored as it came."""
    row, altered = escaped(row)
    if altered:
        row["response"]["escaped"] = True
    return row


def _action_row(a: ActionRecord) -> dict:
    return {"step_number": a.step_number, "action_type": a.action_type, "tool_name": a.tool_name,
            "arguments": a.arguments, "reasoning": a.reasoning, "from_x": a.from_pos[0], "from_y": a.from_pos[1],
            "to_x": a.to_pos[0], "to_y": a.to_pos[1], "success": a.success, "error": a.error,
            "tiles_seen": a.tiles_seen, "goal_visible": a.goal_visible}
