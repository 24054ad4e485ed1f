"""A sweep: a matrix of experiments (agents x prompt versions x mazes x configurations x repetitions) that a
sweep file describes and the sweep state machine runs. Pure: the file's model, the matrix, the plan, what
resume leaves to run and the concurrency caps; no I/O but the stored-maze look-up a caller passes in.

Every experiment of sweep ``S`` is recorded as its own: its execution input names ``sweepId = S`` (StartExperiment
stores it as ``experiments.sweep_id``, and the reports, exports and ``oriole sweep status`` read it); its agent id
is ``S/<cell key>/r<repetition>``, where the cell key is a hash of (provider, model, the agent's label when the file
gives one, prompt version, maze, config overrides but the transport settings: ``IDENTITY_LEAVES_OUT``), and its
comment carries ``sweep:S`` for a reader. Resuming reads the sweep's experiments back by that agent id, among the
sweep's own.

The plan is a list whose order never changes for a given file: first repetitions first, then the cells in
the order of the file. An index into it is all the state machine carries per experiment; each map item
recomputes its entry (``planned_at``), so the 256 KB state limit never meets the expanded matrix.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Annotated, Any, TypeVar

import pydantic.dataclasses
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from oriole import inputs
from oriole.catalog import BY_KEY, CATALOG
from oriole.config import canonical_value, resolve, url_problem
from oriole.core import mazeset, prices, seeds
from oriole.core.prices import Price
from oriole.core.sweep_agents import (
    AGENTS_KEY,
    MAX_CONCURRENCY,
    AgentEntry,
    SweepAgent,
    agents_of,
    check_applies,
    for_agents,
)
from oriole.errors import InvalidConfig, InvalidExecutionInput, SweepFileError, UnknownMaze
from oriole.inputs import SWEEP_ID, MazeId
from oriole.provider_registry import NAMES, PROVIDERS, ProviderName
from oriole.statuses import Ending, ExperimentStatus
from oriole.text import JsonObject, unstorable

RUNS = (Ending.SUCCESS, Ending.AGENT)  # ended on the agent's merits: never run again
PAUSE_AFTER_ERRORS = 3  # an agent's experiments failing alike in a row that pause it (SweepRun.pause_after_errors)
STOPPED = (ExperimentStatus.ABORTED,)  # stopped from outside (Ctrl-C, `oriole doctor --fix`): a plain resume reruns it
# What a cell is not: where its model runs and how patiently it is asked (the catalog's transport and bookkeeping
# keys: baseUrl, endpoint, requestTimeoutSeconds, ...). Fixing a server's URL resumes the same cells with the same
# seeds; the server's report of its model build is provenance. A fixed seed stays: two fixed seeds are two cells.
IDENTITY_LEAVES_OUT = frozenset(p.key for p in CATALOG if not p.experimental) - {"seed"}
# The sweep flow's maps for experiments capped on their own (``Lane``): a capped server's (server_concurrency) or an
# agent's (its concurrency). Lanes lane1..laneN run beside the providers' maps, each capped alone; the rest of the
# experiments run in their provider's map.
LANES = tuple(f"lane{n}" for n in range(1, 5))
LAMBDA_HEADROOM = 2  # of the account's Lambda concurrency, left free beside a sweep's experiments (at least)
MAX_EXPERIMENTS = 20_000  # per file, counted before the matrix is built: a typo in a grid cannot eat the memory
MAX_INPUT_BYTES = 64 * 1024  # the sweep rides in the state beside its plan's indices, under the 256 KB limit
MAX_SPEND_LIMIT_USD = 1_000_000_000.0  # far above any study's budget, far inside sweeps.spend_limit_usd
SAMPLE_DRAWS_PER_MAZE = 20  # how hard a sample looks for mazes it does not have yet
# How often a sweep item looks at its running experiment: first every wait_seconds, then every tenth of the time it
# has followed it, at most every MAX_CHECK_WAIT_SECONDS (wait_seconds wins when it is longer). An item is a child
# execution of at most 25,000 history events; growing waits let it follow the longest experiment the catalog allows
# (tests/unit/test_sweep_definition.py does the arithmetic), and an experiment that ends is seen within a tenth of
# its age, within ten minutes.
CHECK_WAIT_FRACTION = 10
MAX_CHECK_WAIT_SECONDS = 600

# a stored maze's name and grid hash, by name or id (None: not stored)
StoredMaze = Callable[[str | int], tuple[str, str] | None]
MAX_DRAWN_TILES = 2_000_000  # what drawing a sweep's mazes may cost; see ``DrawBudget``
DRAW_OVERHEAD_TILES = 1_000  # what one draw costs beyond its tiles (a generator, a validation), in tiles


def _not_stored(key: str | int) -> None:
    return None


class DrawBudget:
    """What drawing a sweep's seeded mazes may cost, so that planning (PlanSweep, and each map item that
    computes the plan again in a cold container) always ends well inside its Lambda's timeout at the largest
    file allowed. A draw costs its tiles plus ``DRAW_OVERHEAD_TILES``; about 3 microseconds a tile on one core
    for the slowest family, so the whole budget is a few seconds (tests/unit/test_hostile_input.py measures the
    worst case). It is charged before the draw."""

    def __init__(self) -> None:
        self.spent = 0

    def draw(self, name: str) -> mazeset.MazeEntry:
        match = mazeset.SEEDED_NAME.fullmatch(name)
        side = min(int(match["size"]), mazeset.MAX_SIZE + 1) if match else 0
        self.expect(1, side)
        self.spent += self._cost(side)
        return mazeset.seeded(name)

    def expect(self, draws: int, side: int) -> None:
        """Refuse now what could not fit: ``draws`` more draws of mazes ``side`` tiles wide."""
        if self.spent + draws * self._cost(side) > MAX_DRAWN_TILES:
            raise SweepFileError(
                f"drawing the sweep's mazes would take more than {MAX_DRAWN_TILES:,} tiles (each "
                f"draw counts its tiles and {DRAW_OVERHEAD_TILES:,}): ask for fewer or smaller "
                "samples, or split the sweep"
            )

    @staticmethod
    def _cost(side: int) -> int:
        return side * side + DRAW_OVERHEAD_TILES


class MazeSample(BaseModel):
    """``{ family = "perfect", size = 11, samples = 30 }``: that many seeded mazes of a family at a size, their
    seeds derived from the sweep id, so running the file again draws the same mazes."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    family: str = Field(description="a maze family: perfect, sparse, rooms, ...")
    size: int = Field(ge=5, le=mazeset.MAX_SIZE, description="the side of the square maze")
    samples: int = Field(ge=1, le=1000, description="how many different mazes")

    def names(self, seed_id: str, taken: dict[str, str] | None = None, budget: DrawBudget | None = None) -> list[str]:
        """The seeded names of ``samples`` different mazes: ``FAMILY-SIZE@SEED``, each seed a hash of the sweep's
        seed id (``seeds.maze_sample_seed``) and an index. A draw whose grid is ``taken`` (grid hash -> name: the
        sweep's other mazes and earlier samples) is passed over (small mazes of a family repeat: 200 seeds give only
        14 different ``perfect-7``), so the samples are that many mazes, none of them another maze of the sweep."""
        family = mazeset.FAMILIES.get(self.family)
        if family is None:
            raise SweepFileError(f"unknown maze family {self.family!r}; families: {', '.join(mazeset.FAMILIES)}")
        try:
            family.check_size(self.size)
        except UnknownMaze as error:
            raise SweepFileError(str(error)) from None
        taken = {} if taken is None else taken
        budget = budget or DrawBudget()
        budget.expect(self.samples, self.size)
        names: list[str] = []
        draws = self.samples * SAMPLE_DRAWS_PER_MAZE
        for index in range(draws):
            name = f"{self.family}-{self.size}@{seeds.maze_sample_seed(seed_id, self.family, self.size, index)}"
            digest = budget.draw(name).content_hash
            if digest not in taken:
                taken[digest] = name
                names.append(name)
            if len(names) == self.samples:
                return names
        raise SweepFileError(
            f"{self.family}-{self.size} gave only {len(names)} different mazes in {draws} draws; "
            f"ask for at most that many samples, or a larger size"
        )


