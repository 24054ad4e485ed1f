"""A sweep's model servers, asked before it spends: each distinct server once, with its provider's cheapest
documented call (the provider contract's ``check_server``: Ollama's ``GET /api/tags``, an OpenAI-compatible
``GET /models``, Bedrock's model lookup), for every model the sweep sends there. A server that cannot be reached,
refuses the key or does not serve a model is found here, in seconds, instead of by every experiment in turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from oriole.core.sweep_agents import model_server
from oriole.core.sweep_plan import Cell
from oriole.errors import OrioleError
from oriole.experiment_config import ExperimentConfig
from oriole.provider_registry import PROVIDERS
from oriole.providers.contract import load_adapter

MAX_PARALLEL_CHECKS = 8


@dataclass(frozen=True)
class ModelServer:
    """One server a sweep sends requests to: its provider, where it is (a URL, or the AWS service), the models the
    sweep asks of it, and the configuration of one of its cells (the timeout and settings the check uses)."""

    provider: str
    address: str
    models: tuple[str, ...]
    config: ExperimentConfig


@dataclass(frozen=True)
class Checked:
    """What a server answered (``answer``), or why it cannot serve the sweep (``problem``)."""

    server: ModelServer
    answer: str | None = None
    problem: str | None = None

    def line(self) -> str:
        return f"model server {self.server.address}: " + (
            self.answer or f"{self.problem} ({', '.join(self.server.models)})"
        )


def servers(cells: Iterable[Cell], defaults: Mapping[str, object]) -> list[ModelServer]:
    """The distinct model servers of ``cells`` (``defaults``: the configuration where the sweep runs, by key), each
    with the models asked of it, in the order the cells first name them; baselines have none."""
    found: dict[tuple[str, str], tuple[list[str], ExperimentConfig]] = {}
    for cell in cells:
        if not PROVIDERS[cell.provider].calls_model:
            continue
        config = {**defaults, **cell.config}
        address = model_server(cell.provider, config, defaults)
        models, _ = found.setdefault((cell.provider, address), ([], ExperimentConfig.of(config)))
        if cell.model not in models:
            models.append(cell.model)
    return [ModelServer(p, address, tuple(models), config) for (p, address), (models, config) in found.items()]


def check(server: ModelServer, api_key: str | None) -> Checked:
    """Ask one server (its provider's ``check_server``); an error it names is the problem."""
    try:
        return Checked(server, answer=load_adapter(server.provider).check_server(server.config, server.models, api_key))
    except OrioleError as error:
        return Checked(server, problem=f"{type(error).__name__}: {error}")


def check_all(found: list[ModelServer], api_key: Callable[[str], str | None]) -> list[Checked]:
    """Every server asked at once (a dead one costs its timeout, not the sum of all), in the order given;
    ``api_key(provider)`` is the key its requests carry."""
    if not found:
        return []
    with ThreadPoolExecutor(max_workers=min(len(found), MAX_PARALLEL_CHECKS)) as pool:
        return list(pool.map(lambda server: check(server, api_key(server.provider)), found))
