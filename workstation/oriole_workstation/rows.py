"""What the workstation's reads (``results.Results``) return: one frozen dataclass per query, its fields the
query's columns in the query's order, so ``dataclasses.asdict`` gives what ``--json`` and ``--format csv``
print. psycopg builds them (``class_row``): a column the type does not name, or a field the query does not
return, fails at the read, not three calls later.

The statuses and endings the workstation compares are the runtime's (``oriole.statuses``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from oriole.statuses import Ending, ExperimentStatus

Json = Any  # a jsonb value as psycopg loads it (dict, list, str, number, bool or None)


def agent_name(label: str | None, provider: str, model: str) -> str:
    """How tables, pages and figures name an agent: its sweep file's label (experiments.agent_label), else
    ``provider/model``."""
    return label or f"{provider}/{model}"


@dataclass(frozen=True)
class ExperimentSummary:
    """One experiment's outcome as the CLI reports it (``Results.summary``)."""

    experiment_id: int
    status: str
    ending: str | None
    goal_found: bool
    actions: int
    turns: int
    moves: int
    failed_moves: int
    current_x: int
    current_y: int
    failure_reason: str | None
    llm_provider: str
    model_name: str
    goal_first_seen_step: int | None
    goal_reached_step: int | None
    maze: str
    shortest_path_length: int
    optimal_path_length: int
    path_length: int
    path_efficiency: float | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: unpriced
    failed_attempts: int  # attempts of its turns that failed after the server answered calls (retried or not)
    failed_tokens: int  # the tokens those calls used, within input_tokens and output_tokens
    failed_cost_usd: float | None  # what they cost, within cost_usd; None: unpriced
    duration_seconds: float
    completed: bool
    execution_arns: list[str]

    @property
    def running(self) -> bool:
        return self.status == ExperimentStatus.RUNNING

    @property
    def errored(self) -> bool:
        """Ended on an error (infrastructure or provider), not on the agent's merits."""
        return self.ending == Ending.ERROR


class Grouped(Protocol):
    """What puts a comparison row or a compared experiment in a series (an agent with its prompt and the
    configuration that sets its group apart) and in a panel (its maze family and size, or its maze)."""

    @property
    def llm_provider(self) -> str: ...
    @property
    def model_name(self) -> str: ...
    @property
    def agent_label(self) -> str | None: ...
    @property
    def prompt_version(self) -> str: ...
    @property
    def prompt_hash(self) -> str: ...
    @property
    def maze_family(self) -> str: ...
    @property
    def maze_size(self) -> str: ...
    @property
    def maze(self) -> str | None: ...
    @property
    def compared(self) -> dict[str, Json]: ...


@dataclass(frozen=True)
class StepRow:
    """One step of a group's success-by-step curve (``success_by_step``, migrations/views/success_by_step.sql): the
    Kaplan-Meier share of runs that reached the goal within ``step`` actions, censored runs censored."""

    llm_provider: str
    model_name: str
    agent_label: str | None
    prompt_version: str
    prompt_hash: str
    maze_family: str
    maze_size: str
    maze: str | None  # by maze only
    config: dict[str, Json]
    step: int
    at_risk: int
    successes: int
    censored: int
    success_share: Decimal

    @property
    def compared(self) -> dict[str, Json]:
        return self.config


@dataclass(frozen=True)
class PairedRow:
    """Two groups compared over the runs they share (``paired_comparison``, migrations/views/paired_comparison.sql):
    the same maze and seed, both decided."""

    maze_family: str
    maze_size: str
    maze: str | None  # by maze only
    a_llm_provider: str
    a_model_name: str
    a_agent_label: str | None
    a_prompt_version: str
    a_prompt_hash: str
    a_config: dict[str, Json]
    b_llm_provider: str
    b_model_name: str
    b_agent_label: str | None
    b_prompt_version: str
    b_prompt_hash: str
    b_config: dict[str, Json]
    pairs: int
    mazes: int
    both_succeeded: int
    only_a: int
    only_b: int
    neither: int
    a_success_rate: Decimal
    b_success_rate: Decimal
    difference: Decimal
    mcnemar_p: float  # unrounded (double precision): only a display rounds
    holm_p: float
    per_maze: list[list[int]]


