"""``oriole sweep FILE``: a matrix of experiments (agents x prompt versions x mazes x configurations x
repetitions), run with concurrency caps and a spend cap, resumable.

Tagging needs no field beyond the execution input's own: every experiment of sweep ``S`` gets the comment
``sweep:S`` (a tag that ``oriole report --tag`` and the views' ``sweep_id`` column read) and the agent id
``S/<cell key>/r<repetition>``, where the cell key is a hash of (provider, model, prompt version, maze,
config overrides). Running the file again reads the sweep's experiments back by that agent id and skips
every repetition that already ended (a run: succeeded, timed out or ended by the agent, such as stalled;
and, unless ``--retry-failed``, an error); a repetition still open is followed on AWS (its execution runs
there) and started again locally (the process that ran it is gone).

Locally the experiments run through one ``LocalAws`` (moto executes the state machine, each execution on
its own thread); with ``--aws`` the CLI starts executions of the deployed state machine with boto3. Both go
through the same ``Launcher``, which follows an experiment by reading its row, so the scheduling below is
the same code.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import tomllib
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from oriole import inputs, mazeset, progress
from oriole.baselines import BASELINE_NAMES
from oriole.config import resolve
from oriole.errors import InvalidExecutionInput, OrioleError, UnknownMaze
from oriole.inputs import PROVIDERS
from oriole_workstation.display import terminal_safe
from oriole_workstation.launcher import RunResult
from oriole_workstation.results import Results

RUNS = (progress.SUCCESS_ENDING, progress.AGENT_ENDING)  # ended on the agent's merits: never run again
ERRORS = (progress.ERROR_ENDING,)  # infrastructure or provider errors: run again only with --retry-failed
NOT_STARTED = "not started"
REJECTED = "rejected"  # StartExperiment refused the input: no experiment
AWS_PROVIDER_CONCURRENCY = {"bedrock": 4, "ollama": 1, "openai": 4, "baseline": 8}
LOCAL_CONCURRENCY = 2
MAX_CONCURRENCY = 1000
MAX_EXPERIMENTS = 20_000  # per file, counted before the matrix is built: a typo in a grid cannot eat the memory
MAX_FILE_BYTES = 1024 * 1024


class SweepFileError(OrioleError):
    """The sweep file cannot be read or describes an impossible matrix."""


SAMPLE_DRAWS_PER_MAZE = 20  # how hard a sample looks for mazes it does not have yet


class MazeSample(BaseModel):
    """``{ family = "perfect", size = 11, samples = 30 }``: that many seeded mazes of a family at a size, their
    seeds derived from the sweep id, so running the file again draws the same mazes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str
    size: int = Field(ge=5, le=mazeset.MAX_SIZE)
    samples: int = Field(ge=1, le=1000)

    def names(self, sweep_id: str) -> list[str]:
        """The seeded names of ``samples`` different mazes: ``FAMILY-SIZE@SEED``, each seed a hash of the sweep id
        and an index. A draw whose grid an earlier sample already has is passed over (small mazes of a family
        repeat: 200 seeds give only 14 different ``perfect-7``), so the samples are that many mazes."""
        family = mazeset.FAMILIES.get(self.family)
        if family is None:
            raise SweepFileError(f"unknown maze family {self.family!r}; families: {', '.join(mazeset.FAMILIES)}")
        try:
            family.check_size(self.size)
        except UnknownMaze as error:
            raise SweepFileError(str(error)) from None
        names: dict[str, str] = {}  # grid hash -> the first name that drew it
        draws = self.samples * SAMPLE_DRAWS_PER_MAZE
        for index in range(draws):
            name = f"{self.family}-{self.size}@{_sample_seed(sweep_id, self, index)}"
            names.setdefault(mazeset.seeded(name).content_hash, name)
            if len(names) == self.samples:
                return list(names.values())
        raise SweepFileError(f"{self.family}-{self.size} gave only {len(names)} different mazes in {draws} draws; "
                             f"ask for at most that many samples, or a larger size")