Grid = dict[str, Annotated[list[Any], Field(min_length=1)]]


def _agent_form(value: object) -> str:
    """Which form of an agent ``value`` is meant to be: a table (a mapping) or ``"provider/model"``, so that a
    mistake in a table is named for the table alone."""
    return "AgentEntry" if isinstance(value, dict | AgentEntry) else "str"


Agent = Annotated[Annotated[str, Tag("str")] | Annotated[AgentEntry, Tag("AgentEntry")], Discriminator(_agent_form)]


class SweepFile(BaseModel):
    """The sweep file (TOML or JSON); see docs/reference/sweep-file.md. Strict: a number is a number (not
    ``"3"``, not ``true``, not ``3.0`` where a count is meant), a name a string."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    id: str = Field(pattern=SWEEP_ID, description="recorded on every experiment it starts, and the key to resume")
    agents: list[Agent] = Field(
        min_length=1,
        description='"provider/model" ("baseline/explorer", "ollama/qwen2.5:7b"), or a table with its '
        "own settings, prices and cap",
    )
    prompts: list[str] = Field(["v1"], min_length=1, description="prompt versions")
    mazes: list[str | MazeId | MazeSample] = Field(min_length=1, description="names, ids, or samples of a family")
    repetitions: int = Field(1, ge=1, le=1000, description="runs of each cell")
    configs: list[dict[str, Any]] = Field(
        [{}],
        min_length=1,
        description="override sets, each one value of the matrix (an entry with agents = [...] "
        "is for those agents only)",
    )
    grid: Grid | list[Grid] = Field(
        default_factory=dict,
        description="every combination of these values, per config; several grids (or one "
        "with agents = [...]) for some agents",
    )
    seed_from: str | None = Field(
        None, pattern=SWEEP_ID, description="the sweep whose mazes and seeds this one replays"
    )
    concurrency: int | None = Field(
        None, ge=1, le=MAX_CONCURRENCY, description="experiments at once in all, shared among the providers"
    )
    provider_concurrency: dict[ProviderName, Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]] = Field(
        default_factory=dict, description="experiments at once per provider (defaults: the registry's caps)"
    )
    server_concurrency: dict[
        Annotated[str, Field(min_length=1, max_length=2048)], Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]
    ] = Field(
        default_factory=dict,
        max_length=len(LANES),
        description=f"experiments at once per model server, by its URL (an agent's endpoint or baseUrl; at most "
        f"{len(LANES)} servers and agents with caps of their own): its experiments run beside the providers' under "
        "this cap alone",
    )
    spend_limit_usd: float | None = Field(
        None,
        ge=0,
        le=MAX_SPEND_LIMIT_USD,
        description="no experiment starts unless what the sweep spent, its running experiments counted at their "
        "maxCostUsd, and the new one's maxCostUsd fit in this much",
    )
    unlimited_spend: bool = Field(
        False,
        description="on AWS, run a sweep of models without spend_limit_usd (each experiment is still capped by its "
        "maxCostUsd and maxInputTokens)",
    )
    comment: str | None = Field(None, max_length=1000, description="added to every experiment's comment")
    archived: bool = Field(
        False,
        description="its experiments are stored archived, out of every view, report and export (a deployment "
        "check's sweep)",
    )


class SweepRun(SweepFile):
    """The sweep state machine's input: the sweep file as JSON, plus the settings of this run (a file pasted
    into the console as it is runs with their defaults)."""

    retry_failed: bool = Field(
        False, description="run again repetitions whose experiment failed (a stopped one runs again anyway)"
    )
    allow_unpriced: bool = Field(False, description="under a spend limit, count a model without a known price at $0")
    wait_seconds: int = Field(
        30, ge=1, le=3600, description="the first waits between two looks at a running experiment's row"
    )
    cost_cap_usd: float | None = Field(
        None,
        ge=0.000001,
        le=100_000,
        description="the maxCostUsd of a model experiment whose configs name none: PlanSweep sets it from where the "
        "sweep runs, and the spend limit counts each experiment at it",
    )
    pause_after_errors: int = Field(
        PAUSE_AFTER_ERRORS,
        ge=0,
        le=1000,
        description="start no more experiments of an agent whose last this many experiments of the run ended in "
        "the same error (its model server is down or refuses it); 0: never",
    )


def next_check_wait(followed_seconds: int, wait_seconds: int) -> int:
    """Seconds to wait before the next look at an experiment an item has followed for ``followed_seconds`` (the
    sum of its waits so far): a tenth of that, at least the sweep's ``wait_seconds``, at most
    ``MAX_CHECK_WAIT_SECONDS`` unless ``wait_seconds`` is longer."""
    return max(wait_seconds, min(MAX_CHECK_WAIT_SECONDS, followed_seconds // CHECK_WAIT_FRACTION))


SweepModel = TypeVar("SweepModel", bound=SweepFile)


def check_input_size(data: object) -> None:
    """The sweep rides in every state of the sweep flow beside the plan's indices: at most MAX_INPUT_BYTES, as
    JSON with ASCII escapes (at least its UTF-8 size as Step Functions counts it). PlanSweep checks it, and so
    does the command line where it makes the input, so a dry run refuses what the run would."""
    size = len(json.dumps(data))
    if size > MAX_INPUT_BYTES:
        raise SweepFileError(
            f"the sweep input is larger than {MAX_INPUT_BYTES:,} bytes as JSON ({size:,}); a sweep "
            "file describes a matrix, it does not list it: use grid or samples, or split the sweep"
        )


def validate(model: type[SweepModel], data: object, what: str) -> SweepModel:
    """``data`` as a sweep file (or run); every field at fault named in one SweepFileError (``inputs.parse``, the one
    validation every input goes through)."""
    return inputs.parse(model, data, what, SweepFileError)


@dataclass(frozen=True)
class Cell:
    """One point of the matrix: who plays which maze, with which prompt and overrides (the agent's own with the
    file's configs and grid), under which label and at which prices."""

    provider: str
    model: str
    prompt: str
    maze: str
    config_json: str  # the overrides as canonical JSON (hashable)
    label: str = ""  # the agent's label ("" : provider/model)
    prices: Price | None = None  # the prices the file gives the agent

    @property
    def config(self) -> JsonObject:
        overrides: JsonObject = json.loads(self.config_json)
        return overrides

    @property
    def agent(self) -> str:
        return self.label or f"{self.provider}/{self.model}"

    @property
    def settings(self) -> JsonObject:
        """The overrides that make the cell what it is: all but the transport settings (``IDENTITY_LEAVES_OUT``)."""
        return {key: value for key, value in self.config.items() if key not in IDENTITY_LEAVES_OUT}

    @property
    def key(self) -> str:
        """A stable short hash of what the cell runs: the agent (provider and model, and its label when the file
        gives one: one model on two servers under two labels is two agents), prompt, maze and settings, not its
        prices or transport settings. The same file always gives the same keys, and so does the file with a
        server's URL or a timeout corrected."""
        identity = [
            self.provider,
            self.model,
            self.prompt,
            self.maze,
            self.settings,
            *([self.label] if self.label else []),
        ]
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]

    def describe(self) -> str:
        """The agent, prompt, maze and settings that make the cell (its server is shown where it matters: a dry
        run's ``-> server``)."""
        overrides = " ".join(f"{k}={json.dumps(v)}" for k, v in sorted(self.settings.items()))
        return " ".join(filter(None, (self.agent, self.prompt, self.maze, overrides)))