@dataclass(frozen=True)
class ComparisonRow:
    """One group of ``compare_experiments`` (migrations/views/compare_experiments.sql; its columns are described
    in ``agent_comparison``'s comments)."""

    llm_provider: str
    model_name: str
    agent_label: str | None
    prompt_version: str
    prompt_hash: str
    maze_family: str
    maze_size: str
    maze: str | None  # by maze only
    mazes: int
    few_mazes: bool
    config: dict[str, Json]
    all_runs: int
    runs: int
    successes: int
    agent_failures: int
    censored: int
    errors: int
    running: int
    superseded: int
    success_rate: Decimal | None
    success_rate_low: Decimal | None
    success_rate_high: Decimal | None
    success_rate_all: Decimal | None
    success_rate_all_low: Decimal | None
    success_rate_all_high: Decimal | None
    undecided_share: Decimal | None
    many_undecided: bool | None
    median_actions_to_goal: Decimal | None
    median_path_length: Decimal | None
    median_path_efficiency: Decimal | None
    spl: Decimal | None  # over the decided runs
    spl_all: Decimal | None  # over all runs that ended (censored and errored ones score 0)
    tokens: Decimal | None
    tokens_per_run: Decimal | None
    tokens_per_success: Decimal | None
    cost_usd: Decimal | None
    unpriced_runs: int
    cost_per_run: Decimal | None
    cost_per_success: Decimal | None
    mean_latency_ms: Decimal | None

    @property
    def compared(self) -> dict[str, Json]:
        return self.config

    @property
    def maze_band(self) -> tuple[float, float] | None:
        """The bootstrap interval over mazes of the decided rate, where the report computed one (``GroupRow``)."""
        return None


@dataclass(frozen=True)
class ComparedExperiment:
    """An experiment the comparison counts: its ``experiment_results`` row
    (migrations/views/experiment_results.sql), the configuration that sets its comparison group apart, its
    maze's size in tiles and the code that started it."""

    experiment_id: int
    llm_provider: str
    model_name: str
    agent_label: str | None
    prompt_version: str
    prompt_hash: str
    maze_id: int
    maze: str
    maze_family: str
    shortest_path_length: int
    status: str
    ending: str | None
    ending_cause: str | None
    goal_found: bool
    goal_first_seen_step: int | None
    goal_reached_step: int | None
    actions: int
    moves: int
    failed_moves: int
    recalls: int
    invalid_calls: int
    turns: int
    unique_tiles_visited: int
    revisits: int
    path_length: int
    optimal_path_length: int
    path_efficiency: Decimal | None
    spl: Decimal | None
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None  # None: unpriced
    started_at: datetime
    last_action_at: datetime | None
    completed_at: datetime | None
    duration_seconds: float | None
    model_calls: int
    mean_latency_ms: Decimal | None
    varied_config: dict[str, Json]
    config: dict[str, Json]
    seed: int | None
    agent_id: str | None
    comment: str | None
    tags: list[str]
    sweep_id: str | None
    failure_reason: str | None
    maze_size: str
    maze_hash: str
    compared_config: dict[str, Json]
    counted: bool  # the attempt its repetition counts as (comparison_scope)
    maze_tiles: int
    code_version: str | None
    # the code in detail (migration 0029; None before it): the commit, its uncommitted changes, the runtime's hash,
    # and the harness version with its hash (oriole.code_identity, oriole.core.harness)
    code_commit: str | None = None
    code_dirty: bool | None = None
    code_hash: str | None = None
    harness_version: str | None = None
    harness_hash: str | None = None
    # the model build its server reported at the start (migration 0034; None: not asked, or before it)
    model_build: str | None = None
    reported_model: str | None = None
    server_software: str | None = None
    server_version: str | None = None
    model_parameter_size: str | None = None
    model_quantization: str | None = None
    inference_profile: str | None = None
    # what its failed attempts spent (migration 0027), in its tokens and cost too; failed_cost_usd None: unpriced
    failed_attempts: int = 0
    failed_model_calls: int = 0
    failed_input_tokens: int = 0
    failed_output_tokens: int = 0
    failed_cost_usd: Decimal | None = None

    @property
    def compared(self) -> dict[str, Json]:
        return self.compared_config

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class StatusRow:
    """One row of ``experiment_status`` (migrations/views/experiment_status.sql): live progress."""

    experiment_id: int
    llm_provider: str
    model_name: str
    agent_label: str | None
    maze: str
    status: str
    ending: str | None
    ending_cause: str | None
    turn: int
    actions: int
    max_actions: int | None
    progress_percent: Decimal | None
    goal_found: bool
    started_at: datetime
    last_action_at: datetime | None
    completed_at: datetime | None
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None  # None: unpriced
    stale_after_minutes: float | None
    stale: bool | None
    agent_id: str | None
    sweep_id: str | None
    failure_reason: str | None

    @property
    def running(self) -> bool:
        return self.status == ExperimentStatus.RUNNING

    @property
    def agent(self) -> str:
        return agent_name(self.agent_label, self.llm_provider, self.model_name)