def _sample_seed(sweep_id: str, sample: MazeSample, index: int) -> int:
    digest = hashlib.sha256(f"{sweep_id}/{sample.family}-{sample.size}/{index}".encode()).hexdigest()
    return int(digest[:12], 16)


class SweepFile(BaseModel):
    """The sweep file (TOML or JSON); see the README's "Sweeps" section."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,40}$")
    agents: list[str] = Field(min_length=1)  # "provider/model": "baseline/explorer", "openai/Qwen/Qwen3-8B"
    prompts: list[str] = Field(["v1"], min_length=1)
    mazes: list[str | int | MazeSample] = Field(min_length=1)  # names, ids, or samples of a family
    repetitions: int = Field(1, ge=1, le=1000)
    configs: list[dict[str, Any]] = Field([{}], min_length=1)  # override sets, each one value of the matrix
    # every combination of these values, per config
    grid: dict[str, Annotated[list[Any], Field(min_length=1)]] = Field(default_factory=dict)
    concurrency: int | None = Field(None, ge=1, le=MAX_CONCURRENCY)
    provider_concurrency: dict[Literal[PROVIDERS],
                               Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]] = Field(default_factory=dict)
    spend_limit_usd: float | None = Field(None, ge=0)
    comment: str | None = Field(None, max_length=1000)


@dataclass(frozen=True)
class Cell:
    """One point of the matrix: who plays which maze, with which prompt and overrides."""

    provider: str
    model: str
    prompt: str
    maze: str
    config_json: str  # the overrides as canonical JSON (hashable)

    @property
    def config(self) -> dict:
        return json.loads(self.config_json)

    @property
    def key(self) -> str:
        """A stable short hash of the cell: the same file always gives the same keys."""
        identity = json.dumps([self.provider, self.model, self.prompt, self.maze, self.config], sort_keys=True)
        return hashlib.sha256(identity.encode()).hexdigest()[:12]

    def describe(self) -> str:
        overrides = " ".join(f"{k}={json.dumps(v)}" for k, v in sorted(self.config.items()))
        return " ".join(filter(None, (f"{self.provider}/{self.model}", self.prompt, self.maze, overrides)))


@dataclass(frozen=True)
class Planned:
    """One repetition of a cell: one experiment to have."""

    cell: Cell
    repetition: int

    def agent_id(self, sweep_id: str) -> str:
        return f"{sweep_id}/{self.cell.key}/r{self.repetition}"

    def execution_input(self, sweep_id: str, comment: str | None) -> dict:
        return {"mazeId": self.cell.maze, "llmProvider": self.cell.provider, "modelName": self.cell.model,
                "promptVersion": self.cell.prompt, "agentId": self.agent_id(sweep_id),
                "comment": " ".join(filter(None, (f"sweep:{sweep_id}", comment))), "config": self.cell.config}

    def execution_name(self, sweep_id: str) -> str:
        """Unique per attempt (at most 80 characters): a retried repetition gets a new execution."""
        return f"{sweep_id}-{self.cell.key}-r{self.repetition}-{uuid.uuid4().hex[:8]}"


def load(path: Path) -> SweepFile:
    """Read and validate a sweep file (``.toml`` or ``.json``, UTF-8, at most ``MAX_FILE_BYTES``)."""
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise SweepFileError(f"cannot read {path}: {error.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise SweepFileError(f"{path} is larger than {MAX_FILE_BYTES:,} bytes; a sweep file describes a matrix, "
                             "it does not list it")
    try:
        text = raw.decode("utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
        return SweepFile.model_validate(data)
    except UnicodeDecodeError as error:
        raise SweepFileError(f"{path} is not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start})"
                             ) from None
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in error.errors())
        raise SweepFileError(f"{path}: {problems}") from None
    except (ValueError, RecursionError) as error:  # TOML and JSON syntax errors are ValueErrors
        raise SweepFileError(f"{path} is not valid {'JSON' if path.suffix == '.json' else 'TOML'}: "
                             f"{error if isinstance(error, ValueError) else 'nested too deeply'}") from None


def _agent(text: str) -> tuple[str, str]:
    provider, _, model = text.partition("/")
    if provider not in PROVIDERS or not model:
        raise SweepFileError(f"agent {text!r} must be provider/model with provider one of {', '.join(PROVIDERS)}")
    if provider == "baseline" and model not in BASELINE_NAMES:
        raise SweepFileError(f"agent {text!r}: the baselines are {', '.join(BASELINE_NAMES)}")
    return provider, model


def size(spec: SweepFile) -> int:
    """How many experiments the file describes, counted without building the matrix."""
    dimensions = (spec.agents, spec.prompts, spec.configs, *spec.grid.values())
    mazes = sum(m.samples if isinstance(m, MazeSample) else 1 for m in spec.mazes)
    return math.prod(map(len, dimensions)) * mazes * spec.repetitions


def maze_names(spec: SweepFile, stored: Callable[[str | int], str | None] = lambda key: None) -> list[str]:
    """The sweep's mazes by name: samples expanded to their seeded names, ids and names checked (``stored``
    names a maze the database holds, such as an imported one; shipped and seeded names need no database)."""
    names: list[str] = []
    for maze in spec.mazes:
        if isinstance(maze, MazeSample):
            names += maze.names(spec.id)
            continue
        try:
            names.append(stored(maze) or mazeset.get_maze(maze).name)
        except UnknownMaze as error:
            raise SweepFileError(str(error)) from None
    return names


def cells(spec: SweepFile, stored: Callable[[str | int], str | None] = lambda key: None) -> list[Cell]:
    """Every cell of the matrix, each checked before anything starts: its size, agents, mazes, overrides, the
    execution input each cell makes, and that no cell comes out twice."""
    if (planned := size(spec)) > MAX_EXPERIMENTS:
        raise SweepFileError(f"the sweep describes {planned:,} experiments; at most {MAX_EXPERIMENTS:,} fit in one "
                             "file: split it")
    agents = [_agent(a) for a in spec.agents]
    mazes = maze_names(spec, stored)
    keys = sorted(spec.grid)
    configs = [{**base, **dict(zip(keys, values, strict=True))}
               for base in spec.configs for values in product(*(spec.grid[k] for k in keys))]
    typed = [_typed(overrides) for overrides in configs]
    found: dict[tuple, Cell] = {}
    for (provider, model), prompt, maze, (overrides, canonical) in product(agents, spec.prompts, mazes,
                                                                          zip(configs, typed, strict=True)):
        cell = Cell(provider, model, prompt, maze, json.dumps(overrides, sort_keys=True))
        identity = (provider, model, prompt, maze, canonical)
        if identity in found:
            raise SweepFileError(f"the cell {cell.describe()} comes out twice (an agent, prompt, maze or configuration "
                                 "listed twice, a maze by name and by id, 1 and 1.0): its runs would share one agent "
                                 "id and count twice")
        found[identity] = cell
        _check_input(spec, cell)
    return list(found.values())


def _typed(overrides: dict) -> str:
    """The overrides as the experiment would hold them (checked: unknown keys, types and ranges fail here, not in
    the middle of the sweep), as canonical JSON: ``1`` and ``1.0`` of a float setting are the same."""
    snapshot = resolve({}, overrides)
    return json.dumps({key: snapshot[key] for key in overrides}, sort_keys=True)


def _check_input(spec: SweepFile, cell: Cell) -> None:
    """The execution input of the cell's last repetition, as StartExperiment will check it (names, lengths,
    characters), so that no experiment of the sweep is rejected for its text."""
    try:
        inputs.parse(inputs.ExecutionInput, Planned(cell, spec.repetitions).execution_input(spec.id, spec.comment),
                     f"execution input of {cell.describe()}")
    except InvalidExecutionInput as error:
        raise SweepFileError(str(error)) from None


def check_prompts(spec: SweepFile, known: Iterable[str]) -> None:
    """Every prompt version the sweep names exists where it will run (checked before anything starts)."""
    known = set(known)
    missing = [version for version in spec.prompts if version not in known]
    if missing:
        raise SweepFileError(f"prompt version(s) {', '.join(missing)} not found; known: {', '.join(sorted(known))} "
                             "(add one with `oriole prompts put`)")


def plan(spec: SweepFile, stored: Callable[[str | int], str | None] = lambda key: None) -> list[Planned]:
    """Every experiment of the sweep, first repetitions first: stopped early (spend cap, Ctrl-C), a sweep
    has covered every cell evenly."""
    matrix = cells(spec, stored)
    return [Planned(cell, repetition) for repetition in range(1, spec.repetitions + 1) for cell in matrix]


def pending(sweep_id: str, planned: list[Planned], rows: list[dict], retry_failed: bool
            ) -> list[tuple[Planned, dict | None]]:
    """What is left to run, given the sweep's stored experiments (oldest first): each planned experiment
    with its still-open experiment row, if it has one."""
    history: dict[str, list[dict]] = {}
    for row in rows:
        history.setdefault(row["agent_id"], []).append(row)
    todo = []
    for item in planned:
        attempts = history.get(item.agent_id(sweep_id), [])
        endings = {row["ending"] for row in attempts}
        if endings & set(RUNS) or (endings & set(ERRORS) and not retry_failed):
            continue
        latest = attempts[-1] if attempts else None
        todo.append((item, latest if latest and latest["status"] == "running" else None))
    return todo


# --- launching and waiting -------------------------------------------------------------------------------


class Launcher(Protocol):
    """What a sweep needs of ``oriole_workstation.launcher.Launcher``: start an execution, follow it."""

    def start(self, execution_input: dict, name: str | None = None) -> str: ...

    def follow(self, execution_arn: str, results: Results, on_progress: Callable[[dict], None]) -> RunResult: ...


# --- running the sweep -----------------------------------------------------------------------------------


class Interrupted(Exception):
    """Raised inside a worker's wait when the sweep is being stopped (Ctrl-C)."""


