"""An experiment's configuration snapshot (``experiments.config``) as a frozen, typed model: how runtime code reads a
setting (``config.max_actions``), never by its string key.

StartExperiment writes the snapshot (``oriole.config.resolve``: the catalog's values, Parameter Store's, the
execution input's overrides, and the price it captured); that JSON is stored as it is, and this model only reads
it. There is one field per catalog key read at start, under the key's snake_case name (the camelCase key is its
alias; ``maxMoves`` is read as ``max_actions``, the name of what it caps: docs/reference/glossary.md), typed as the
catalog declares it (``tests/unit/test_experiment_config.py`` holds the two together); a new catalog key needs its
field here. A snapshot taken before a key existed reads it as the catalog's default, so
experiments started by older code still run (``ExperimentConfig.of``); keys the catalog no longer has are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from oriole.catalog import CATALOG
from oriole.text import JsonObject

_READ = ConfigDict(frozen=True, alias_generator=to_camel, validate_by_name=True, validate_by_alias=True)


class SnapshotPrice(BaseModel):
    """The price the experiment is charged at (USD per million tokens), as StartExperiment captured it."""

    model_config = _READ

    input_per_mtok: float = Field(alias="inputPerMTok")
    output_per_mtok: float = Field(alias="outputPerMTok")
    source: str | None = None


class ExperimentConfig(BaseModel):
    """The configuration one experiment runs under, read from its snapshot (see the catalog for each setting)."""

    model_config = ConfigDict(**_READ, extra="ignore")

    # experiments/
    max_actions: int = Field(alias="maxMoves")  # every action counts, not only moves: the key keeps its stored name
    max_total_tokens: int
    max_duration_minutes: float
    max_input_tokens: int
    max_cost_usd: float
    max_actions_per_turn: int
    max_turns_per_execution: int
    max_stalled_turns: int
    recall_interval: int
    max_recall_actions: int
    history_actions: int
    seed: int
    stale_after_minutes: float
    # agent/
    history_mode: str
    history_turns: int
    compaction: str
    map_aid: bool
    context_tokens: int
    circuit_breaker_threshold: int
    repetition_threshold: int
    enable_give_up: bool
    text_tool_calls: bool
    observation: str
    image_view: str
    text_view: str
    # gameplay/
    vision_range: int
    goal_condition: str
    # the model providers'
    endpoint: str
    num_ctx: int
    num_predict: int
    temperature: float
    repeat_penalty: float
    request_timeout_seconds: float
    max_tokens: int
    top_p: float
    base_url: str
    max_output_tokens: int
    max_tokens_field: str
    send_seed: bool
    parallel_tool_calls: bool
    # captured at start, not a parameter: None for an unpriced model (a baseline's is free)
    pricing: SnapshotPrice | None = None

    @classmethod
    def of(cls, snapshot: Mapping[str, Any]) -> ExperimentConfig:
        """The model of a stored snapshot; a key it lacks (taken before the key existed) has its catalog default."""
        return cls.model_validate({**DEFAULTS, **snapshot})


DEFAULTS: JsonObject = {p.key: p.default for p in CATALOG if p.overridable}
