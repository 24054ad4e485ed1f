"""``oriole sweep``: the researcher's side of a sweep. The sweep itself (its file's model, the matrix, resume, the
caps) is the runtime's (``oriole.core.sweep_plan``) and runs as the sweep state machine: one execution per sweep, its
tasks in Lambda, locally under moto through ``LocalAws``.

Here: reading a sweep file (TOML or JSON), the execution input a command line makes of it, submitting it under
a deterministic name, following a local run (progress from the database, the end of an experiment whose
execution died reported as EventBridge would, a clean stop on Ctrl-C), and the summary and status lines.
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oriole.core.sweep_agents import MAX_CONCURRENCY
from oriole.core.sweep_plan import (
    PAUSE_AFTER_ERRORS,
    SweepExperiment,
    SweepFile,
    SweepRun,
    check_input_size,
    validate,
)
from oriole.errors import OrioleError, SweepFileError
from oriole.lifecycle.experiments import failure_reason
from oriole.lifecycle.task_io import CaughtError
from oriole.provider_registry import NAMES
from oriole.statuses import TERMINAL_EXECUTION_STATUSES, ExecutionStatus, ExperimentStatus
from oriole.text import MAX_JSON_DEPTH, NestedTooDeeply, ascii_int, load_json
from oriole_workstation import files
from oriole_workstation.results import Results
from oriole_workstation.sweep_progress import SweepProgress

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions.type_defs import DescribeExecutionOutputTypeDef

    from oriole_workstation.runner import LocalAws

MAX_FILE_BYTES = 1024 * 1024
LOCAL_CONCURRENCY = 2  # experiments at once locally when neither the file nor the command says
LOCAL_WAIT_SECONDS = 1  # a local item looks at its experiment's row every second (AWS: the run's default, 30)
POLL_SECONDS = 0.5
SUBMITTED_NAME = re.compile(r"(?P<id>[A-Za-z0-9_-]{1,40})-(?P<digest>[0-9a-f]{12})-(?P<run>[0-9]+)")


class SweepAlreadyRunning(OrioleError):
    """Another version of the sweep file is running under the same sweep id."""


class SweepFailed(OrioleError):
    """The sweep's execution failed (its plan was refused where it runs, or a task failed past its retries)."""


def load(path: Path) -> SweepFile:
    """Read and validate a sweep file (``.toml`` or ``.json``, UTF-8, at most ``MAX_FILE_BYTES``, nested at most
    ``MAX_JSON_DEPTH`` levels, a TOML key's parts counted before it is parsed)."""
    text = files.read_text(path, MAX_FILE_BYTES, SweepFileError, "a sweep file describes a matrix, it does not list it")
    kind = "JSON" if path.suffix == ".json" else "TOML"
    try:
        data = load_json(text, long_integers=False) if kind == "JSON" else files.load_toml(text, MAX_JSON_DEPTH)
    except NestedTooDeeply as error:
        raise SweepFileError(f"{path} is {kind} {error}; a sweep file nests a few levels") from None
    except ValueError as error:  # TOML and JSON syntax errors are ValueErrors
        raise SweepFileError(f"{path} is not valid {kind}: {error}") from None
    return validate(SweepFile, data, str(path))


def provider_caps(spec: SweepFile, options: list[str]) -> dict[str, int]:
    """The file's ``provider_concurrency`` with ``PROVIDER=N`` options on top."""
    caps = dict(spec.provider_concurrency)
    for option in options:
        provider, _, value = option.partition("=")
        count = ascii_int(value, 4, signed=False) or 0
        if provider not in NAMES or not 1 <= count <= MAX_CONCURRENCY:
            raise SweepFileError(
                f"--provider-concurrency expects PROVIDER=N with a provider among "
                f"{', '.join(NAMES)} and N from 1 to {MAX_CONCURRENCY}; got {option!r}"
            )
        caps[provider] = count
    return caps


def server_caps(spec: SweepFile, options: list[str]) -> dict[str, int]:
    """The file's ``server_concurrency`` with ``URL=N`` options on top (the URL as the agents write it: PlanSweep
    compares servers in canonical form)."""
    caps = dict(spec.server_concurrency)
    for option in options:
        server, _, value = option.rpartition("=")
        count = ascii_int(value, 4, signed=False) or 0
        if not server or not 1 <= count <= MAX_CONCURRENCY:
            raise SweepFileError(
                f"--server-concurrency expects URL=N, a model server's URL and N from 1 to {MAX_CONCURRENCY}; "
                f"got {option!r}"
            )
        caps[server] = count
    return caps