@dataclass(frozen=True)
class Planned:
    """One repetition of a cell: one experiment to have."""

    cell: Cell
    repetition: int

    def agent_id(self, sweep_id: str) -> str:
        return f"{sweep_id}/{self.cell.key}/r{self.repetition}"

    def seed(self, spec: SweepFile) -> int:
        """The repetition's seed: the cell's own ``seed`` if it fixes one, else one derived from the sweep's seed
        id (``seed_from``, else its id), the maze and the repetition, the same on every run and resume and for
        every agent of the sweep (``seeds.repetition_seed``)."""
        fixed: int | None = self.cell.config.get("seed")
        if fixed is not None:
            return fixed
        return seeds.repetition_seed(seed_id(spec), self.cell.maze, self.repetition)

    def execution_input(self, spec: SweepFile) -> JsonObject:
        """The experiment's execution input: the cell, its seed, the agent's prices from the file, the tags."""
        data: JsonObject = {
            "mazeId": self.cell.maze,
            "llmProvider": self.cell.provider,
            "modelName": self.cell.model,
            "promptVersion": self.cell.prompt,
            "agentId": self.agent_id(spec.id),
            "comment": " ".join(filter(None, (f"sweep:{spec.id}", spec.comment))),
            "sweepId": spec.id,
            "config": {**self.cell.config, "seed": self.seed(spec)},
        }
        if self.cell.label:
            data["agentLabel"] = self.cell.label
        if spec.archived:
            data["archived"] = True
        if self.cell.prices is not None:
            data["prices"] = {
                "inputPerMTok": self.cell.prices.input_per_mtok,
                "outputPerMTok": self.cell.prices.output_per_mtok,
                "source": self.cell.prices.source,
            }
        return data

    def execution_name(self, sweep_id: str, attempt: int) -> str:
        """The experiment's execution name (at most 80 characters), the same for every start of one attempt:
        a retried or resumed map item that starts it again meets the execution it already started."""
        return f"{sweep_id}-{self.cell.key}-r{self.repetition}-a{attempt}"


