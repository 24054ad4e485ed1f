"""The parameter catalog: every Parameter Store entry the system reads, declared once.

CDK creates the parameters from this list, the local runner seeds its emulated Parameter Store
from it, StartExperiment resolves an experiment's configuration against it, and `oriole params list`
prints it. Each entry that is read at start can be overridden per experiment in the execution
input's ``config`` under its camelCase key (``max-actions-per-turn`` -> ``maxActionsPerTurn``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import TypeVar

from oriole import memory_registry, provider_registry
from oriole.environment import Environment


def canonical_deployment(name: str) -> str:
    """A deployment's one spelling: its name case-folded and capitalised (``ORIOLELAB2``, ``oriolelab2`` ->
    ``Oriolelab2``; ``Oriole`` stays). Some of the names AWS keeps for a deployment ignore case (the parameter
    prefix, RDS identifiers), so names that differ only in case are one deployment, spelt one way by the stacks and
    the CLI alike."""
    return name[:1].upper() + name[1:].lower()


def parameter_prefix(deployment: str) -> str:
    """Where a deployment's parameters live: ``/oriole`` for the default deployment ``Oriole``, so that two
    deployments in one account and region keep their parameters apart."""
    return "/" + deployment.lower()


ORCHESTRATOR = "Orchestrator"  # the end of every orchestrator stack's name


def data_stack(deployment: str) -> str:
    """A deployment's data stack (network and database): ``OrioleData`` for the default deployment."""
    return f"{deployment}Data"


def orchestrator_stack(deployment: str) -> str:
    """A deployment's orchestrator stack (functions, flows; its outputs name them): ``OrioleOrchestrator``."""
    return f"{deployment}{ORCHESTRATOR}"


def prompts_path(prefix: str) -> str:
    """Where a deployment's prompt versions live (``/oriole/prompts``)."""
    return f"{prefix}/prompts"


def pricing_path(prefix: str) -> str:
    """Where a deployment's model prices live (``/oriole/pricing``, one entry per model)."""
    return f"{prefix}/pricing"


# The prefix of the deployment that this process reads: the functions' (ORIOLE_DEPLOYMENT, which CDK sets on
# them) or the CLI's. The stacks never use it: they take every name from the deployment they synthesize.
PREFIX = parameter_prefix(Environment.read().deployment)
PROMPTS_PATH = prompts_path(PREFIX)
PRICING_PATH = pricing_path(PREFIX)
SHIPPED_PROMPT_VERSIONS = ("v1", "v1-vision", "v1-text")
MAX_PRICE_PER_MTOK = 10_000.0  # USD per million tokens: far above any list price, low enough for the cost columns

# Time limits that must agree with each other (docs: explanation/architecture.md, "Time limits").
LAMBDA_MAX_SECONDS = 900  # the longest a Lambda invocation may run
# A turn of 8 calls (maxActionsPerTurn) of up to 120 s (requestTimeoutSeconds) may need 9 x 120 s, more than
# Lambda allows: the model tasks get Lambda's maximum and end the turn early (end reason "deadline").
MODEL_TASK_SECONDS = LAMBDA_MAX_SECONDS
DEADLINE_MARGIN_SECONDS = 30  # kept back after the turn's last model call, to write the turn
# The first call of a turn is always made, so one request (and loading the turn) must fit in the task.
MAX_REQUEST_TIMEOUT_SECONDS = MODEL_TASK_SECONDS - 2 * DEADLINE_MARGIN_SECONDS
# What one more turn may take: a whole model task and CheckProgress. An execution that has less than this
# left before its timeout continues as a new execution instead of risking the hard timeout.
TURN_ALLOWANCE_SECONDS = MODEL_TASK_SECONDS + 60
_DURATION_MINUTES = 120.0
# Step Functions keeps at most 25,000 events per execution. A turn writes 16 when nothing fails; in the worst
# case every retrier of its agent task (24 attempts: Lambda's throttling 10, its errors 3, the database 3, the
# model's throttling 6 and absence 2) and of CheckProgress (16) runs out, 3 events per failed attempt:
# 16 + 40 x 3 = 136 events. 180 turns and the start and end of an execution (about 300 events with their own
# retries) stay under 25,000 (tests/integration/test_fault_table.py checks it from the ASL).
MAX_TURNS_PER_EXECUTION = 180
ALL_PROVIDERS = provider_registry.NAMES  # a parameter of every provider
LLM_PROVIDERS = provider_registry.MODEL_PROVIDERS  # a parameter of every provider that calls a model
# The safety caps on an experiment's spending (docs: explanation/aws-costs.md, "What a forgotten run costs"): with
# the defaults, one experiment costs at most $5 and its last turn; its input tokens stop at 5 million whatever
# their price (a model without a known price, whose cost is unknown).
MAX_COST_USD = 5.0
MAX_INPUT_TOKENS = 5_000_000