def run_input(
    spec: SweepFile,
    *,
    concurrency: int | None,
    provider_concurrency: dict[str, int],
    server_concurrency: dict[str, int] | None = None,
    retry_failed: bool,
    wait_seconds: int | None,
    seed_from: str | None = None,
    allow_unpriced: bool = False,
    pause_after_errors: int = PAUSE_AFTER_ERRORS,
) -> dict:
    """The sweep state machine's input: the file as JSON with the command line's settings in it (what the
    console would take), refused here if PlanSweep would refuse its size. ``seed_from`` replaces the file's."""
    data = spec.model_dump(mode="json", exclude_none=True) | {
        "provider_concurrency": provider_concurrency,
        "server_concurrency": spec.server_concurrency if server_concurrency is None else server_concurrency,
        "retry_failed": retry_failed,
        "allow_unpriced": allow_unpriced,
        "pause_after_errors": pause_after_errors,
    }
    if seed_from is not None:
        data["seed_from"] = seed_from
    if concurrency is not None:
        data["concurrency"] = concurrency
    if wait_seconds is not None:
        data["wait_seconds"] = wait_seconds
    run = validate(SweepRun, data, "sweep input")
    check_input_size(run.model_dump(mode="json"))  # as PlanSweep carries it, its defaults filled in
    return run.model_dump(mode="json", exclude_none=True)


# --- submitting ----------------------------------------------------------------------------------------------


def _digest(execution_input: dict) -> str:
    return hashlib.sha256(json.dumps(execution_input, sort_keys=True).encode()).hexdigest()[:12]


def sweep_executions(sfn, state_machine_arn: str, sweep_id: str) -> list[dict]:
    """The sweep's executions submitted by ``submit`` (named ``<id>-<input hash>-<n>``), newest first, each with
    its ``digest``."""
    pages = sfn.get_paginator("list_executions").paginate(stateMachineArn=state_machine_arn)
    found = [
        {**e, "digest": match["digest"]}
        for page in pages
        for e in page["executions"]
        if (match := SUBMITTED_NAME.fullmatch(e["name"])) and match["id"] == sweep_id
    ]
    return sorted(found, key=lambda e: e["startDate"], reverse=True)


def submit(sfn, state_machine_arn: str, execution_input: dict) -> tuple[str, bool]:
    """Start the sweep's execution; returns its ARN and whether it is new. The name is the sweep id, a hash
    of the input and the number of earlier runs of that input: submitting the same input while it runs
    gives the running execution (Step Functions starts a name once), another version of the same sweep
    id is refused while one runs, and a finished sweep submitted again resumes."""
    sweep_id, digest = execution_input["id"], _digest(execution_input)
    earlier = sweep_executions(sfn, state_machine_arn, sweep_id)
    running = next((e for e in earlier if e["status"] == ExecutionStatus.RUNNING), None)
    if running is not None and running["digest"] == digest:
        return running["executionArn"], False
    if running is not None:
        raise SweepAlreadyRunning(
            f"sweep {sweep_id} is running another version of its file as "
            f"{running['executionArn']}; wait for it or stop it first (`oriole sweep status "
            f"{sweep_id}` follows it)"
        )
    runs = sum(e["digest"] == digest for e in earlier)
    name = f"{sweep_id}-{digest}-{runs + 1}"
    try:
        arn = sfn.start_execution(stateMachineArn=state_machine_arn, name=name, input=json.dumps(execution_input))[
            "executionArn"
        ]
    except sfn.exceptions.ExecutionAlreadyExists:  # a second submit of the same input won the race
        return state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}", False
    return arn, True


# --- following a local run -----------------------------------------------------------------------------------


def first_id(results: Results, sweep_id: str) -> int:
    """The sweep's newest experiment so far: a run about to start makes only experiments after it."""
    return max((row.id for row in results.store.sweep_experiments(sweep_id)), default=0)


def left_open(results: Results, sweep_id: str) -> frozenset[int]:
    """The sweep's experiments still open before a run starts: left by a run stopped with them running (a double
    Ctrl-C), which this run takes up again (their repetitions start under the same execution names)."""
    return frozenset(
        row.id for row in results.store.sweep_experiments(sweep_id) if row.status == ExperimentStatus.RUNNING
    )