def seed_id(spec: SweepFile) -> str:
    """What the sweep's maze samples and repetition seeds derive from: the sweep it replays, else its own id."""
    return spec.seed_from or spec.id


def _label(entry: str | AgentEntry) -> str:
    return entry if isinstance(entry, str) else entry.label or f"{entry.provider}/{entry.model}"


def _grids(spec: SweepFile) -> list[Grid]:
    return [spec.grid] if isinstance(spec.grid, dict) else list(spec.grid)


def _for(entry: Mapping[str, Any], label: str) -> bool:
    """Whether a configs entry or a grid is for the agent (one naming its agents badly is refused by
    ``for_agents``: counted here as for every agent)."""
    names = entry.get(AGENTS_KEY)
    return not isinstance(names, list) or label in names


def size(spec: SweepFile) -> int:
    """How many experiments the file describes, counted without building the matrix: per agent, the configs
    entries and the combinations of the grids that are for it."""
    mazes = sum(m.samples if isinstance(m, MazeSample) else 1 for m in spec.mazes)
    per_agent = 0
    for label in map(_label, spec.agents):
        grid_values = [
            values for grid in _grids(spec) if _for(grid, label) for key, values in grid.items() if key != AGENTS_KEY
        ]
        per_agent += sum(_for(entry, label) for entry in spec.configs) * math.prod(map(len, grid_values))
    return per_agent * len(spec.prompts) * mazes * spec.repetitions


def maze_names(spec: SweepFile, stored: StoredMaze = _not_stored) -> list[str]:
    """The sweep's mazes by name, in the file's order: samples expanded to their seeded names (from the sweep's
    seed id), ids and names checked (``stored`` finds a maze the database holds, such as an imported one; shipped
    and seeded names need no database). The same maze twice (by name and by id, ``perfect-11@07`` and
    ``perfect-11@7``, two names of one grid) is refused; a sample passes over the grids the file names."""
    budget = DrawBudget()
    taken: dict[str, str] = {}  # grid hash -> the file's entry that names it
    named: dict[int, str] = {}
    for position, maze in enumerate(spec.mazes):
        if isinstance(maze, MazeSample):
            continue
        name, digest = _named_maze(maze, stored, budget)
        if digest in taken:
            raise SweepFileError(
                f"the maze {maze!r} comes out twice: {taken[digest]} names the same maze ({name}, "
                f"grid {digest[:12]}); list it once"
            )
        taken[digest], named[position] = repr(maze), name
    return [
        name
        for position, maze in enumerate(spec.mazes)
        for name in (maze.names(seed_id(spec), taken, budget) if isinstance(maze, MazeSample) else [named[position]])
    ]


def _named_maze(maze: str | int, stored: StoredMaze, budget: DrawBudget) -> tuple[str, str]:
    """A maze the file names: its name and grid hash (a seeded name not stored yet is drawn, on the budget)."""
    found = stored(maze)
    if found is not None:
        return found
    try:
        entry = (
            mazeset.get_maze(maze)
            if isinstance(maze, int) or not mazeset.SEEDED_NAME.fullmatch(maze)
            else budget.draw(maze)
        )
    except UnknownMaze as error:
        raise SweepFileError(str(error)) from None
    return entry.name, entry.content_hash


def agent_configs(spec: SweepFile, agent: SweepAgent, known: Mapping[str, SweepAgent]) -> list[JsonObject]:
    """Every override set ``agent`` runs with: each configs entry for it, crossed with every combination of the
    grids for it, and its own config on top. A key that does not apply to its provider, a key its own config
    and the file's entries both set, or two grids that set the same key are refused, each with the reason."""
    grids: dict[str, list[Any]] = {}
    for number, grid in enumerate(_grids(spec)):
        where = "grid" if isinstance(spec.grid, dict) else f"grid[{number}]"
        names, values = for_agents(grid, known, where)
        if names is not None and agent.label not in names:
            continue
        check_applies(agent, values, where)
        if twice := sorted(set(grids) & set(values)):
            raise SweepFileError(
                f"{where} sets {', '.join(twice)} again for agent {agent.label}: another grid sets "
                f"it; name the agents each grid is for with {AGENTS_KEY} = [...]"
            )
        grids.update(values)
    keys = sorted(grids)
    own = agent.config
    found = []
    for number, entry in enumerate(spec.configs):
        names, settings = for_agents(entry, known, f"configs[{number}]")
        if names is not None and agent.label not in names:
            continue
        check_applies(agent, settings, f"configs[{number}]")
        for combination in product(*(grids[k] for k in keys)):
            overrides = {**settings, **dict(zip(keys, combination, strict=True))}
            if clash := sorted(set(overrides) & set(own)):
                raise SweepFileError(
                    f"agent {agent.label} sets {', '.join(clash)} in its own config, and "
                    f"configs[{number}] or the grid sets it too: say it once (an entry or a grid "
                    f"for some agents only names them with {AGENTS_KEY} = [...])"
                )
            found.append({**overrides, **own})
    if not found:
        raise SweepFileError(
            f"agent {agent.label} has nothing to run: every configs entry names other agents; "
            f"add one for it (an empty {{}} runs it with the defaults)"
        )
    return found


