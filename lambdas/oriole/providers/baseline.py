"""The baselines as a provider: deterministic agents that need no model (``oriole.core.baselines``), played through
the same turn loop, tools and storage as a model."""

from __future__ import annotations

from collections.abc import Sequence

from oriole.core.baselines import Baseline, make_baseline
from oriole.core.requests import request_json
from oriole.core.turn_loop import AgentSetup, ModelRequest, ModelResponse
from oriole.experiment_config import ExperimentConfig
from oriole.providers.contract import NotRecorded
from oriole.providers.identity import ModelIdentity
from oriole.text import JsonObject


def agent(setup: AgentSetup, api_key: str | None = None) -> Baseline:
    """The baseline ``setup.model`` names, with the state it kept at the end of its previous turn (the oracle with
    the experiment's goal condition and vision range)."""
    config = setup.config
    return make_baseline(
        setup.model,
        setup.maze,
        setup.seed,
        setup.state,
        goal_condition=config.goal_condition,
        vision_range=config.vision_range,
    )


def wire_request(request: ModelRequest, settings: JsonObject) -> JsonObject:
    """What a baseline was given, as provider-neutral JSON: no wire format, no model."""
    return request_json(request)


def recorded_answer(raw: bytes, latency_ms: int, throttles: int, retries: int) -> ModelResponse:
    """A baseline's calls keep no answer: it is reproduced by running it again with its recorded seed."""
    raise NotRecorded("a baseline calls no model, so none of its answers was recorded; run it again with its seed")


def check_server(config: ExperimentConfig, models: Sequence[str], api_key: str | None = None) -> str:
    """A baseline has no model server to ask."""
    return "no model server"


def model_identity(config: ExperimentConfig, model: str, api_key: str | None = None) -> ModelIdentity | None:
    """A baseline calls no model: no build to record."""
    return None