def follow_local(
    local: LocalAws,
    execution_arn: str,
    sweep_id: str,
    results: Results,
    progress: SweepProgress,
    on_interrupt: Callable[[int], None],
) -> DescribeExecutionOutputTypeDef:
    """Follow a local sweep execution until it ends and none of its experiments runs any more, showing its
    ``progress``; returns the execution as DescribeExecution gives it (ABORTED when it was stopped).

    There is no EventBridge locally: an experiment whose last execution ended with its row open is reported
    to the status-change finalizer here. Ctrl-C stops the sweep's execution (nothing more starts) and keeps
    following until the running experiments have finished (``on_interrupt`` is told how many); a second
    Ctrl-C leaves them (``oriole doctor --fix`` closes them).
    """
    rows: list[SweepExperiment] = []
    stopping = False
    with FirstCtrlC() as ctrl_c:
        while True:
            execution = local.sfn.describe_execution(executionArn=execution_arn)
            rows = results.store.sweep_experiments(sweep_id)
            still_open = _report_lost_ends(local, [row for row in rows if progress.of_this_run(row)])
            progress.update(rows, results.summary)
            if execution["status"] in TERMINAL_EXECUTION_STATUSES and not still_open and not _starting(local, sweep_id):
                progress.finish(progress.update(results.store.sweep_experiments(sweep_id), results.summary))
                return execution
            if stopping:
                time.sleep(POLL_SECONDS)
            elif ctrl_c.pressed.wait(POLL_SECONDS):
                stopping = True
                local.sfn.stop_execution(executionArn=execution_arn, cause="stopped from the command line (Ctrl-C)")
                on_interrupt(sum(row.status == ExperimentStatus.RUNNING for row in rows if progress.of_this_run(row)))


class FirstCtrlC:
    """Within it, the first Ctrl-C only sets ``pressed`` (read between two looks at the sweep), and the second
    raises KeyboardInterrupt. A KeyboardInterrupt raised while a statement is on its way leaves the connection
    busy ("another command is already in progress"), so the first, after which the sweep is still followed, must
    not interrupt a statement. Outside the main thread (where Python runs signal handlers) nothing changes."""

    def __init__(self) -> None:
        self.pressed = threading.Event()
        self._previous: Any = None

    def __enter__(self) -> FirstCtrlC:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._press)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _press(self, signum: int, frame: object) -> None:
        if self.pressed.is_set():
            raise KeyboardInterrupt
        self.pressed.set()


def _starting(local: LocalAws, sweep_id: str) -> bool:
    """Whether an experiment execution of the sweep runs without its row yet (started as the sweep stopped)."""
    pages = local.sfn.get_paginator("list_executions").paginate(
        stateMachineArn=local.state_machine_arn, statusFilter="RUNNING"
    )
    return any(e["name"].startswith(f"{sweep_id}-") for page in pages for e in page["executions"])


def _report_lost_ends(local: LocalAws, rows: list[SweepExperiment]) -> int:
    """Report each open experiment whose last execution has ended; returns how many are still open."""
    still_open = 0
    for row in rows:
        if row.status != ExperimentStatus.RUNNING:
            continue
        try:
            last = local.sfn.describe_execution(executionArn=row.last_execution_arn)
        except local.sfn.exceptions.ExecutionDoesNotExist:
            continue  # no execution of this process runs it (yet): a stopped run's, taken up when its item starts
        if last["status"] in TERMINAL_EXECUTION_STATUSES:
            local.report_status_change(last)
        still_open += 1
    return still_open


def outcome(execution: Mapping[str, Any]) -> dict[str, Any]:
    """The summary a finished sweep execution returned; SweepFailed with its error when it failed."""
    if execution["status"] != ExecutionStatus.SUCCEEDED:
        reason = failure_reason(CaughtError(Error=execution.get("error"), Cause=execution.get("cause")))
        raise SweepFailed(f"the sweep execution {execution['status'].lower()}: {reason}")
    return json.loads(execution["output"])


# --- the lines a researcher reads ----------------------------------------------------------------------------


SUMMARY_WORDS = {
    "successes": ("succeeded", "succeeded"),
    "agentFailures": ("agent failure", "agent failures"),
    "censored": ("censored", "censored"),
    "errors": ("error", "errors"),
    "running": ("running", "running"),
    "rejected": ("rejected", "rejected"),
    "skipped": ("skipped", "skipped"),
    "paused": ("paused", "paused"),
}  # the summary's counts (one, several), in the order a line reads them: the four endings first


def summary_line(summary: dict) -> str:
    """``72 planned: 12 already done, 58 succeeded, 1 agent failure, 1 censored; spent $0.0000`` from a sweep's
    output: how the repetitions of this run ended (``oriole.core.endings``), then those still running, rejected,
    skipped or paused."""
    parts = [f"{summary[key]} {words[summary[key] != 1]}" for key, words in SUMMARY_WORDS.items() if summary.get(key)]
    return (
        f"{summary['planned']} planned: {summary['alreadyDone']} already done"
        + (f", {', '.join(parts)}" if parts else "")
        + f"; spent ${summary['spentUsd']:.4f}\n"
    )


def execution_line(execution: Mapping[str, Any]) -> str:
    stop = execution.get("stopDate")
    since = f"since {_when(execution['startDate'])}" if stop is None else f"at {_when(stop)}"
    return f"execution {execution['name']}: {execution['status']} {since}"


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
