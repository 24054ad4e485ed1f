"""The parameter catalog: every Parameter Store entry the system reads, declared once.

CDK creates the parameters from this list, the local runner seeds its emulated Parameter Store
from it, StartExperiment resolves an experiment's configuration against it, and `oriole params list`
prints it. Each entry that is read at start can be overridden per experiment in the execution
input's ``config`` under its camelCase key (``max-actions-per-turn`` -> ``maxActionsPerTurn``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources

PREFIX = "/oriole"
PROMPTS_PATH = f"{PREFIX}/prompts"
PRICING_PATH = f"{PREFIX}/pricing"
SHIPPED_PROMPT_VERSIONS = ("v1",)
ALL_PROVIDERS = ("bedrock", "ollama", "baseline")
LLM_PROVIDERS = ("bedrock", "ollama")


@dataclass(frozen=True)
class Parameter:
    """One tunable value: where it lives, its type, its default and when the system reads it."""

    path: str
    type: type
    default: object
    description: str
    read_at: str = "start"
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None  # numbers: what the code, the columns and the services can hold
    # The providers whose experiments the value changes, and whether it is an experimental variable (what the
    # agent faces or how the model is asked) rather than transport or bookkeeping. The analysis views
    # compare experiments only on experimental values that apply to their provider (table config_keys).
    providers: tuple[str, ...] = ALL_PROVIDERS
    experimental: bool = True

    @property
    def key(self) -> str:
        """The camelCase key used in an execution input's ``config``."""
        head, *rest = self.path.rsplit("/", 1)[-1].split("-")
        return head + "".join(word.capitalize() for word in rest)

    @property
    def name(self) -> str:
        return f"{PREFIX}/{self.path}"

    @property
    def overridable(self) -> bool:
        return self.read_at == "start"


CATALOG: tuple[Parameter, ...] = (
    Parameter("experiments/max-moves", int, 10000,
              "Actions allowed per experiment (moves, failed moves, recalls and invalid calls all count).",
              minimum=1, maximum=1_000_000),
    Parameter("experiments/max-duration-minutes", float, 120.0,
              "Wall-clock minutes allowed per experiment before FinalizeTimeout.", minimum=0, maximum=7 * 24 * 60),
    Parameter("experiments/max-execution-seconds", int, 7200,
              "Step Functions execution timeout; read when the stack is deployed.",
              read_at="deploy", minimum=60, maximum=365 * 24 * 3600),
    Parameter("experiments/max-actions-per-turn", int, 8,
              "Actions one agent task may take before the turn ends.", minimum=1, maximum=100),
    Parameter("experiments/max-turns-per-execution", int, 1000,
              "Turns one execution runs before it continues as a new execution "
              "(about 16 history events per turn, under the 25,000-event limit).", minimum=1, maximum=1200,
              experimental=False),
    Parameter("experiments/max-stalled-turns", int, 3,
              "Turns in a row without a valid action (no tool call, or only invalid calls) before the "
              "experiment ends as failed with agent_stalled.", minimum=1, maximum=1000, providers=LLM_PROVIDERS),
    Parameter("experiments/recall-interval", int, 10,
              "Moves required between two uses of recall_all.", minimum=0, maximum=100_000,
              providers=LLM_PROVIDERS),
    Parameter("experiments/max-recall-actions", int, 50,
              "How many recent actions recall_all summarises.", minimum=1, maximum=1000, providers=LLM_PROVIDERS),
    Parameter("experiments/history-actions", int, 20,
              "Recent actions shown to the model in each turn's context.", minimum=0, maximum=1000,
              providers=LLM_PROVIDERS),
    Parameter("experiments/seed", int, -1,
              "Seed for baseline agents and Ollama; -1 draws a random seed per experiment (stored).",
              minimum=-1, maximum=2**31 - 1, experimental=False),
    Parameter("experiments/stale-after-minutes", float, 5.0,
              "A running experiment with no action for this long shows as stale (oriole ls, experiment_status).",
              minimum=0.1, maximum=7 * 24 * 60, experimental=False),
    Parameter("gameplay/vision-range", int, 3,
              "Tiles the agent sees along each cardinal ray.", minimum=0, maximum=100),
    Parameter("gameplay/goal-condition", str, "reach",
              "reach: stand on the goal; sight: see the goal.", choices=("reach", "sight")),
    Parameter("ollama/endpoint", str, "http://localhost:11434", "Base URL of the Ollama server.",
              providers=("ollama",), experimental=False),
    Parameter("ollama/num-ctx", int, 32768, "Ollama context window (options.num_ctx).", minimum=256, maximum=1_048_576,
              providers=("ollama",)),
    Parameter("ollama/temperature", float, 0.2, "Sampling temperature (Ollama and Bedrock).", minimum=0, maximum=2,
              providers=LLM_PROVIDERS),
    Parameter("ollama/repeat-penalty", float, 1.4, "Ollama options.repeat_penalty.", minimum=0, maximum=5,
              providers=("ollama",)),
    Parameter("ollama/request-timeout-seconds", float, 120.0,
              "Timeout of one model request.", minimum=1, maximum=900, providers=LLM_PROVIDERS, experimental=False),
)

BY_KEY: dict[str, Parameter] = {p.key: p for p in CATALOG}
BY_NAME: dict[str, Parameter] = {p.name: p for p in CATALOG}


def pricing_name(model: str) -> str:
    """Where a model's prices live; characters Parameter Store refuses in names (``:``) become ``-``."""
    return f"{PRICING_PATH}/{re.sub(r'[^A-Za-z0-9_.-]', '-', model)}"


def prompt_name(version: str) -> str:
    return f"{PROMPTS_PATH}/{version}"


def shipped_prompt(version: str) -> str:
    """The text of a prompt version shipped with the code (``oriole/prompts/<version>.md``)."""
    return resources.files("oriole.prompts").joinpath(f"{version}.md").read_text(encoding="utf-8")


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def defaults() -> dict[str, str]:
    """Every catalog value and shipped prompt as Parameter Store would hold it (name -> string)."""
    values = {p.name: str(p.default) for p in CATALOG}
    values.update({prompt_name(v): shipped_prompt(v) for v in SHIPPED_PROMPT_VERSIONS})
    return values