@dataclass(frozen=True)
class When:
    """The setting a parameter depends on and the values of it under which the parameter plays a part: ``imageView``
    applies only with ``observation`` image or both (``When("observation", ("image", "both"))``)."""

    key: str
    values: tuple[object, ...]

    def __str__(self) -> str:
        """As a message and the reference say it: ``historyMode = conversation or summary``."""
        return f"{self.key} = " + " or ".join(map(setting_text, self.values))


def setting_text(value: object) -> str:
    """A setting's value as a message writes it: ``actions``, ``false``, ``10``."""
    return json.dumps(value) if isinstance(value, bool) else str(value)


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
    # numbers whose maximum was lowered since a release that stored experiments: the highest value such a stored
    # snapshot holds. A new execution's input is held to ``maximum``; reading a record (a replay) to this, so that a
    # recorded run replays under the limits it ran with (``oriole.config.snapshot_problem``).
    recorded_maximum: float | None = None
    # strings with choices: values no new execution may give, each with what to use instead, that a stored snapshot
    # may hold (the experiments that gave them read and replay as they ran: ``oriole.config.recorded``)
    retired_choices: tuple[tuple[str, str], ...] = ()
    max_length: int | None = None  # strings without choices: the longest value accepted
    url_schemes: tuple[str, ...] = ()  # strings that are URLs: the only schemes accepted
    # The providers whose experiments the value changes, and whether it is an experimental variable (what the
    # agent faces or how the model is asked) rather than transport or bookkeeping. The analysis views
    # compare experiments only on experimental values that apply to their provider (table config_keys).
    providers: tuple[str, ...] = ALL_PROVIDERS
    # Where it depends on another setting: the only values of that setting under which it plays a part (None:
    # whenever its provider does). Where it does not apply, an experiment's snapshot does not hold it and an input
    # that sets it is refused (``oriole.config.resolve``), so that nothing that played no part is stored or compared.
    applies_when: When | None = None
    experimental: bool = True
    # The path it had before a rename (issue 34: one name per thing): a deploy carries a researcher's value over
    # from the old name (infra/parameters.py), and ``oriole params set`` and ``--config`` still take it.
    renamed_from: str = ""

    @property
    def key(self) -> str:
        """The camelCase key used in an execution input's ``config``."""
        head, *rest = self.path.rsplit("/", 1)[-1].split("-")
        return head + "".join(word.capitalize() for word in rest)

    @property
    def name(self) -> str:
        return f"{PREFIX}/{self.path}"

    @property
    def previous_name(self) -> str:
        """Its full name before a rename, or empty."""
        return f"{PREFIX}/{self.renamed_from}" if self.renamed_from else ""

    @property
    def overridable(self) -> bool:
        return self.read_at == "start"

    @property
    def int_default(self) -> int:
        """The default of a whole-number parameter, typed as one (``default`` holds any parameter's)."""
        if self.type is not int or not isinstance(self.default, int):
            raise TypeError(f"{self.key} is not a whole number")
        return self.default

    @property
    def bounds(self) -> tuple[float, float]:
        """A number parameter's minimum and maximum."""
        if self.minimum is None or self.maximum is None:
            raise TypeError(f"{self.key} has no bounds")
        return self.minimum, self.maximum

    @property
    def default_text(self) -> str:
        """The default as Parameter Store holds it (booleans as ``true``/``false``, as JSON writes them)."""
        return json.dumps(self.default) if self.type is bool else str(self.default)