@dataclass(frozen=True)
class Finished:
    """What became of one planned experiment."""

    planned: Planned
    status: str  # an experiment status, "rejected", or NOT_STARTED
    summary: dict | None
    reason: str | None = None


class Tracker:
    """Progress on stderr: a bar over the whole sweep, and a line per experiment as it ends."""

    def __init__(self, console: Console, total: int, show_lines: bool = True):
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[running]} running · ${task.fields[spent]:.4f}"),
                                 TimeElapsedColumn(), console=console, transient=True)
        self.task = self.progress.add_task("sweep", total=total, running=0, spent=0.0)
        self.lock = threading.Lock()
        self.running = 0
        self.show_lines = show_lines

    def __enter__(self) -> Tracker:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def started(self) -> None:
        with self.lock:
            self.running += 1
            self.progress.update(self.task, running=self.running)

    def finished(self, result: Finished, spent: float | None, was_running: bool) -> None:
        with self.lock:
            self.running -= was_running
            fields = {"running": self.running} | ({"spent": spent} if spent is not None else {})
            self.progress.update(self.task, advance=1, **fields)
            if self.show_lines:
                summary = result.summary
                what = f"#{summary['experiment_id']} {result.status}, {summary['actions']} actions" if summary \
                    else result.status + (f": {result.reason}" if result.reason else "")
                line = f"{result.planned.cell.describe()} r{result.planned.repetition}: {what}"
                self.progress.console.print(terminal_safe(line), highlight=False, markup=False)


