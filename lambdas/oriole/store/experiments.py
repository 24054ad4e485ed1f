"""Experiments: created (keyed on the execution that starts it), continued by a successor execution (a token its
predecessor issued), read by CheckProgress (one row), closed once, and found from any of their executions."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Protocol

import psycopg
import pydantic.dataclasses
from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from oriole.code_identity import CodeIdentity
from oriole.config import snapshot_problem
from oriole.core.endings import closing
from oriole.core.harness import harness_hash
from oriole.errors import InvalidExecutionInput
from oriole.provider_registry import PROVIDERS, REPLAY
from oriole.statuses import ExperimentStatus
from oriole.store.base import StoreBase
from oriole.text import JsonObject


class IdentityColumns(Protocol):
    """What the store needs of ``oriole.providers.identity.ModelIdentity``: its columns. The store sits beside the
    providers in the runtime's layers and never imports them."""

    def columns(self) -> JsonObject: ...


@dataclass(frozen=True)
class NewExperiment:
    maze_id: int
    llm_provider: str
    model_name: str
    prompt_version: str
    prompt_text: str
    prompt_hash: str
    agent_id: str | None
    comment: str | None
    config: dict[str, Any]
    seed: int
    start: tuple[int, int]
    goal_first_seen_step: int | None
    optimal_path_length: int  # what its path_length is measured against (maze.optimal_path_length)
    execution_arn: str
    code: CodeIdentity
    harness: JsonObject  # oriole.core.harness.description(): stored once per hash in harnesses
    agent_label: str | None = None
    sweep_id: str | None = None
    archived: bool = False  # archived from its start: a deployment check's, in no view, report or export
    model: IdentityColumns | None = None  # what the server reported at start; None: not asked (a baseline)

    def values(self) -> dict[str, Any]:
        """The statement's parameters: the fields, the code, the harness and the model identity spelt out as
        columns."""
        return {
            **{f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("code", "harness", "model")},
            **_code_columns(self.code, self.harness),
            **_identity_columns(self.model),
            "config": Jsonb(self.config),
            "x": self.start[0],
            "y": self.start[1],
        }


def _code_columns(code: CodeIdentity, harness: JsonObject) -> dict[str, Any]:
    """The columns that record the code and the harness an experiment started with (``_WITH_HARNESS`` stores the
    harness's description under its hash)."""
    return {
        "code_version": code.version,
        "code_commit": code.commit,
        "code_dirty": code.dirty,
        "code_hash": code.runtime_hash,
        "harness_version": harness["version"],
        "harness_hash": harness_hash(harness),
        "harness_body": Jsonb(harness),
    }


def _identity_columns(model: IdentityColumns | None) -> dict[str, Any]:
    """The model identity's columns (migration 0034); all NULL when it was not asked."""
    columns = dict.fromkeys(IDENTITY_COLUMNS) if model is None else model.columns()
    return {**columns, "model_identity": None if model is None else Jsonb(columns["model_identity"])}


IDENTITY_COLUMNS = (
    "model_build",
    "reported_model",
    "server_software",
    "server_version",
    "model_parameter_size",
    "model_quantization",
    "inference_profile",
    "model_identity",
)


@pydantic.dataclasses.dataclass(frozen=True)
class ExperimentRef:
    """An experiment as a start or a continuation finds it; ``parts`` counts its executions."""

    id: int
    llm_provider: str
    status: ExperimentStatus
    turn_count: int
    parts: int


@pydantic.dataclasses.dataclass(frozen=True)
class ProgressRow:
    """What CheckProgress reads: the counters the limits judge, and the configuration snapshot."""

    status: ExperimentStatus
    goal_found: bool
    action_count: int
    stalled_turns: int
    gave_up_reason: str | None
    config: dict[str, Any]
    elapsed_seconds: float
    input_tokens: int
    cost_usd: float | None
    agent_tokens: int  # the committed turns' tokens (every call's less those of failed attempts)