def cells(spec: SweepFile, stored: StoredMaze = _not_stored) -> list[Cell]:
    """Every cell of the matrix, each checked before anything starts: its size, agents, mazes, overrides (and
    which apply to whom), the execution input each cell makes, and that no cell comes out twice."""
    if (planned := size(spec)) > MAX_EXPERIMENTS:
        raise SweepFileError(
            f"the sweep describes {planned:,} experiments; at most {MAX_EXPERIMENTS:,} fit in one file: split it"
        )
    agents = agents_of(spec.agents)
    known = {agent.label: agent for agent in agents}
    mazes = maze_names(spec, stored)
    found: dict[tuple[Any, ...], Cell] = {}
    run: dict[tuple[Any, ...], Cell] = {}  # what each cell sends, server and all: the same twice is one agent twice
    for agent in agents:
        configs = agent_configs(spec, agent, known)
        typed = [_cell_settings(agent, overrides) for overrides in configs]
        for prompt, maze, (overrides, (canonical, sent)) in product(
            spec.prompts, mazes, zip(configs, typed, strict=True)
        ):
            label = "" if agent.label == agent.name else agent.label
            cell = Cell(
                agent.provider, agent.model, prompt, maze, json.dumps(overrides, sort_keys=True), label, agent.prices
            )
            identity = (agent.provider, agent.model, label, prompt, maze, canonical)
            if identity in found:
                transport = sorted(IDENTITY_LEAVES_OUT & set(overrides))
                raise SweepFileError(
                    f"the cell {cell.describe()} comes out twice (a prompt, maze or configuration listed twice, a "
                    "setting written out at its default, a maze by name and by id, 1 and 1.0"
                    + (
                        f", or configurations that differ only in {', '.join(transport)}, not part of a cell"
                        if transport
                        else ""
                    )
                    + "): its runs would share one agent id and count twice"
                )
            if (twin := run.get((agent.provider, agent.model, prompt, maze, sent))) is not None:
                raise SweepFileError(
                    f"the cell {cell.describe()} comes out twice: agent {twin.agent} runs it already, with the same "
                    "model, server and settings under another label; list the agent once"
                )
            _check_seed(spec, cell)
            found[identity] = run[(agent.provider, agent.model, prompt, maze, sent)] = cell
            _check_input(spec, cell)
    capped_lanes(
        spec, list(found.values())
    )  # a cap for a server no agent uses, or an agent's above its server's: refused
    return list(found.values())


def _check_seed(spec: SweepFile, cell: Cell) -> None:
    """A seed fixed in a cell with more than one repetition would run one experiment that many times."""
    fixed = cell.config.get("seed", -1)
    if fixed != -1 and spec.repetitions > 1:
        raise SweepFileError(
            f"the cell {cell.describe()} fixes seed = {fixed} and has {spec.repetitions} "
            "repetitions: they would all be the same run. Leave seed out (each repetition gets its "
            "own, derived from the sweep id, the cell and the repetition), or set repetitions = 1"
        )


def _cell_settings(agent: SweepAgent, overrides: JsonObject) -> tuple[str, str]:
    """What makes a cell of ``agent`` with ``overrides``, and all it sends (``_typed``); a setting refused (a bad
    value, one that plays no part under the others: ``historyTurns`` without a historyMode that carries turns) names
    the agent and the combination, since a grid makes combinations the file never writes out."""
    try:
        return _typed(overrides), _typed(overrides, transport=True)
    except InvalidConfig as error:
        settings = {key: value for key, value in overrides.items() if key not in IDENTITY_LEAVES_OUT}
        shown = " ".join(f"{key}={json.dumps(value)}" for key, value in sorted(settings.items()))
        raise InvalidConfig(f"agent {agent.label} with {shown or 'the defaults'}: {error}") from None


def _typed(overrides: JsonObject, transport: bool = False) -> str:
    """The configuration that makes a cell (with ``transport``: all it sends, the server's URL included), as the
    experiment would hold it: every setting resolved, defaults included (the overrides are checked: unknown keys,
    types and ranges fail here, not in the middle of the sweep), as canonical JSON, compared by value: a setting
    written out at its default is the default, ``1`` and ``1.0`` of a float setting are the same, so are ``-0.0``
    and ``0.0``, and two spellings of one server's URL."""
    snapshot = resolve({}, overrides)
    return json.dumps(
        {
            key: canonical_value(BY_KEY[key], value)
            for key, value in snapshot.items()
            if transport or key not in IDENTITY_LEAVES_OUT
        },
        sort_keys=True,
    )


def _check_input(spec: SweepFile, cell: Cell) -> None:
    """The execution input of the cell's last repetition, as StartExperiment will check it (names, lengths,
    characters), so that no experiment of the sweep is rejected for its text."""
    try:
        inputs.parse(
            inputs.ExecutionInput,
            Planned(cell, spec.repetitions).execution_input(spec),
            f"execution input of {cell.describe()}",
        )
    except InvalidExecutionInput as error:
        raise SweepFileError(str(error)) from None


