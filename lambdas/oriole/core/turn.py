"""One turn of an experiment: the state it starts from (``TurnState``, as ``Store.load_turn`` reads it: the experiment
as the last committed turn left it, its latest actions, the earlier turns its memory may carry, a replay's recorded
calls, the turn's committed row when an earlier attempt already wrote it), and the rules that set the turn up from
it and account for it (``Turn``): the world, the game's rules, the action budget, the camera, the memory and its
window, the recall window, the context the agent reads; and what the played turn leaves (``PlayedTurn``: the memory
the next turn reads, its cost, whether it stalled).

Pure: ``oriole.lifecycle.experiments`` loads the state, builds the provider's agent from ``Turn.agent_setup``, plays
the turn and commits what ``Turn.play`` returns in one statement; the store maps its columns onto the state's
fields by name (``oriole.store.turn_rows``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

from oriole.core import prices
from oriole.core.maze import Maze, vision
from oriole.core.memory import MapMemory, MemoryMode, Remembered, StoredTurn, memory_mode
from oriole.core.picture import TEXT_ONLY, Camera, ImageView, Observation
from oriole.core.tools import INVALID_ACTION, RecallWindow, Rules, WorldState, tool_specs
from oriole.core.turn_loop import (
    Agent,
    AgentSetup,
    ModelRequest,
    ModelResponse,
    Replay,
    TurnOutcome,
    TurnSettings,
    over_budget,
    run_turn,
    turn_context,
)
from oriole.experiment_config import ExperimentConfig
from oriole.provider_registry import PROVIDERS
from oriole.statuses import ExperimentStatus, TurnEnd
from oriole.text import JsonObject

# ExperimentState field (an experiments column) -> WorldState field: counters a turn advances
WORLD_COUNTERS: dict[str, str] = {
    "action_count": "action_count",
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
    input_tokens: int  # of every call a server answered, failed attempts' included
    output_tokens: int
    failed_input_tokens: int  # of the calls answered in failed attempts
    failed_output_tokens: int
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

    @property
    def agent_tokens(self) -> int:
        """The tokens the committed turns' calls used: what the token budget (``maxTotalTokens``) counts."""
        spent = self.input_tokens + self.output_tokens
        return spent - self.failed_input_tokens - self.failed_output_tokens

    def world(self) -> WorldState:
        """The world as the last committed turn left it."""
        values = {field: getattr(self, column) for column, field in (WORLD_COUNTERS | WORLD_VALUES).items()}
        return WorldState(position=self.position, **values)


class RecentAction(NamedTuple):
    """One of the experiment's latest actions, as the turn context and the recall window read it. A named tuple:
    every turn loads up to 50 of them (``LoadedTurn``), each made at once from the JSON array the load sends."""

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
    """Everything one turn starts from: the experiment, its recent actions (oldest first, as many as its
    historyActions and recall window read), the earlier turns (the newest ones, oldest first: only for a memory
    mode that carries them), what a replay answers from, and the turn's committed row (when a previous attempt
    already wrote it)."""

    experiment: ExperimentState
    recent_actions: tuple[RecentAction, ...]
    committed: CommittedTurn | None = None
    earlier_turns: tuple[StoredTurn, ...] = ()
    replay: Replay | None = None


@dataclass(frozen=True)
class PlayedTurn:
    """What a played turn leaves for the commit: its outcome (a compaction call first), the world after it, the
    agent's state and settings, the memory the next turn reads, what its requests left out or summarised
    (``context``), the earlier turns its memory could carry (their numbers, oldest first), its cost in USD (0
    without a price) and whether it stalled (no valid action)."""

    outcome: TurnOutcome
    world: WorldState
    agent_state: JsonObject
    agent_settings: JsonObject
    memory: JsonObject
    context: JsonObject | None
    carried: tuple[int, ...]
    cost_usd: float | None  # None: the model has no price (unpriced)
    stalled: bool