@dataclass(frozen=True)
class ExecutionOwner:
    """The experiment an execution ran, with its executions in order; ``continuation_issued``: whether the
    continuation token the caller gave is one the experiment's current execution issued."""

    id: int
    completed: bool
    execution_arns: list[str]
    continuation_issued: bool = False


@dataclass(frozen=True)
class Replayable:
    """What decides whether an experiment can be replayed; ``unrecorded``: its first call stored without its
    request record or answer (turn, call index); ``config``: its configuration snapshot as stored (JSON, checked by
    ``oriole.config.snapshot_problem``)."""

    status: ExperimentStatus
    llm_provider: str
    replay_of: int | None
    unrecorded: list[int] | None
    config: object


@dataclass(frozen=True)
class OpenExperiment:
    """An experiment not closed yet, with its latest execution (what the reconciler and ``oriole doctor`` look at)."""

    experiment_id: int
    maze: str
    llm_provider: str
    model_name: str
    started_at: datetime
    turns: int
    actions: int
    last_turn_at: datetime | None
    last_execution: str


@pydantic.dataclasses.dataclass(frozen=True)
class ContinuationIssue:
    """What ContinueAsNew found: whether its token was recorded (only while its part is the experiment's latest
    and the experiment runs), the experiment's status and how many executions it has."""

    issued: bool
    status: ExperimentStatus
    parts: int