CATALOG: tuple[Parameter, ...] = (
    Parameter(
        "experiments/max-moves",
        int,
        10000,
        "Actions allowed per experiment (moves, failed moves, recalls and invalid calls all count).",
        minimum=1,
        maximum=1_000_000,
    ),
    Parameter(
        "experiments/max-total-tokens",
        int,
        0,
        "The study's token budget: total tokens (input and output) the model calls of an experiment's turns may "
        "use; the turn that reaches it is the last, and the experiment ends as an agent failure (max_tokens). "
        "The calls of a failed attempt that was retried do not count. 0: no budget.",
        minimum=0,
        maximum=10**11,
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "experiments/max-duration-minutes",
        float,
        _DURATION_MINUTES,
        "Wall-clock minutes allowed per experiment before FinalizeTimeout.",
        minimum=0,
        maximum=7 * 24 * 60,
    ),
    Parameter(
        "experiments/max-execution-seconds",
        int,
        int(_DURATION_MINUTES * 60) + TURN_ALLOWANCE_SECONDS + 300,
        "Step Functions execution timeout, read when the stack is deployed: above the default duration "
        "limit with room for a turn, and an execution continues as new before it reaches it.",
        read_at="deploy",
        minimum=2 * TURN_ALLOWANCE_SECONDS,
        maximum=365 * 24 * 3600,
    ),
    Parameter(
        "experiments/max-input-tokens",
        int,
        MAX_INPUT_TOKENS,
        "A safety cap on spending: once an experiment's model calls have read this many input tokens, it ends "
        "censored (spend_cap) after the turn that crossed it. It bounds what a model without a known price "
        "may use; raise it for long runs of large contexts.",
        minimum=1,
        maximum=10**11,
        providers=LLM_PROVIDERS,
        experimental=False,
    ),
    Parameter(
        "experiments/max-cost-usd",
        float,
        MAX_COST_USD,
        "A safety cap on spending, in USD at the experiment's prices: once it has cost this much, it ends "
        "censored (spend_cap) after the turn that crossed it, so a forgotten run costs at most this and one "
        "turn more. A sweep's spend limit counts each running experiment at this cap.",
        minimum=0.000001,  # the cost columns' precision
        maximum=100_000,
        providers=LLM_PROVIDERS,
        experimental=False,
    ),
    Parameter(
        "experiments/max-actions-per-turn",
        int,
        8,
        "Actions one agent task may take before the turn ends.",
        minimum=1,
        maximum=100,
    ),
    Parameter(
        "experiments/max-turns-per-execution",
        int,
        MAX_TURNS_PER_EXECUTION,
        "Turns one execution runs before it continues as a new execution (16 history events per turn, "
        "136 if every retry is spent: the maximum keeps an execution under the 25,000-event limit).",
        minimum=1,
        maximum=MAX_TURNS_PER_EXECUTION,
        recorded_maximum=350,  # the maximum until the history budget was recounted (136 events a turn at worst)
        experimental=False,
    ),
    Parameter(
        "experiments/max-stalled-turns",
        int,
        3,
        "Turns in a row without a valid action (no tool call, or only invalid calls) before the "
        "experiment ends as failed with agent_stalled.",
        minimum=1,
        maximum=1000,
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "experiments/recall-interval",
        int,
        10,
        "Moves required between two uses of recall_all.",
        minimum=0,
        maximum=100_000,
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "experiments/max-recall-actions",
        int,
        50,
        "How many recent actions recall_all summarises.",
        minimum=1,
        maximum=1000,
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "experiments/history-actions",
        int,
        20,
        "Recent actions shown to the model in each turn's context.",
        minimum=0,
        maximum=1000,
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "experiments/seed",
        int,
        -1,
        "Seed for baseline agents, Ollama and OpenAI-compatible servers; -1 draws a random seed per "
        "experiment (stored).",
        minimum=-1,
        maximum=2**31 - 1,
        experimental=False,
    ),
    Parameter(
        "experiments/stale-after-minutes",
        float,
        5.0,
        "A running experiment with no action for this long shows as stale (oriole ls, experiment_status).",
        minimum=0.1,
        maximum=7 * 24 * 60,
        experimental=False,
    ),
    Parameter(
        "agent/history-mode",
        str,
        "actions",
        f"What the model remembers across turns: {memory_registry.described(memory_registry.MEMORY_MODES)}.",
        choices=tuple(memory_registry.MEMORY_MODES),
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "agent/history-turns",
        int,
        10,
        "Earlier turns whose messages are carried into a turn (historyMode conversation or summary).",
        minimum=1,
        maximum=1000,
        providers=LLM_PROVIDERS,
        applies_when=When("historyMode", ("conversation", "summary")),
    ),
    Parameter(
        "agent/compaction",
        str,
        "model",
        f"How historyMode summary summarises older turns: {memory_registry.described(memory_registry.COMPACTIONS)}.",
        choices=memory_registry.choices(memory_registry.COMPACTIONS),
        retired_choices=memory_registry.retired(memory_registry.COMPACTIONS),
        providers=LLM_PROVIDERS,
        applies_when=When("historyMode", ("summary",)),
    ),
    Parameter(
        "agent/map-aid",
        bool,
        False,
        "A planning aid, not a memory: each turn's context carries map_aid, the map of every tile the agent has "
        "seen (text rows), the tiles it stood on and the 20 nearest unexplored tiles, computed by the harness, "
        "whatever the historyMode; text, so not part of observation image.",
        providers=LLM_PROVIDERS,
        applies_when=When("observation", ("text", "both")),
    ),
    Parameter(
        "agent/context-tokens",
        int,
        32768,
        "Context window in tokens for providers without their own (Bedrock, OpenAI-compatible); Ollama uses "
        "numCtx. Requests are trimmed to it less the answer's room (maxTokens, maxOutputTokens; up to half of "
        "it): earlier turns first, then the oldest recent actions.",
        minimum=256,
        maximum=2_000_000,
        providers=("bedrock", "openai"),
    ),
    Parameter(
        "agent/circuit-breaker-threshold",
        int,
        3,
        "Invalid tool calls in a row that end the turn (end reason circuit_breaker).",
        minimum=1,
        maximum=100,
    ),
    Parameter(
        "agent/repetition-threshold",
        int,
        5,
        "The same failing action (the same wall bumped from the same tile, recall while cooling down) this "
        "many times in a row ends the turn (end reason repetition); 0 turns the breaker off.",
        minimum=0,
        maximum=100,
    ),
    Parameter(
        "agent/enable-give-up",
        bool,
        False,
        "Offer the give_up tool: the model may end the experiment with its reason (an agent ending).",
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "agent/text-tool-calls",
        bool,
        False,
        "For models without native tool calling: describe the tools in the system prompt and read tool "
        "calls written in the answer's text as <tool_call> blocks (a documented grammar; a near miss is an "
        "invalid call answered with what was wrong).",
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "agent/observation",
        str,
        "text",
        "How the agent observes the maze: text (the tiles it sees, written in its messages), image (its "
        "position and counters in text, the view as a PNG picture; only for a model that accepts images) or "
        "both.",
        choices=("text", "image", "both"),
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "agent/image-view",
        str,
        "local",
        "What the picture shows (observation image or both): local (the tiles within vision range around the "
        "agent) or map (everything it has seen so far, where it is, the goal once seen).",
        choices=("local", "map"),
        providers=LLM_PROVIDERS,
        applies_when=When("observation", ("image", "both")),
    ),
    Parameter(
        "agent/text-view",
        str,
        "local",
        "What the text shows (observation text or both), the twin of imageView: local (visible: the tiles in "
        "sight, in each move's result) or map (map_view: everything it has seen so far as text rows, at the "
        "turn's start and after each answer's actions, as the map picture is).",
        choices=("local", "map"),
        providers=LLM_PROVIDERS,
        applies_when=When("observation", ("text", "both")),
    ),
    Parameter("gameplay/vision-range", int, 3, "Tiles the agent sees along each cardinal ray.", minimum=0, maximum=100),
    Parameter(
        "gameplay/goal-condition",
        str,
        "reach",
        "reach: stand on the goal; sight: see the goal.",
        choices=("reach", "sight"),
    ),
    Parameter(
        "ollama/endpoint",
        str,
        "http://localhost:11434",
        "Base URL of the Ollama server (http or https).",
        max_length=2048,
        url_schemes=("http", "https"),
        providers=("ollama",),
        experimental=False,
    ),
    Parameter(
        "ollama/num-ctx",
        int,
        32768,
        "Ollama context window (options.num_ctx): requests are trimmed to it less the answer's room (numPredict).",
        minimum=256,
        maximum=1_048_576,
        providers=("ollama",),
    ),
    Parameter(
        "ollama/num-predict",
        int,
        1024,
        "Ollama options.num_predict: the most tokens one answer may hold, kept free in numCtx when requests are "
        "trimmed (up to half of it). 0: no cap sent (options carries no num_predict; the model's own default "
        "applies, as for every Ollama experiment started before this setting existed).",
        minimum=0,
        maximum=1_048_576,
        providers=("ollama",),
    ),
    Parameter(
        "model/temperature",
        float,
        0.2,
        "Sampling temperature of every model provider.",
        minimum=0,
        maximum=2,
        providers=LLM_PROVIDERS,
    ),
    Parameter(
        "ollama/repeat-penalty",
        float,
        1.4,
        "Ollama options.repeat_penalty.",
        minimum=0,
        maximum=5,
        providers=("ollama",),
    ),
    Parameter(
        "models/request-timeout-seconds",
        float,
        120.0,
        "Timeout of one model request (every model provider); one request must fit in the model task's "
        "Lambda timeout with the deadline margin to spare.",
        minimum=1,
        maximum=MAX_REQUEST_TIMEOUT_SECONDS,
        providers=LLM_PROVIDERS,
        experimental=False,
        renamed_from="ollama/request-timeout-seconds",  # it applies to every provider, not Ollama's alone
    ),
    Parameter(
        "bedrock/max-tokens",
        int,
        1024,
        "Bedrock inferenceConfig.maxTokens: the most tokens one answer may hold.",
        minimum=1,
        maximum=65536,
        providers=("bedrock",),
    ),
    Parameter(
        "bedrock/top-p",
        float,
        1.0,
        "Bedrock inferenceConfig.topP; 1 (the whole distribution) is not sent, since some models refuse "
        "temperature and topP together.",
        minimum=0,
        maximum=1,
        providers=("bedrock",),
    ),
    Parameter(
        "openai/base-url",
        str,
        "http://localhost:8000/v1",
        "Base URL of the OpenAI-compatible server (http or https), the OpenAI SDK's base_url: requests go to "
        "{baseUrl}/chat/completions.",
        max_length=2048,
        url_schemes=("http", "https"),
        providers=("openai",),
        experimental=False,
    ),
    Parameter(
        "openai/max-output-tokens",
        int,
        1024,
        "Most tokens one answer of an OpenAI-compatible server may generate.",
        minimum=1,
        maximum=1_000_000,
        providers=("openai",),
    ),
    Parameter(
        "openai/max-tokens-field",
        str,
        "max_tokens",
        "The request field that carries maxOutputTokens: max_tokens (vLLM, llama.cpp, SGLang and most "
        "servers) or max_completion_tokens (required by OpenAI's reasoning models).",
        choices=("max_tokens", "max_completion_tokens"),
        providers=("openai",),
    ),
    Parameter(
        "openai/send-seed",
        bool,
        True,
        "Send the experiment's seed as the request's seed (OpenAI-compatible); false for a server that "
        "refuses the field.",
        providers=("openai",),
    ),
    Parameter(
        "openai/parallel-tool-calls",
        bool,
        False,
        "parallel_tool_calls, sent with the tools: false asks for at most one tool call per answer (as the v1 "
        "prompt says), true lets the model return several.",
        providers=("openai",),
        applies_when=When("textToolCalls", (False,)),
    ),
)