@dataclass(frozen=True)
class ExperimentRun:
    """An experiment with its maze, each turn's model text by turn number and its actions in order (dicts: step,
    turn, action, from, to, success, error, reasoning, tiles_seen; from the database a stream, read once, whose
    tiles_seen holds only the tiles first seen at each action): what a picture or a replay of the run shows
    (``Results.experiment_run``)."""

    experiment_id: int
    llm_provider: str
    model_name: str
    prompt_version: str
    status: str
    goal_found: bool
    goal_first_seen_step: int | None
    goal_reached_step: int | None
    failure_reason: str | None
    vision_range: int | None
    maze: str
    grid: list[list[int]]
    start_x: int
    start_y: int
    goal_x: int
    goal_y: int
    shortest_path_length: int
    optimal_path_length: int
    model_text: dict[str, str]
    actions: Iterable[Mapping[str, Any]] = ()


@dataclass(frozen=True)
class OverBudget:
    """An experiment's model calls whose prompt the server counted over the context budget."""

    experiment_id: int
    calls: int


@dataclass(frozen=True)
class MazeCount:
    """Per family and size: how many mazes the database holds, by source, with the first few names."""

    family: str
    width: int
    height: int
    mazes: int
    shipped: int
    generated: int
    imported: int
    names: list[str]


@dataclass(frozen=True)
class ColumnDescription:
    """A column of an exported table and its COMMENT ON COLUMN (None without one)."""

    name: str
    description: str | None


@dataclass(frozen=True)
class SweepPlan:
    """A sweep's latest plan as PlanSweep recorded it (``sweeps``, migration 0016)."""

    id: str
    planned: int
    spend_limit_usd: Decimal | None
    seed_from: str | None
    first_planned_at: datetime
    planned_at: datetime


@dataclass(frozen=True)
class ListedExperiment:
    """One experiment as the viewer's lists show it (``Results.listing``); ``total`` counts every match."""

    experiment_id: int
    agent: str
    llm_provider: str
    model_name: str
    maze: str
    maze_family: str
    maze_size: str
    status: str
    ending: str | None
    actions: int
    path_efficiency: Decimal | None
    tokens: int
    cost_usd: Decimal
    started_at: datetime
    completed_at: datetime | None
    sweep_id: str | None
    failure_reason: str | None
    total: int


@dataclass(frozen=True)
class SweepRow:
    """A sweep as the viewer lists it: its plan where PlanSweep recorded one, and its experiments (by their
    ``sweep:ID`` tag) counted (``Results.sweeps``)."""

    id: str
    planned: int | None
    experiments: int
    running: int
    successes: int
    errors: int
    agents: int
    mazes: int
    first_started: datetime | None
    last_activity: datetime | None
    tokens: int
    cost_usd: Decimal


@dataclass(frozen=True)
class ExperimentDetail:
    """Everything an experiment's page says about where it came from (``Results.detail``)."""

    experiment_id: int
    agent: str
    llm_provider: str
    model_name: str
    prompt_version: str
    prompt_hash: str
    status: str
    ending: str | None
    failure_reason: str | None
    goal_found: bool
    seed: int | None
    code_version: str | None
    config: dict[str, Json]
    agent_id: str | None
    comment: str | None
    sweep_id: str | None
    started_at: datetime
    completed_at: datetime | None
    execution_arns: list[str]
    maze: str
    maze_family: str
    maze_size: str
    maze_hash: str
    maze_source: str
    maze_generator: str | None
    maze_seed: int | None
    shortest_path_length: int
    actions: int
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal


@dataclass(frozen=True)
class ListingChoices:
    """What the viewer's filters offer (``Results.listing_choices``): the values the results hold."""

    agents: list[str] | None
    models: list[str] | None
    families: list[str] | None
    mazes: list[str] | None
    tags: list[str] | None
    sweeps: list[str] | None


@dataclass(frozen=True)
class Neighbours:
    """The experiments before and after one (``Results.neighbours``)."""

    previous: int | None
    next: int | None
