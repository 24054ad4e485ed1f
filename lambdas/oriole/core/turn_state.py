"""What a turn starts from, as ``Store.load_turn`` reads it: the experiment as the last committed turn left it, its
latest actions, the earlier turns its memory may carry, a replay's recorded calls, and the turn's committed row when
an earlier attempt already wrote it. Plain data; the rules that set a turn up from it are
``oriole.core.turn_setup``'s, and the store maps its columns onto these fields by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from oriole.core.memory import StoredTurn
from oriole.core.tools import WorldState
from oriole.core.turn_loop import Replay
from oriole.experiment_config import ExperimentConfig
from oriole.statuses import ExperimentStatus, TurnEnd
from oriole.text import JsonObject

# ExperimentState field (an experiments column) -> WorldState field: counters a turn advances
WORLD_COUNTERS: dict[str, str] = {
    "action_count": "step",
    "move_count": "moves",
    "failed_move_count": "failed_moves",
    "recall_count": "recalls",
    "invalid_call_count": "invalid_calls",
}
# ExperimentState field (an experiments column) -> WorldState field: values a turn replaces
WORLD_VALUES: dict[str, str] = {
    "moves_at_last_recall": "moves_at_last_recall",
    "goal_found": "goal_found",
    "goal_first_seen_step": "goal_first_seen_step",
    "goal_reached_step": "goal_reached_step",
    "gave_up_reason": "gave_up_reason",
}


@dataclass(frozen=True)
class ExperimentState:
    """The experiment's columns a turn reads (in this order), as the last committed turn left them."""

    id: int
    status: ExperimentStatus
    maze_id: int
    llm_provider: str
    model_name: str
    prompt_text: str
    config: ExperimentConfig
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

    @property
    def position(self) -> tuple[int, int]:
        return self.current_x, self.current_y

    def world(self) -> WorldState:
        """The world as the last committed turn left it."""
        values = {field: getattr(self, column) for column, field in (WORLD_COUNTERS | WORLD_VALUES).items()}
        return WorldState(position=self.position, **values)


@dataclass(frozen=True)
class RecentAction:
    """One of the experiment's latest actions, as the turn context and the recall window read it."""

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


@dataclass(frozen=True)
class TurnState:
    """Everything one turn starts from: the experiment, its recent actions (oldest first, as many as its history and
    recall window read), the earlier turns (the newest ones, oldest first: only for a memory mode that carries
    them), what a replay answers from, and the turn's committed row (when a previous attempt already wrote it)."""

    experiment: ExperimentState
    recent_actions: tuple[RecentAction, ...]
    committed: CommittedTurn | None = None
    earlier_turns: tuple[StoredTurn, ...] = ()
    replay: Replay | None = None