# The example models known to accept images (observation image or both), by the name an experiment gives (a
# Bedrock inference profile id counts as its base model). A deployment marks others with the CDK context
# visionModels, which the functions receive as ORIOLE_VISION_MODELS (a JSON list, ``Environment.vision_models``);
# locally that variable is read from the environment of the `oriole` command. Any other model given observation
# image or both is refused at start.
IMAGE_MODELS: frozenset[str] = frozenset(
    {
        "anthropic.claude-haiku-4-5-20251001-v1:0",
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "amazon.nova-lite-v1:0",
        "gpt-4.1-mini",
        "gpt-4.1",
        "gpt-4o-mini",
        "gpt-4o",
        "Qwen/Qwen2.5-VL-7B-Instruct",
        "qwen2.5vl:7b",
        "gemma3:4b",
        "gemma3:12b",
        "llava:7b",
        "llama3.2-vision:11b",
    }
)

BY_KEY: dict[str, Parameter] = {p.key: p for p in CATALOG}
START_NAMES: tuple[str, ...] = tuple(p.name for p in CATALOG if p.overridable)  # what StartExperiment reads
BY_NAME: dict[str, Parameter] = {p.name: p for p in CATALOG}


Value = TypeVar("Value", bool, int, float, str)


def applies(param: Parameter, values: Mapping[str, object]) -> bool:
    """Whether ``param`` plays a part in an experiment whose settings are ``values`` (a snapshot: the keys of its
    provider): it has no condition, or the setting it depends on applies and holds one of its values (its default
    where ``values`` lack it, as a snapshot taken before the key existed is read: ``ExperimentConfig.of``)."""
    when = param.applies_when
    if when is None:
        return True
    controller = BY_KEY[when.key]
    return applies(controller, values) and values.get(when.key, controller.default) in when.values


