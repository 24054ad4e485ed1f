"""The agents of a sweep file, each with its own settings and prices, and which settings apply to whom.

An agent is ``"provider/model"`` or a table::

    [[agents]]
    label = "gpt-4.1-mini"            # optional; shown in reports instead of provider/model
    provider = "openai"
    model = "gpt-4.1-mini"
    config = { baseUrl = "https://api.openai.com/v1", temperature = 0 }
    prices = { input_per_mtok = 0.40, output_per_mtok = 1.60 }
    concurrency = 2                   # optional; its experiments at once (a lane of the sweep flow of its own)

``configs`` and ``grid`` cross with every agent, but a key that does not apply to an agent's provider (the
catalog's ``providers``) is refused for that agent, with the reason, unless the entry or grid names the agents
it is for (``agents = [...]``, by label). So a baseline never carries a model server's URL, and one model is
never sent to another's server. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from oriole.catalog import BY_KEY
from oriole.core.prices import Price
from oriole.errors import SweepFileError
from oriole.inputs import Name, PricePerMTok
from oriole.labels import label_problem, look_alike
from oriole.provider_registry import NAMES, PROVIDERS, ProviderName
from oriole.text import JsonObject

MAX_CONCURRENCY = 1000  # experiments at once: the most any cap of a sweep may name
AGENTS_KEY = "agents"  # in a configs entry or a grid: the labels of the agents it is for
_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class SweepPrices(BaseModel):
    """``prices = { input_per_mtok = 0.40, output_per_mtok = 1.60 }``: USD per million tokens."""

    model_config = _STRICT

    input_per_mtok: PricePerMTok
    output_per_mtok: PricePerMTok


class AgentEntry(BaseModel):
    """An agent given as a table in the sweep file."""

    model_config = _STRICT

    label: Annotated[Name, Field(min_length=1, max_length=80)] | None = None
    provider: ProviderName
    model: Annotated[Name, Field(min_length=1, max_length=200)]
    config: dict[str, Any] = Field(default_factory=dict)
    prices: SweepPrices | None = None
    concurrency: int | None = Field(
        None,
        ge=1,
        le=MAX_CONCURRENCY,
        description="its experiments at once, under this cap alone (not its provider's); within its server's "
        "cap when server_concurrency caps its server",
    )


@dataclass(frozen=True)
class SweepAgent:
    """One agent of the sweep: its label (``provider/model`` unless the file names it), its own overrides (as
    canonical JSON), the prices the file gives it and its own cap on experiments at once (None: its server's or
    its provider's)."""

    label: str
    provider: str
    model: str
    config_json: str = "{}"
    prices: Price | None = None
    concurrency: int | None = None

    @property
    def config(self) -> JsonObject:
        overrides: JsonObject = json.loads(self.config_json)
        return overrides

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}"


def _from_text(text: str) -> SweepAgent:
    provider, _, model = text.partition("/")
    if provider not in NAMES or not model:
        raise SweepFileError(f"agent {text!r} must be provider/model with provider one of {', '.join(NAMES)}")
    return SweepAgent(text, provider, model)


def _from_entry(entry: AgentEntry) -> SweepAgent:
    label = entry.label or f"{entry.provider}/{entry.model}"
    prices = (
        None
        if entry.prices is None
        else Price(entry.prices.input_per_mtok, entry.prices.output_per_mtok, f"sweep file, agent {label}")
    )
    if not PROVIDERS[entry.provider].calls_model and prices is not None:
        raise SweepFileError(f"agent {label}: a baseline plays no model and costs nothing; remove its prices")
    config = json.dumps(entry.config, sort_keys=True)
    agent = SweepAgent(label, entry.provider, entry.model, config, prices, entry.concurrency)
    check_applies(agent, entry.config, f"agent {label}: config")
    return agent


def agents_of(entries: Iterable[str | AgentEntry]) -> list[SweepAgent]:
    """The file's agents, checked: a known provider, a baseline's name, labels that name one agent each and that a
    reader tells apart (``oriole.labels``)."""
    found = [_from_text(e) if isinstance(e, str) else _from_entry(e) for e in entries]
    seen: list[str] = []
    for agent in found:
        models = PROVIDERS[agent.provider].models
        if models and agent.model not in models:
            raise SweepFileError(f"agent {agent.label!r}: the {agent.provider}s are {', '.join(models)}")
        if problem := label_problem(agent.label):
            raise SweepFileError(f"agent {agent.label!r} {problem}")
        if agent.label in seen:
            raise SweepFileError(f"two agents are labelled {agent.label!r}: give each its own label")
        if twin := next((label for label in seen if look_alike(label, agent.label)), None):
            raise SweepFileError(
                f"agents {twin!r} and {agent.label!r} read the same but differ in their characters: their rows "
                "could not be told apart; write both alike, or label them differently"
            )
        seen.append(agent.label)
    return found


def check_applies(agent: SweepAgent, overrides: Iterable[str], where: str) -> None:
    """Refuse a key that does not apply to the agent's provider (unknown keys are the catalog check's)."""
    for key in overrides:
        param = BY_KEY.get(key)
        if param is not None and agent.provider not in param.providers:
            raise SweepFileError(
                f"{where}: {key} does not apply to agent {agent.label}: provider {agent.provider} takes no {key} (it "
                f"applies to {', '.join(param.providers)}); name the agents it is for with {AGENTS_KEY} = [...], or "
                "give it in those agents' own config"
            )


def for_agents(
    entry: Mapping[str, Any], known: Mapping[str, SweepAgent], where: str
) -> tuple[set[str] | None, JsonObject]:
    """A configs entry or grid table split into the labels it names with ``agents = [...]`` (None: every agent)
    and its settings; an unknown label is refused with the known ones."""
    settings = {k: v for k, v in entry.items() if k != AGENTS_KEY}
    if AGENTS_KEY not in entry:
        return None, settings
    labels = entry[AGENTS_KEY]
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
        raise SweepFileError(f"{where}: {AGENTS_KEY} must be a non-empty list of agent labels")
    unknown = [label for label in labels if label not in known]
    if unknown:
        raise SweepFileError(
            f"{where}: {AGENTS_KEY} names {', '.join(map(repr, unknown))}, not an agent of the "
            f"file; the agents are {', '.join(map(repr, known))}"
        )
    return set(labels), settings


def model_server(provider: str, config: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    """Where an experiment's model requests go: its own server setting, else the default where it runs
    (``defaults``: catalog keys -> the values Parameter Store holds there)."""
    entry = PROVIDERS[provider]
    if entry.servers is None:
        return entry.aws_service or "no model server"
    key = entry.servers.key
    return str(config.get(key, defaults.get(key, BY_KEY[key].default)))