class Experiments(StoreBase):
    """The ``experiments`` table, outside a turn."""

    def create_experiment(self, new: NewExperiment) -> ExperimentRef:
        """Insert the experiment, keyed on the execution that starts it: a retried start returns the
        row the first attempt made instead of creating a second experiment. A sweep it names must have been
        planned (``sweeps``): anything else is ``InvalidExecutionInput``."""
        try:
            row = self._insert_experiment(new)
        except psycopg.errors.ForeignKeyViolation as error:
            if error.diag.constraint_name != "experiments_sweep_id_fkey":
                raise
            raise InvalidExecutionInput(
                f"sweepId {new.sweep_id!r} names no sweep this database planned: an experiment joins a sweep only "
                "when the sweep state machine starts it"
            ) from None
        return row

    def _insert_experiment(self, new: NewExperiment) -> ExperimentRef:
        row = self._one(
            class_row(ExperimentRef),
            _WITH_HARNESS
            + """
            INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_text, prompt_hash,
                agent_id, comment, config, seed, current_x, current_y, goal_first_seen_step, optimal_path_length,
                origin_execution_arn, execution_arns, continuation_hashes, agent_label, sweep_id, cost_usd,
                failed_cost_usd, archived_at, {code}, {identity})
            VALUES (%(maze_id)s, %(llm_provider)s, %(model_name)s, %(prompt_version)s, %(prompt_text)s,
                %(prompt_hash)s, %(agent_id)s, %(comment)s, %(config)s, %(seed)s, %(x)s, %(y)s,
                %(goal_first_seen_step)s, %(optimal_path_length)s, %(execution_arn)s, ARRAY[%(execution_arn)s],
                '{}', %(agent_label)s, %(sweep_id)s, %(cost)s, %(cost)s, CASE WHEN %(archived)s THEN now() END,
                {code_values}, {identity_values})
            ON CONFLICT (origin_execution_arn) DO UPDATE SET origin_execution_arn = EXCLUDED.origin_execution_arn
            RETURNING id, llm_provider, status, turn_count, cardinality(execution_arns) AS parts
            """.replace("{code}", _CODE_COLUMNS)
            .replace("{code_values}", _CODE_VALUES)
            .replace("{identity}", ", ".join(IDENTITY_COLUMNS))
            .replace("{identity_values}", ", ".join(f"%({c})s" for c in IDENTITY_COLUMNS)),
            {**new.values(), "cost": None if new.config.get("pricing") is None else 0},  # unpriced: unknown
        )
        assert row is not None, "an INSERT ... ON CONFLICT DO UPDATE ... RETURNING returns its row"
        return row

    def agent_names(self, ascii_too: bool) -> list[str]:
        """The names the stored experiments' rows are shown under (their agent label, else ``provider/model``; a
        replay's are its original's), each once; only those holding a character beyond ASCII unless
        ``ascii_too``: two ASCII names never read alike (``oriole.labels.look_alike``)."""
        return self._all(
            scalar_row,
            """
            SELECT DISTINCT name FROM (SELECT coalesce(agent_label, llm_provider || '/' || model_name) AS name
                                         FROM experiments WHERE replay_of IS NULL) n
             WHERE %s OR octet_length(name) <> char_length(name)
             ORDER BY name
            """,
            (ascii_too,),
        )

    def replay_problem(self, experiment_id: int) -> str | None:
        """Why an experiment cannot be replayed against its recorded answers, or None when it can."""
        row = self._one(class_row(Replayable), _REPLAYABLE, (experiment_id,))
        if row is None:
            return "it does not exist"
        if row.status == ExperimentStatus.RUNNING:
            return "it is still running; replay it once it has ended"
        if row.replay_of is not None:
            return f"it is itself a replay; replay experiment {row.replay_of}"
        provider = PROVIDERS.get(row.llm_provider)
        if provider is None or not provider.chosen:
            return f"its provider {row.llm_provider!r} plays no experiment of its own: its row was altered"
        if not provider.calls_model:
            return (
                "a baseline calls no model, so it has no answers to replay; it is reproduced by running it again "
                "with its recorded seed (config.seed)"
            )
        if row.unrecorded is not None:
            return (
                f"turn {row.unrecorded[0]} call {row.unrecorded[1]} was stored without its request record "
                "or its answer (before migration 0017), so it cannot be answered again"
            )
        return snapshot_problem(row.config)

    def create_replay(
        self, original_id: int, execution_arn: str, code: CodeIdentity, harness: JsonObject
    ) -> ExperimentRef:
        """A replay's scratch experiment: the original as it started (maze, model, prompt, configuration snapshot,
        seed), played by the recorded agent, ``replay_of`` naming it; keyed on the execution like a start. It
        records the code and the harness that replay it."""
        row = self._one(
            class_row(ExperimentRef),
            _CREATE_REPLAY,
            {"id": original_id, "arn": execution_arn, "provider": REPLAY, **_code_columns(code, harness)},
        )
        assert row is not None, "the original was found replayable (replay_problem), so the insert returns its row"
        return row

    def issue_continuation(self, experiment_id: int, part: int, token_hash: str) -> ContinuationIssue | None:
        """Record the hash of a continuation token for the experiment's part ``part + 1``, while ``part`` is its
        latest execution and it runs; None when the experiment does not exist. Each call adds a hash (a retried
        ContinueAsNew adds its own; the successor an earlier attempt started keeps the token it holds)."""
        return self._one(
            class_row(ContinuationIssue),
            """
            WITH issued AS (
                UPDATE experiments SET continuation_hashes = coalesce(continuation_hashes, '{}') || %(hash)s::text
                 WHERE id = %(id)s AND completed_at IS NULL AND cardinality(execution_arns) = %(part)s
                RETURNING id)
            SELECT EXISTS (SELECT FROM issued) AS issued, status, cardinality(execution_arns) AS parts
              FROM experiments WHERE id = %(id)s
            """,
            {"id": experiment_id, "part": part, "hash": token_hash},
        )

    def attach_execution(
        self, experiment_id: int, execution_arn: str, part: int, token_hash: str | None
    ) -> ExperimentRef | None:
        """Record a continuation execution on its experiment as its ``part``-th execution and return the row;
        None unless the experiment exists, has ``part - 1`` executions and lists ``token_hash`` among the hashes
        its current execution issued (or has this execution already: a retry). Attaching consumes the issued
        hashes in the same statement, so a token opens one part only. An experiment started before tokens
        existed (hashes NULL) takes its next part without one."""
        return self._one(
            class_row(ExperimentRef),
            """
            UPDATE experiments
               SET execution_arns = CASE WHEN %(arn)s = ANY (execution_arns) THEN execution_arns
                                         ELSE execution_arns || %(arn)s END,
                   continuation_hashes = CASE WHEN %(arn)s = ANY (execution_arns) THEN continuation_hashes
                                              ELSE '{}' END
             WHERE id = %(id)s
               AND (%(arn)s = ANY (execution_arns)
                    OR (cardinality(execution_arns) = %(part)s - 1
                        AND (continuation_hashes IS NULL OR %(hash)s::text = ANY (continuation_hashes))))
            RETURNING id, llm_provider, status, turn_count, cardinality(execution_arns) AS parts
            """,
            {"id": experiment_id, "arn": execution_arn, "part": part, "hash": token_hash},
        )

    def progress(self, experiment_id: int) -> ProgressRow | None:
        return self._one(
            class_row(ProgressRow),
            "SELECT status, goal_found, action_count, stalled_turns, gave_up_reason, config, "
            "extract(epoch FROM clock_timestamp() - started_at)::float AS elapsed_seconds, "
            "input_tokens, cost_usd::float AS cost_usd, "
            "input_tokens + output_tokens - failed_input_tokens - failed_output_tokens AS agent_tokens "
            "FROM experiments WHERE id = %s",
            (experiment_id,),
        )

    def finalize(
        self, experiment_id: int, status: ExperimentStatus, reason: str | None, last_execution: str | None = None
    ) -> bool:
        """Close a running experiment, with its ending and the cause within it (``endings.closing``);
        finalizing a completed one changes nothing (returns False).

        With ``last_execution``, only while that is still the experiment's latest execution: a successor
        that attached itself in the meantime carries the experiment on.
        """
        ended = closing(status, reason)
        assert ended is not None, "a finalizer closes with a status other than running"
        closed = self._one(
            scalar_row,
            "UPDATE experiments SET status = %(status)s, failure_reason = %(reason)s, ending = %(ending)s, "
            "ending_cause = %(cause)s, completed_at = now() WHERE id = %(id)s AND completed_at IS NULL "
            "AND (%(last)s::text IS NULL OR execution_arns[cardinality(execution_arns)] = %(last)s) RETURNING id",
            {
                "status": status,
                "reason": reason,
                "ending": ended.ending,
                "cause": ended.cause,
                "id": experiment_id,
                "last": last_execution,
            },
        )
        return closed is not None

    def open_experiments(self, execution_prefix: str | None = None) -> list[OpenExperiment]:
        """Experiments not closed yet, oldest first, with their latest execution; only those whose latest
        execution ARN starts with ``execution_prefix`` when it is given."""
        return self._all(
            class_row(OpenExperiment),
            """
            SELECT e.id AS experiment_id, m.name AS maze, e.llm_provider, e.model_name, e.started_at,
                   e.turn_count AS turns, e.action_count AS actions,
                   (SELECT max(t.completed_at) FROM turns t WHERE t.experiment_id = e.id) AS last_turn_at,
                   e.execution_arns[cardinality(e.execution_arns)] AS last_execution
              FROM experiments e JOIN mazes m ON m.id = e.maze_id
             WHERE e.completed_at IS NULL
               AND (%(prefix)s::text IS NULL OR starts_with(e.execution_arns[cardinality(e.execution_arns)],
                                                              %(prefix)s))
             ORDER BY e.id
            """,
            {"prefix": execution_prefix},
        )

    def experiment_by_execution(self, execution_arn: str) -> int | None:
        """The experiment an execution started (None: its start was rejected, or has not run yet)."""
        found: int | None = self._one(
            scalar_row, "SELECT id FROM experiments WHERE origin_execution_arn = %s", (execution_arn,)
        )
        return found

    def experiment_for_execution(
        self, execution_arn: str, experiment_id: int | None, token_hash: str | None = None
    ) -> ExecutionOwner | None:
        """The experiment that ``execution_arn`` ran (any of its parts), else experiment ``experiment_id``
        (what a successor's input names, for a successor that ended before it attached itself), with whether
        ``token_hash`` is one of the continuation tokens its current execution issued."""
        return self._one(
            class_row(ExecutionOwner),
            """
            SELECT id, completed_at IS NOT NULL AS completed, execution_arns,
                   coalesce(continuation_hashes IS NULL OR %(hash)s::text = ANY (continuation_hashes), false)
                       AS continuation_issued
              FROM experiments
             WHERE execution_arns @> ARRAY[%(arn)s]::text[] OR id = %(id)s
             ORDER BY execution_arns @> ARRAY[%(arn)s]::text[] DESC
             LIMIT 1
            """,
            {"arn": execution_arn, "id": experiment_id, "hash": token_hash},
        )