def applying(values: Mapping[str, object]) -> dict[str, object]:
    """``values`` less the catalog keys that play no part under them (``applies``); other keys kept."""
    return {key: value for key, value in values.items() if key not in BY_KEY or applies(BY_KEY[key], values)}


def default_of(key: str, kind: type[Value]) -> Value:
    """A parameter's catalog default as the type its reader needs (a default of another type is a catalog bug)."""
    default = BY_KEY[key].default
    if not isinstance(default, kind):
        raise TypeError(f"the catalog default of {key} is {default!r}, not a {kind.__name__}")
    return default


def pricing_name(model: str) -> str:
    """Where a model's prices live; characters Parameter Store refuses in names (``:``) become ``-``."""
    return f"{PRICING_PATH}/{re.sub(r'[^A-Za-z0-9_.-]', '-', model)}"


def prompt_name(version: str, prefix: str = PREFIX) -> str:
    return f"{prompts_path(prefix)}/{version}"


def shipped_prompt(version: str) -> str:
    """The text of a prompt version shipped with the code (``oriole/prompts/<version>.md``)."""
    return resources.files("oriole.prompts").joinpath(f"{version}.md").read_text(encoding="utf-8")


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def defaults() -> dict[str, str]:
    """Every catalog value and shipped prompt as Parameter Store would hold it (name -> string)."""
    values = {p.name: p.default_text for p in CATALOG}
    values.update({prompt_name(v): shipped_prompt(v) for v in SHIPPED_PROMPT_VERSIONS})
    return values
