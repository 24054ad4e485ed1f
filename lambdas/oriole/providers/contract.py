"""The provider contract: the functions every adapter module defines, and the one function that loads one.

A provider is its adapter module (named by its registration in ``oriole.provider_registry``), its catalog entries
and its registration. The rest of the system asks the module only for what ``Adapter`` lists, through
``load_adapter``:

- ``agent(setup, api_key)``: the agent that plays the experiment's turn (``oriole.core.turn_loop.Agent``), built
  from the ``AgentSetup`` the turn's load gives (the model, the configuration, the seed, the agent's state);
- ``wire_request(request, settings)``: the body (or keyword arguments) a request with an agent's ``settings`` is
  sent as, rebuilt from what a call stored (``oriole transcript``, the replay comparison);
- ``recorded_answer(raw, latency_ms, throttles, retries)``: a stored answer (``model_calls.answer``) read again
  exactly as the first time (a replay's recorded agent, ``oriole.providers.replay``);
- ``check_server(config, models, api_key)``: whether the model server an experiment with ``config`` goes to
  answers and serves ``models``, asked once with the provider's cheapest documented call (a sweep's check before
  it spends: ``oriole sweep``, ``--dry-run``): what it answered, in a line, or a named error;
- ``model_identity(config, model, api_key)``: what the server reports about the model build and itself, asked
  once when an experiment starts (``oriole.providers.identity``); None for a provider that calls no server.

Two registered providers have no answers of their own to read again, and say so with ``NotRecorded``: a baseline
(it calls no model; it is reproduced by running it again with its seed), and the replay (its calls are its
original's, in the original provider's wire format).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, cast

from oriole.core.turn_loop import Agent, AgentSetup, ModelRequest, ModelResponse
from oriole.errors import OrioleError
from oriole.experiment_config import ExperimentConfig
from oriole.provider_registry import PROVIDERS
from oriole.providers.identity import ModelIdentity
from oriole.text import JsonObject


class Adapter(Protocol):
    """A provider's adapter module, as the rest of the system sees it."""

    def agent(self, setup: AgentSetup, api_key: str | None = None) -> Agent:
        """The agent that plays one turn of an experiment of this provider."""
        ...

    def wire_request(self, request: ModelRequest, settings: JsonObject) -> JsonObject:
        """What a request with an agent's ``settings`` is sent as, in the provider's wire format."""
        ...

    def recorded_answer(self, raw: bytes, latency_ms: int, throttles: int, retries: int) -> ModelResponse:
        """A stored answer read again as the first time."""
        ...

    def check_server(self, config: ExperimentConfig, models: Sequence[str], api_key: str | None = None) -> str:
        """Whether the server an experiment with ``config`` (its resolved configuration) goes to answers and serves
        ``models``: what it answered, in a line; ``ModelUnavailable``, ``ModelTimeout`` or ``ModelRequestRejected``
        with the reason when not."""
        ...

    def model_identity(self, config: ExperimentConfig, model: str, api_key: str | None = None) -> ModelIdentity | None:
        """What the server reports about ``model``'s build and itself; an endpoint that does not answer is recorded
        as unknown with the reason, never raised."""
        ...


CONTRACT: tuple[str, ...] = ("agent", "wire_request", "recorded_answer", "check_server", "model_identity")


class NotRecorded(OrioleError):
    """A provider whose calls keep no answer of their own was asked to read one again."""


def load_adapter(provider: str) -> Adapter:
    """The adapter module of a registered provider, imported on first use (a task loads only its own provider's);
    a module that lacks part of the contract is a TypeError naming what it lacks."""
    module = importlib.import_module(PROVIDERS[provider].adapter)
    missing = [name for name in CONTRACT if not callable(getattr(module, name, None))]
    if missing:
        raise TypeError(
            f"the adapter {module.__name__} of provider {provider!r} does not define {', '.join(missing)}: every "
            f"adapter defines {', '.join(CONTRACT)} (oriole.providers.contract)"
        )
    return cast(Adapter, module)


if TYPE_CHECKING:  # mypy holds every adapter module to the contract (no import at run time: modules load lazily)
    from oriole.providers import baseline, bedrock, ollama, openai, replay

    _BASELINE: Adapter = baseline
    _BEDROCK: Adapter = bedrock
    _OLLAMA: Adapter = ollama
    _OPENAI: Adapter = openai
    _REPLAY: Adapter = replay