def check_prompts(spec: SweepFile, known: Mapping[str, str] | Iterable[str]) -> None:
    """Every prompt version the sweep names exists where it will run and, when ``known`` holds their texts, is
    one StartExperiment will take (checked before anything starts, so no experiment is rejected for it)."""
    missing = [version for version in spec.prompts if version not in known]
    if missing:
        raise SweepFileError(
            f"prompt version(s) {', '.join(missing)} not found; known: {', '.join(sorted(known))} "
            "(add one with `oriole prompts put`)"
        )
    if not isinstance(known, Mapping):
        return
    for version in spec.prompts:
        if problem := unstorable(known[version]) if known[version].strip() else "is empty":
            raise SweepFileError(f"prompt version {version} {problem}; store it again with `oriole prompts put`")


def unpriced_agents(matrix: list[Cell], stored_prices: Mapping[str, str]) -> list[str]:
    """The sweep's agents (``provider/model``) with no known price: none in the file, none in ``stored_prices``
    (Parameter Store's pricing names -> texts, where the sweep runs), none listed (``oriole.core.prices``)."""
    return prices.unpriced({(c.provider, c.model): c.prices for c in matrix}, stored_prices)


def check_prices(spec: SweepFile, matrix: list[Cell], stored_prices: Mapping[str, str], allow_unpriced: bool) -> None:
    """A sweep with a spend limit counts every model's tokens at a known price: an unpriced model is refused (its
    spend would count as 0), unless ``allow_unpriced`` says to count it at $0."""
    if spec.spend_limit_usd is None or allow_unpriced:
        return
    if missing := unpriced_agents(matrix, stored_prices):
        raise SweepFileError(
            f"no price is known for {', '.join(missing)}, and the sweep has spend_limit_usd = "
            f"{spec.spend_limit_usd:g}: its spend would count as $0. Give the agent prices in the file "
            "(prices = { input_per_mtok = ..., output_per_mtok = ... }), set them with `oriole prices set MODEL "
            "--input X --output Y` (--aws where it runs on AWS), or run with --allow-unpriced to count them at $0"
        )


def cost_cap(run: SweepRun, cell: Cell) -> float:
    """What the spend limit counts an experiment of ``cell`` at: its maxCostUsd (the cell's own, else the run's),
    nothing for an agent that calls no model."""
    if not PROVIDERS[cell.provider].calls_model:
        return 0.0
    capped = cell.config.get("maxCostUsd", run.cost_cap_usd)
    if capped is None:
        raise InvalidExecutionInput(f"sweep {run.id}: no maxCostUsd is known for {cell.agent} (PlanSweep sets it)")
    return float(capped)


def check_spending(run: SweepRun, matrix: list[Cell], required: bool) -> None:
    """What a sweep may spend, before anything starts: where a spend limit is ``required`` (on AWS) a sweep of
    models without one is refused unless the file says ``unlimited_spend = true``; under a limit, an experiment
    whose maxCostUsd alone is over it could never start, which is refused too."""
    models = [c for c in matrix if PROVIDERS[c.provider].calls_model]
    if run.spend_limit_usd is None:
        if required and models and not run.unlimited_spend:
            raise SweepFileError(
                f"sweep {run.id} runs models ({models[0].agent}) without spend_limit_usd: on AWS a sweep's spend "
                "is bounded by its limit; set spend_limit_usd = <USD> in the file, or unlimited_spend = true to "
                "run with each experiment's maxCostUsd as the only bound"
            )
        return
    over = [c for c in models if cost_cap(run, c) > run.spend_limit_usd]
    if over:
        raise SweepFileError(
            f"sweep {run.id}: spend_limit_usd = {run.spend_limit_usd:g} is below one experiment's maxCostUsd "
            f"({cost_cap(run, over[0]):g} for {over[0].agent}), so no experiment could start: set maxCostUsd lower "
            "in the file's configs, or raise the limit"
        )


def plan(spec: SweepFile, stored: StoredMaze = _not_stored) -> list[Planned]:
    """Every experiment of the sweep, first repetitions first: stopped early (spend cap, a stopped execution),
    a sweep has covered every cell evenly."""
    matrix = cells(spec, stored)
    return [Planned(cell, repetition) for repetition in range(1, spec.repetitions + 1) for cell in matrix]


def planned_at(matrix: list[Cell], index: int) -> Planned:
    """Entry ``index`` of the plan over ``matrix`` (``plan(spec)[index]``, without building the list)."""
    repetition, cell = divmod(index, len(matrix))
    return Planned(matrix[cell], repetition + 1)


@pydantic.dataclasses.dataclass(frozen=True)
class SweepExperiment:
    """An experiment a sweep started (its ``agent_id``: ``<sweep id>/<cell key>/r<repetition>``), as the store
    reads it: its status and ending, the execution that started it and the one that runs it now, what it has
    spent (tokens in and out, dollars) and why it failed. A pydantic dataclass: the row's text becomes the enum
    member its field declares."""

    id: int
    agent_id: str
    status: ExperimentStatus
    ending: Ending | None
    origin_execution_arn: str
    last_execution_arn: str
    tokens: int
    cost_usd: float | None  # None: its model has no price
    failure_reason: str | None


