"""The providers, one registration each: what the rest of the system knows of a provider beyond its adapter.

A provider is its adapter module (``adapter``: ``oriole.providers.contract`` says what it defines and loads it),
its catalog entries (``oriole.catalog``, naming it in ``providers``) and its entry here. From this table come
the provider names an execution input and a sweep file accept, the catalog's "every provider" and "every model
provider", the agent tasks of the handler table, the provider branches of both flow files and their diagrams
in the docs site (``make flows``, ``make docs``), the model-server allow-list StartExperiment applies and CDK deploys,
the API key a task sends, the sweep's default caps, the models a provider plays or a deployment grants, and the
``providers`` table that ``experiments.llm_provider`` references. Code outside this table asks a provider's fields,
never its name.

Plain data, at the bottom of the runtime's layers: anything may read it; it imports nothing of the project.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal


@dataclass(frozen=True)
class ModelServers:
    """Model servers an experiment names by URL in its configuration (Ollama's endpoint, an OpenAI-compatible base
    URL). On AWS the deployment lists the ones allowed (CDK context ``context``, which the functions receive as the
    environment variable ``listed``); the catalog's default of ``key`` is a local one, which a Lambda function
    cannot reach."""

    service: str  # as a message names it: "Ollama", "OpenAI-compatible"
    noun: str  # "endpoint", "base URL"
    key: str  # the configuration key that holds the URL
    context: str  # the CDK context that lists the allowed ones, e.g. ollamaEndpoints
    example: str  # an allowed one, as a message shows it

    @property
    def listed(self) -> str:
        """The functions' environment variable holding the deploy-time list: ``ollamaEndpoints`` ->
        ``ORIOLE_OLLAMA_ENDPOINTS``."""
        return "ORIOLE_" + re.sub(r"(?<!^)(?=[A-Z])", "_", self.context).upper()


@dataclass(frozen=True)
class Provider:
    """One provider. ``calls_model``: False for the baselines (no model, no price, no recorded answer, no model
    retries, no model settings); ``sweep_cap``: its experiments at once in a sweep unless the file says otherwise;
    ``api_key``: the environment variable of its API key for a local run (on AWS a Secrets Manager secret,
    ``api_key_secret`` names it); ``servers``: the model servers it is sent to, when an experiment names them;
    ``aws_service``: the AWS service that serves its models, when one does (reached with the function's role,
    which a deployment grants model by model, and locally with the researcher's own credentials); ``models``: the
    only model names it plays, when it has a fixed set (the baselines); ``chosen``: False for a provider no
    execution input or sweep file names (the replay's recorded agent, which StartExperiment assigns to a replay's
    scratch experiment): it has a task in the experiment flow, no branch in the sweep flow."""

    name: str  # llmProvider, experiments.llm_provider
    label: str  # the prefix of its task's and its sweep map's state names
    adapter: str  # its adapter module (the contract of oriole.providers.contract)
    sweep_cap: int
    calls_model: bool = True
    api_key: str | None = None
    servers: ModelServers | None = None
    aws_service: str | None = None  # as messages name it: "Amazon Bedrock"
    models: tuple[str, ...] = ()
    chosen: bool = True

    @property
    def task(self) -> str:
        """Its agent task: the state of the experiment flow and the function that plays its turns."""
        return f"Invoke{self.label}Agent"

    @property
    def placeholder(self) -> str:
        """The flow files' placeholder of its task's function ARN."""
        return f"{self.task}FunctionArn"

    @property
    def entry_point(self) -> str:
        """The name of its task's Lambda handler in ``oriole.handlers.agents``."""
        return f"invoke_{self.name}"

    @property
    def api_key_secret(self) -> str | None:
        """The functions' environment variable naming the secret of its API key, when the deployment sends one."""
        return None if self.api_key is None else f"{self.api_key}_SECRET_ARN"


BASELINE = "baseline"  # the deterministic agents (``oriole.core.baselines``)
REPLAY = "replay"  # the provider of a replay's scratch experiment (``oriole.providers.replay``)
PROVIDERS: dict[str, Provider] = {
    provider.name: provider
    for provider in (
        Provider("bedrock", "Bedrock", "oriole.providers.bedrock", sweep_cap=4, aws_service="Amazon Bedrock"),
        Provider(
            "ollama",
            "Ollama",
            "oriole.providers.ollama",
            sweep_cap=1,
            api_key="OLLAMA_API_KEY",
            servers=ModelServers("Ollama", "endpoint", "endpoint", "ollamaEndpoints", "https://your-ollama:11434"),
        ),
        Provider(
            "openai",
            "OpenAI",
            "oriole.providers.openai",
            sweep_cap=4,
            api_key="OPENAI_API_KEY",
            servers=ModelServers(
                "OpenAI-compatible", "base URL", "baseUrl", "openaiBaseUrls", "https://your-server/v1"
            ),
        ),
        Provider(
            BASELINE,
            "Baseline",
            "oriole.providers.baseline",
            sweep_cap=8,
            calls_model=False,
            models=("random", "wall-follower", "explorer", "oracle"),  # oriole.core.baselines plays each
        ),
        Provider(REPLAY, "Replay", "oriole.providers.replay", sweep_cap=0, chosen=False),
    )
}
DEFAULT_PROVIDER = "bedrock"  # an execution input without llmProvider; the flow's router sends anything else here
NAMES: tuple[str, ...] = tuple(name for name, provider in PROVIDERS.items() if provider.chosen)
if TYPE_CHECKING:
    ProviderName = str  # the names are the table's keys, known once it is built: to a type checker, text
else:
    ProviderName = Literal[NAMES]  # to pydantic, exactly the names one may choose (its error lists them)
MODEL_PROVIDERS: tuple[str, ...] = tuple(name for name in NAMES if PROVIDERS[name].calls_model)


# Prefixes of Bedrock's system-defined cross-region inference profiles (``us.anthropic...``).
PROFILE_PREFIXES = ("us", "eu", "apac", "jp", "au", "ca", "us-gov", "global")


def profile_prefix(model_id: str) -> str | None:
    """``us`` for ``us.anthropic.claude-...``; None for a base model id."""
    head, dot, _ = model_id.partition(".")
    return head if dot and head in PROFILE_PREFIXES else None


def base_model(model_id: str) -> str:
    """The foundation model an id names: a profile id without its prefix, a base id as it is."""
    return model_id.split(".", 1)[1] if profile_prefix(model_id) else model_id