@dataclass(frozen=True)
class AnsweredCall:
    """A model call the server answered during the turn (``kind``: ``turn``, or ``compaction`` for a memory's
    summary call), kept as it returns: the server billed it whether or not the turn is ever committed."""

    kind: str
    response: ModelResponse


class _Answering:
    """The agent as the turn asks it: every answer it returns is appended to ``answered`` before the turn goes on,
    so that a turn that fails after some calls still knows what the server answered (``Turn.answered``)."""

    def __init__(self, agent: Agent, answered: list[AnsweredCall], kind: str):
        self.agent, self.answered, self.kind = agent, answered, kind
        self.context_budget = agent.context_budget

    @property
    def settings(self) -> JsonObject:
        return self.agent.settings

    def respond(self, request: ModelRequest) -> ModelResponse:
        response = self.agent.respond(request)
        self.answered.append(AnsweredCall(self.kind, response))
        return response


class Turn:
    """One turn of an experiment, from its loaded state (``state``) in its maze. ``deadline`` says whether another
    model request would still fit in the task's time (see ``run_turn``). ``answered`` lists the model calls the
    server answered so far, in order, whether the turn is played to its end or fails part way (its caller records
    them as a failed attempt's: ``oriole.lifecycle.experiments.play_turn``)."""

    def __init__(self, state: TurnState, maze: Maze, deadline: Callable[[], bool] | None = None):
        experiment = state.experiment
        self.state, self.maze, self.config, self.deadline = state, maze, experiment.config, deadline
        self.answered: list[AnsweredCall] = []
        self.world = experiment.world()
        self.rules = Rules(
            maze,
            self.config.vision_range,
            self.config.goal_condition,
            self.config.recall_interval,
            self.config.max_recall_actions,
        )
        self.memory: MemoryMode = memory_mode(self.config.history_mode)(
            Remembered(
                experiment.turn_count,
                state.earlier_turns,
                experiment.memory,
                experiment.history_tokens,
                self.config.history_turns,
                self.config.compaction,
            )
        )
        self.observation = (
            Observation(self.config.observation, self.config.image_view, self.config.text_view)
            if PROVIDERS[experiment.llm_provider].calls_model
            else TEXT_ONLY  # a baseline reads text whatever the setting (it ignores pictures)
        )

    @property
    def agent_setup(self) -> AgentSetup:
        """What the experiment's provider builds this turn's agent from."""
        experiment = self.state.experiment
        return AgentSetup(
            experiment.model_name, self.config, experiment.seed, experiment.agent_state, self.maze, self.state.replay
        )

    def play(self, agent: Agent) -> PlayedTurn:
        """Recollect (memory's summary, maybe a compaction call), play the turn with ``agent`` and say what it
        leaves. The world (``self.world``) is advanced in place."""
        known = self._kept_map() if self._keeps_map() else None
        recollection = self.memory.recollect(_Answering(agent, self.answered, "compaction"), known, self.world.position)
        context = turn_context(self.world, self.rules, self.recent_actions(), self.config.max_actions)
        if recollection.summary is not None:
            context["memory_summary"] = recollection.summary
        if self.config.map_aid and known is not None:  # the planning aid, named for what it is (not a memory)
            context["map_aid"] = known.summary(self.world.position)
        carried = self.memory.carried()
        settings = self.settings(sum(c.response.usage.tokens for c in recollection.calls))  # from before the turn
        if settings.tokens_left is not None:
            context["tokens_left"] = settings.tokens_left
        outcome = run_turn(
            _Answering(agent, self.answered, "turn"),
            self.state.experiment.prompt_text,
            self.world,
            self.rules,
            self.recall_window(),
            context,
            settings,
            [turn.messages() for turn in carried],
        )
        outcome = replace(outcome, calls=[*recollection.calls, *outcome.calls])
        record = {**(outcome.trim.as_json() if outcome.trim else {}), **(recollection.record or {})}
        if over := over_budget(outcome.calls, agent.context_budget):
            record["over_budget"] = over
        experiment = self.state.experiment
        usage = outcome.usage
        return PlayedTurn(
            outcome=outcome,
            world=self.world,
            agent_state=getattr(agent, "state", {}),
            agent_settings=agent.settings,
            memory=self._next_memory(known, outcome) | self.memory.remember(recollection),
            context=record or None,
            carried=tuple(turn.number for turn in carried),
            cost_usd=prices.turn_cost(
                (experiment.input_tokens, experiment.output_tokens),
                (usage.input_tokens, usage.output_tokens),
                self.config.pricing,
            ),
            stalled=all(action.action_type == INVALID_ACTION for action in outcome.actions),
        )

    def settings(self, recollected: int = 0) -> TurnSettings:
        """The turn's action budget (the per-turn budget, or what the experiment has left), the tokens the
        experiment's token budget leaves (``recollected``: what the turn's compaction calls used already; None
        without a budget) and the agent loop's variables from the snapshot."""
        config = self.config
        tokens_left = (
            config.max_total_tokens - self.state.experiment.agent_tokens - recollected
            if config.max_total_tokens
            else None
        )
        remaining = config.max_actions - self.world.action_count
        per_turn = config.max_actions_per_turn
        budget, reason = (per_turn, TurnEnd.ACTION_BUDGET) if per_turn < remaining else (remaining, TurnEnd.MAX_MOVES)
        return TurnSettings(
            budget=budget,
            budget_reason=reason,
            actions_left=remaining,
            tokens_left=tokens_left,
            circuit_breaker=config.circuit_breaker_threshold,
            repetition_limit=config.repetition_threshold,
            tools=tool_specs(config.enable_give_up),
            text_tool_calls=config.text_tool_calls,
            deadline=self.deadline,
            observation=self.observation,
            camera=self.camera(),
            mapped=self._kept_map().known if self.observation.map_text else None,
        )

    def camera(self) -> Camera | None:
        """What draws the turn's pictures (None without pictures); a map view starts from the map seen so far."""
        if not self.observation.pictures:
            return None
        known = self._kept_map().known if self.observation.view == ImageView.MAP else None
        return Camera(self.observation.view, self.maze, self.config.vision_range, known)

    def recent_actions(self) -> list[JsonObject]:
        """The last ``historyActions`` actions as the model reads them in its turn context."""
        count = self.config.history_actions
        return [_recent_action(a) for a in self.state.recent_actions[-count:]] if count else []

    def recall_window(self) -> RecallWindow:
        """What ``recall_all`` summarises: the last ``maxRecallActions`` actions' positions and sightings, and the
        start tile's sighting while the window reaches back to it."""
        size = self.config.max_recall_actions
        start = self.maze.start
        return RecallWindow(
            size,
            [((a.to_x, a.to_y), a.tiles_seen) for a in self.state.recent_actions[-size:]],
            start=(start, [t.as_list() for t in vision(self.maze, start, self.rules.vision_range)]),
            actions=self.state.experiment.action_count,
        )

    def _keeps_map(self) -> bool:
        """Whether the experiment's memory carries the map the agent has seen: for the map aid, for its memory mode
        (the retired map compaction), for map pictures or for the text map view."""
        return (
            self.config.map_aid
            or self.memory.keeps_map
            or (self.observation.pictures and self.observation.view == ImageView.MAP)
            or self.observation.map_text
        )

    def _kept_map(self) -> MapMemory:
        return MapMemory.kept(self.maze, self.state.experiment.memory, self.config.vision_range)

    def _next_memory(self, known: MapMemory | None, outcome: TurnOutcome) -> JsonObject:
        """The known map with this turn's sightings, when the experiment keeps it; nothing otherwise."""
        if known is None:
            return {}
        for action in outcome.actions:
            known.learn(action.to_pos, action.tiles_seen)
        return known.state()


def _recent_action(action: RecentAction) -> JsonObject:
    entry: JsonObject = {
        "step": action.step_number,
        "action": action.action_type,
        "position": [action.to_x, action.to_y],
        "success": action.success,
    }
    if action.error:
        entry["error"] = action.error
    return entry