@dataclass(frozen=True)
class Repetition:
    """Where one repetition stands, from its experiments (oldest first): ``ended`` is the status of the
    experiment that makes it done (None: it is to run), ``attempt`` how many earlier attempts ended without a
    run (an error of the infrastructure or provider, or a stop; a model that stalled or gave up ended on its
    merits)."""

    ended: ExperimentStatus | None
    attempt: int


def repetition(attempts: Sequence[SweepExperiment], retry_failed: bool) -> Repetition:
    """A repetition is done once it has a run (a success or an agent ending). Its latest attempt that ended
    otherwise keeps it done only when that attempt failed (an error: run again with ``retry_failed``); a stopped
    one (Ctrl-C, ``oriole doctor --fix``: ``STOPPED``) is run again by a plain resume."""
    latest_first = list(reversed(attempts))
    failed = [row for row in latest_first if row.ending is not None and row.ending not in RUNS]
    ended = next((row.status for row in latest_first if row.ending in RUNS), None)
    if ended is None and failed and failed[0].status not in STOPPED and not retry_failed:
        ended = failed[0].status
    return Repetition(ended, len(failed))


def pause_reason(latest: Sequence[SweepExperiment], after: int) -> str | None:
    """Why an agent is paused, given its latest closed experiments of this run (newest first): its ``after``
    latest all ended in an error (the infrastructure or the provider, never the agent's own failure) with the same
    failure reason (numbers aside: an experiment's id or an execution's name differs from one to the next), which
    is returned; None when they did not (or ``after`` is 0: never pause)."""
    if after < 1 or len(latest) < after:
        return None
    shown = latest[:after]
    if any(row.ending != Ending.ERROR for row in shown):
        return None
    reasons = {_NUMBERS.sub("#", row.failure_reason or "") for row in shown}
    return (shown[0].failure_reason or "an error") if len(reasons) == 1 else None


_NUMBERS = re.compile(r"\d+")


def by_repetition(rows: Iterable[SweepExperiment]) -> dict[str, list[SweepExperiment]]:
    """A sweep's experiments (oldest first) by repetition (their agent id)."""
    attempts: dict[str, list[SweepExperiment]] = {}
    for row in rows:
        attempts.setdefault(row.agent_id, []).append(row)
    return attempts


def pending(sweep_id: str, planned: list[Planned], rows: Iterable[SweepExperiment], retry_failed: bool) -> list[int]:
    """The plan indices left to run, given the sweep's stored experiments (oldest first): every repetition
    without a run (a success or an agent ending) nor, unless ``retry_failed``, an error ending."""
    attempts = by_repetition(rows)
    return [
        index
        for index, item in enumerate(planned)
        if repetition(attempts.get(item.agent_id(sweep_id), []), retry_failed).ended is None
    ]


def cell_server(cell: Cell) -> str | None:
    """The model server a cell's experiments send to, as a sweep names it (its URL in canonical form: the agent's
    endpoint or baseUrl, else the catalog's default); None for a provider that has no servers to name."""
    servers = PROVIDERS[cell.provider].servers
    if servers is None:
        return None
    key = BY_KEY[servers.key]
    return str(canonical_value(key, cell.config.get(servers.key, key.default)))


@dataclass(frozen=True)
class Lane:
    """A map of the sweep flow (``name``, one of ``LANES``) for experiments capped on their own, beside the
    providers' maps: a capped agent's (``agent``, its label) or a capped server's other agents' (``agent`` None).
    ``cap`` is the cap the file names; ``server`` and ``server_cap`` the capped server (``server_concurrency``)
    whose cap the lane shares with the server's other lanes (None: an agent whose server has no cap of its own)."""

    name: str
    cap: int
    server: str | None = None
    server_cap: int | None = None
    agent: str | None = None

    def describe(self) -> str:
        return f"agent {self.agent}" if self.agent is not None else f"server {self.server}"


def capped_lanes(spec: SweepFile, matrix: Sequence[Cell]) -> list[Lane]:
    """The sweep's lanes, each checked: an agent with a ``concurrency`` of its own runs in a lane under that cap
    alone (not its provider's), and a server the file caps (``server_concurrency``) runs its other agents in a lane
    of its own; a capped server's cap is shared among its lanes (``caps``). An agent's cap above its server's, an
    agent with a cap sending to a capped server and to another, a server whose cap is smaller than its lanes, and
    more lanes than ``LANES`` are refused, each with what to change."""
    servers = _server_caps(spec, matrix)
    own = {agent.label: agent.concurrency for agent in agents_of(spec.agents) if agent.concurrency is not None}
    sends_to: dict[str, set[str | None]] = {}
    for cell in matrix:
        sends_to.setdefault(cell.agent, set()).add(cell_server(cell))
    found: list[tuple[int, str | None, str | None]] = [
        (cap, _capped_server(label, cap, sends_to.get(label, set()), servers), label) for label, cap in own.items()
    ]
    rest = {cell_server(cell) for cell in matrix if cell.agent not in own}
    found += [(cap, server, None) for server, cap in sorted(servers.items()) if server in rest]
    if len(found) > len(LANES):
        named = ", ".join(f"agent {label}" if label else f"server {server}" for _, server, label in found)
        raise SweepFileError(
            f"the sweep caps {len(found)} groups of experiments on their own ({named}); at most {len(LANES)} fit "
            "(each runs in a lane of its own): drop some agents' concurrency or some servers' server_concurrency"
        )
    for server, server_cap in servers.items():
        sharing = [label or "its other agents" for _, at, label in found if at == server]
        if len(sharing) > server_cap:
            raise SweepFileError(
                f"server_concurrency caps {server} at {server_cap}, fewer than the lanes that share it, each running "
                f"at least one experiment at once ({', '.join(sharing)}): raise the server's cap, or drop the "
                "agents' own concurrency"
            )
    return [
        Lane(name, cap, server, servers.get(server or ""), label)
        for name, (cap, server, label) in zip(LANES, found, strict=False)
    ]