_REPLAYABLE = """
    SELECT o.status, o.llm_provider, o.replay_of, o.config,
           (SELECT ARRAY[c.turn_number, c.call_index] FROM model_calls c
             WHERE c.experiment_id = o.id AND (c.request IS NULL OR c.answer IS NULL)
             ORDER BY c.turn_number, c.call_index LIMIT 1) AS unrecorded
      FROM experiments o WHERE o.id = %s
"""
# The code and harness columns an experiment records, and their parameters (``_code_columns``); the harness's
# description is stored under its hash by the statement that names it, once.
_CODE_COLUMNS = "code_version, code_commit, code_dirty, code_hash, harness_version, harness_hash"
_CODE_VALUES = ", ".join(f"%({column.strip()})s" for column in _CODE_COLUMNS.split(","))
_WITH_HARNESS = """
    WITH harness AS (
        INSERT INTO harnesses (hash, version, body) VALUES (%(harness_hash)s, %(harness_version)s, %(harness_body)s)
        ON CONFLICT (hash) DO NOTHING)
"""
_CREATE_REPLAY = (
    _WITH_HARNESS
    + """
    INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_text, prompt_hash, agent_id,
        comment, config, seed, current_x, current_y, goal_first_seen_step, optimal_path_length, origin_execution_arn,
        execution_arns, continuation_hashes, agent_label, replay_of, cost_usd, failed_cost_usd, {code},
        {identity})
    SELECT o.maze_id, %(provider)s, o.model_name, o.prompt_version, o.prompt_text, o.prompt_hash, o.agent_id,
           'replay of experiment ' || o.id, o.config, o.seed, m.start_x, m.start_y,
           CASE WHEN o.goal_first_seen_step = 0 THEN 0 END, o.optimal_path_length, %(arn)s, ARRAY[%(arn)s],
           '{}', o.agent_label, o.id, CASE WHEN o.cost_usd IS NOT NULL THEN 0 END,
           CASE WHEN o.cost_usd IS NOT NULL THEN 0 END, {code_values},
           {original_identity}  -- the build its answers came from
      FROM experiments o JOIN mazes m ON m.id = o.maze_id
     WHERE o.id = %(id)s
    ON CONFLICT (origin_execution_arn) DO UPDATE SET origin_execution_arn = EXCLUDED.origin_execution_arn
    RETURNING id, llm_provider, status, turn_count, cardinality(execution_arns) AS parts
""".replace("{code}", _CODE_COLUMNS)
    .replace("{code_values}", _CODE_VALUES)
    .replace("{identity}", ", ".join(IDENTITY_COLUMNS))
    .replace("{original_identity}", ", ".join(f"o.{c}" for c in IDENTITY_COLUMNS))
)