def _semaphore(limit: int | None):
    return threading.BoundedSemaphore(limit) if limit else nullcontext()


def execute(sweep_id: str, todo: list[tuple[Planned, dict | None]], launcher: Launcher,
            connect: Callable[[], Results], tracker: Tracker, *, follows_open: bool, concurrency: int | None,
            provider_concurrency: dict[str, int], spend_limit: float | None, comment: str | None
            ) -> list[Finished]:
    """Run ``todo`` under the caps: at most ``concurrency`` experiments at once in all, at most
    ``provider_concurrency[p]`` of provider ``p``; before each start, the sweep's spend so far (running
    experiments included) is read and nothing more starts once it reaches ``spend_limit``.

    ``follows_open``: an open experiment found on resume is still being run (on AWS) and is followed, or
    was abandoned (locally: its process is gone) and is started again. Each provider has its own worker
    pool, so a provider at its cap never holds up another.
    """
    total = _semaphore(concurrency)
    spend_reached, stop = threading.Event(), threading.Event()

    def check(_summary: dict) -> None:
        if stop.is_set():
            raise Interrupted

    def one(item: Planned, open_row: dict | None) -> Finished:
        with total, _store(connect) as store:
            if stop.is_set():
                return Finished(item, NOT_STARTED, None, "interrupted")
            if open_row is not None and follows_open:
                arn = open_row["origin_execution_arn"]
            else:
                if spend_limit is not None and (spend_reached.is_set() or store.sweep_spend(sweep_id) >= spend_limit):
                    spend_reached.set()
                    result = Finished(item, NOT_STARTED, None, f"spend limit ${spend_limit:g} reached")
                    tracker.finished(result, None, was_running=False)
                    return result
                arn = launcher.start(item.execution_input(sweep_id, comment), item.execution_name(sweep_id))
            tracker.started()
            try:
                run = launcher.follow(arn, store, check)
            except Interrupted:
                return Finished(item, NOT_STARTED, None, "interrupted")
            if run.summary is None:
                result = Finished(item, REJECTED, None, run.as_json()["failure_reason"])
            else:
                result = Finished(item, run.summary["status"], run.summary, run.summary["failure_reason"])
            tracker.finished(result, store.sweep_spend(sweep_id), was_running=True)
            return result

    providers = sorted({item.cell.provider for item, _ in todo})
    pools = {p: ThreadPoolExecutor(max_workers=min(filter(None, (concurrency, provider_concurrency.get(p),
                                                                   sum(i.cell.provider == p for i, _ in todo)))),
                                   thread_name_prefix=f"sweep-{p}") for p in providers}
    futures = [pools[item.cell.provider].submit(one, item, open_row) for item, open_row in todo]
    try:
        return [future.result() for future in futures]
    except BaseException:  # Ctrl-C: the waiting workers see ``stop`` at their next poll and return
        stop.set()
        raise
    finally:
        for pool in pools.values():
            pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def _store(connect: Callable[[], Results]) -> Iterator[Results]:
    store = connect()
    try:
        yield store
    finally:
        store.conn.close()


def summarize(results: list[Finished], skipped: int, spent: float) -> str:
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    parts = [f"{n} {status.replace('_', ' ')}" for status, n in sorted(counts.items())]
    return (f"{len(results) + skipped} planned: {skipped} already done"
            + (f", {', '.join(parts)}" if parts else "") + f"; spent ${spent:.4f}\n")


def provider_caps(spec: SweepFile, options: list[str], aws: bool) -> dict[str, int]:
    """Experiments at once per provider: AWS's defaults, then the file's, then ``PROVIDER=N`` options."""
    caps = dict(AWS_PROVIDER_CONCURRENCY) if aws else {}
    caps.update(spec.provider_concurrency)
    for option in options:
        provider, _, value = option.partition("=")
        count = int(value) if value.isdecimal() and len(value) < 5 else 0
        if provider not in PROVIDERS or not 1 <= count <= MAX_CONCURRENCY:
            raise SweepFileError(f"--provider-concurrency expects PROVIDER=N with a provider among "
                                 f"{', '.join(PROVIDERS)} and N from 1 to {MAX_CONCURRENCY}; got {option!r}")
        caps[provider] = count
    return caps