def _capped_server(label: str, cap: int, sends_to: set[str | None], servers: Mapping[str, int]) -> str | None:
    """The capped server an agent with a cap of its own shares (None: its server has no cap), checked."""
    capped = sorted(server for server in sends_to if server is not None and server in servers)
    if not capped:
        return None
    server = capped[0]
    if len(sends_to) > 1:
        raise SweepFileError(
            f"agent {label} has a concurrency of its own and sends to {len(sends_to)} model servers, {server} "
            "capped by server_concurrency: list the agent once per server (a label each)"
        )
    if cap > servers[server]:
        raise SweepFileError(
            f"agent {label}: concurrency = {cap} is above the cap of its server {server} (server_concurrency "
            f"{servers[server]}): lower the agent's to at most {servers[server]}, or raise the server's"
        )
    return server


def _server_caps(spec: SweepFile, matrix: Sequence[Cell]) -> dict[str, int]:
    """The servers the file caps (``server_concurrency``, in canonical form) -> their caps, each checked: a URL no
    agent of the sweep sends to is refused, with the servers that the sweep's agents do use."""
    used = sorted({server for server in map(cell_server, matrix) if server is not None})
    capped = {_server_url(written): n for written, n in spec.server_concurrency.items()}
    for written in spec.server_concurrency:
        if _server_url(written) not in used:
            raise SweepFileError(
                f"server_concurrency names {written}, which no agent of the sweep sends to; its model servers: "
                + (", ".join(used) or "none (no agent calls a model)")
            )
    if len(capped) < len(spec.server_concurrency):
        raise SweepFileError("server_concurrency names one server twice (two spellings of its URL)")
    return capped


def _server_url(written: str) -> str:
    """A server_concurrency key as a URL in canonical form (how ``cell_server`` names a server)."""
    param = BY_KEY["baseUrl"]
    if problem := url_problem(written, param.url_schemes):
        raise SweepFileError(f"server_concurrency: {written!r} {problem}, like {param.default}")
    return str(canonical_value(param, written))


def lane_of(cell: Cell, lanes: Sequence[Lane]) -> str:
    """The map a cell's experiments run in: its agent's lane when the agent has a cap of its own, else its server's
    lane when the file caps the server, else its provider's map."""
    server = cell_server(cell)
    by_agent = next((lane.name for lane in lanes if lane.agent == cell.agent), None)
    by_server = next((lane.name for lane in lanes if lane.agent is None and lane.server == server), None)
    return by_agent or by_server or cell.provider


def caps(
    spec: SweepFile, providers: Iterable[str], at_once: int | None = None, lanes: Sequence[Lane] = ()
) -> dict[str, int]:
    """Experiments at once per map: per provider the defaults, then the file's ``provider_concurrency``; per lane
    (``lanes``) the cap it names, and 1 for a lane no group uses. A capped server's cap is shared out among its
    lanes the run uses (``providers``: providers and lanes), and so are a total ``concurrency`` and the most the
    account lets run at once (``at_once``, ``experiments_at_once``) among all the maps the run uses, because each
    map runs on its own (the largest cap gives first, none below 1)."""
    limits = {p: spec.provider_concurrency.get(p, PROVIDERS[p].sweep_cap) for p in NAMES}
    limits.update({lane: 1 for lane in LANES} | {lane.name: lane.cap for lane in lanes})
    used = [p for p in (*NAMES, *LANES) if p in set(providers)]
    for server_cap, server in sorted({(lane.server_cap, lane.server) for lane in lanes if lane.server_cap}):
        _share(limits, [lane.name for lane in lanes if lane.server == server and lane.name in used], server_cap)
    for total in (spec.concurrency, at_once):
        if total is not None:
            limits = {group: min(n, total) for group, n in limits.items()}
            _share(limits, used, total)
    return limits


def _share(limits: dict[str, int], maps: Sequence[str], total: int) -> None:
    """Cap ``maps`` at ``total`` together: none above it, then the largest gives one until they fit (none below 1)."""
    for group in maps:
        limits[group] = min(limits[group], total)
    while sum(limits[group] for group in maps) > total and any(limits[group] > 1 for group in maps):
        largest = max(maps, key=lambda group: limits[group])
        limits[largest] -= 1


def experiments_at_once(concurrency: int | None, providers: int) -> int | None:
    """The most experiments a sweep runs at once in an account whose Lambda runs at most ``concurrency`` functions at
    once (its unreserved concurrency, ``lambda:GetAccountSettings``; None: not known, no limit): each running
    experiment keeps about one function busy (a model turn for up to 15 minutes), and a tenth of the account's
    (at least ``LAMBDA_HEADROOM``) stays free for the sweep's own looks, the status-change finalizer and the
    reconciler. Fewer than one experiment per provider's map is refused."""
    if concurrency is None:
        return None
    room = concurrency - max(LAMBDA_HEADROOM, concurrency // 10)
    if room < max(1, providers):
        raise SweepFileError(
            f"the account's Lambda concurrency ({concurrency} functions at once) leaves room for {max(room, 0)} "
            f"experiment(s) at once, fewer than the sweep's {providers} provider(s) need: ask for a higher "
            "'Concurrent executions' quota (Service Quotas, AWS Lambda), or run the providers in separate sweeps"
        )
    return room
