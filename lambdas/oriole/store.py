"""The runtime's SQL: migrations, the maze set, the turn path (experiments, turns, actions, model calls) and
the sweep state machine's bookkeeping (a sweep's experiments, found by agent id).

The researcher's reads (reports, pictures) are the workstation's (``oriole_workstation.results``) and never
ship to Lambda.

The turn path is built for few round trips: one statement loads everything a turn needs, one
statement writes the whole turn (its actions, its turn row, the experiment's position and counters)
atomically, and CheckProgress reads one row. The write is guarded by the experiment's turn counter,
so a retried turn that already committed writes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from oriole import db, mazeset
from oriole.catalog import Parameter
from oriole.errors import OrioleError
from oriole.maze import Maze
from oriole.mazeset import MazeEntry
from oriole.progress import ending_category
from oriole.text import ascii_int
from oriole.turn_state import COLUMNS, WORLD_COUNTERS, WORLD_VALUES, LoadedTurn, TurnWrite

MAX_MAZE_ID = 2**31 - 1  # mazes.id is an integer
MIGRATION_LOCK_KEY = 0x0_6F72_696F_6C65  # "oriole": one advisory lock for every migration runner
DATABASE_ROLES = ("oriole_app", "oriole_reader")  # created by migration 0007: the functions', the researchers'


def migration_files() -> list[Traversable]:
    """The SQL migrations shipped in the package (``oriole/migrations/NNNN_*.sql``), in order."""
    folder = resources.files("oriole").joinpath("migrations")
    return sorted((f for f in folder.iterdir() if f.name.endswith(".sql")), key=lambda f: f.name)


class MigrationChanged(OrioleError):
    """An applied migration file was edited afterwards; add a new migration instead."""


class MazeSetMismatch(OrioleError):
    """The database holds a maze whose content differs from the maze set in the code."""


@dataclass(frozen=True)
class StoredMaze:
    id: int
    name: str
    maze: Maze
    shortest_path_length: int
    family: str
    content_hash: str


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
    config: dict
    seed: int
    start: tuple[int, int]
    goal_first_seen_step: int | None
    execution_arn: str
    code_version: str
    agent_label: str | None = None


@dataclass(frozen=True)
class ExperimentRef:
    """An experiment as a start or a continuation finds it; ``parts`` counts its executions."""

    id: int
    llm_provider: str
    status: str
    turn_count: int
    parts: int


@dataclass(frozen=True)
class ProgressRow:
    """What CheckProgress reads: the counters the limits judge, and the configuration snapshot."""

    status: str
    goal_found: bool
    action_count: int
    stalled_turns: int
    gave_up_reason: str | None
    config: dict
    elapsed_seconds: float


@dataclass(frozen=True)
class ExecutionOwner:
    """The experiment an execution ran, with its executions in order; ``continuation_issued``: whether the
    continuation token the caller gave is one the experiment's current execution issued."""

    id: int
    completed: bool
    execution_arns: list[str]
    continuation_issued: bool = False


@dataclass(frozen=True)
class ContinuationIssue:
    """What ContinueAsNew found: whether its token was recorded (only while its part is the experiment's latest
    and the experiment runs), the experiment's status and how many executions it has."""

    issued: bool
    status: str
    parts: int


def stored_maze(row: dict) -> StoredMaze:
    """A maze as stored in the ``mazes`` table (a row, or the row as JSON)."""
    maze = Maze.from_rows(row["grid"], (row["start_x"], row["start_y"]), (row["goal_x"], row["goal_y"]))
    return StoredMaze(row["id"], row["name"], maze, row["shortest_path_length"], row["family"],
                      row["content_hash"])


_MAZE_COLUMNS = ("id, name, family, width, height, start_x, start_y, goal_x, goal_y, shortest_path_length, "
                 "generator, seed, content_hash, grid, source, generator_version")
_INSERT_MAZE = (
    "INSERT INTO mazes (id, name, family, width, height, start_x, start_y, goal_x, goal_y, shortest_path_length, "
    "generator, seed, content_hash, grid, source, generator_version) "
    "VALUES (coalesce(%(id)s, nextval('mazes_id_seq')), %(name)s, %(family)s, %(width)s, %(height)s, %(start_x)s, "
    "%(start_y)s, %(goal_x)s, %(goal_y)s, %(shortest_path_length)s, %(generator)s, %(seed)s, %(content_hash)s, "
    "%(grid)s, %(source)s, %(generator_version)s)"
)


def _maze_row(entry: MazeEntry, source: str) -> dict:
    maze = entry.maze
    return {"id": entry.id, "name": entry.name, "family": entry.family, "width": maze.width, "height": maze.height,
            "start_x": maze.start[0], "start_y": maze.start[1], "goal_x": maze.goal[0], "goal_y": maze.goal[1],
            "shortest_path_length": entry.shortest_path_length, "generator": entry.generator,
            "seed": None if source == "imported" else entry.seed, "content_hash": entry.content_hash,
            "grid": Jsonb(maze.grid), "source": source,
            "generator_version": None if source == "imported" else mazeset.GENERATOR_VERSION}


class Store:
    """The data-access layer over one psycopg connection (autocommit, dict rows).

    With ``reconnect`` (the handlers' store), a statement that fails because the connection was dropped
    (a database restart, a failover, an idle connection closed by the server) is sent once more on the
    connection ``reconnect`` returns. That is safe for every statement sent through ``_execute``: reads,
    the keyed experiment insert, and writes guarded so that a second run changes nothing; in particular a
    turn whose commit reached the database but whose answer was lost is found committed on the retry.
    """

    def __init__(self, conn: psycopg.Connection, reconnect: Callable[[], psycopg.Connection] | None = None):
        self.conn = conn
        self._reconnect = reconnect

    def _execute(self, query: str, params=None) -> psycopg.Cursor:
        try:
            return self.conn.execute(query, params)
        except psycopg.OperationalError:
            if self._reconnect is None or not self.conn.broken:
                raise  # a cancelled query or a server error: the connection is fine, sending again cannot help
            self.conn = self._reconnect()
            return self.conn.execute(query, params)

    # -- schema -------------------------------------------------------------------------------

    def apply_migrations(self, files: Iterable[Traversable] | None = None) -> list[str]:
        """Apply each pending ``NNNN_*.sql`` file once, in order, each in its own transaction.

        An advisory lock serialises concurrent runners (two deploys at once); an applied file whose
        checksum changed is refused. Returns the versions applied by this call.
        """
        files = migration_files() if files is None else sorted(files, key=lambda f: f.name)
        applied: list[str] = []
        self.conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, "
                "checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {r["version"]: r["checksum"] for r in self.conn.execute("SELECT * FROM schema_migrations")}
            for path in files:
                script = path.read_text(encoding="utf-8")
                checksum = hashlib.sha256(script.encode()).hexdigest()
                version = path.name.removesuffix(".sql")
                if version in done:
                    if done[version] != checksum:
                        raise MigrationChanged(f"migration {path.name} changed after it was applied")
                    continue
                with self.conn.transaction():
                    self.conn.execute(script)
                    self.conn.execute("INSERT INTO schema_migrations (version, checksum) VALUES (%s, %s)",
                                      (version, checksum))
                applied.append(version)
        finally:
            self.conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
        return applied

    def enable_login(self, role: str, password: str) -> None:
        """Give a role of migration 0007 its login and password (run again, it sets the password again)."""
        if role not in DATABASE_ROLES:
            raise ValueError(f"{role!r} is not one of the roles the migrations create: {', '.join(DATABASE_ROLES)}")
        self.conn.execute(sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(sql.Identifier(role),
                                                                                  sql.Literal(password)))

    def load_mazes(self, entries: Iterable[MazeEntry]) -> int:
        """Insert the shipped set (idempotent) and check stored mazes match it; returns how many were new."""
        entries = list(entries)
        with self.conn.transaction():
            with self.conn.cursor() as cur:
                cur.executemany(_INSERT_MAZE + " ON CONFLICT (id) DO NOTHING RETURNING id",
                                [_maze_row(e, "shipped") for e in entries], returning=True)
                inserted = 0
                while True:
                    inserted += len(cur.fetchall())
                    if not cur.nextset():
                        break
            stored = {r["id"]: r for r in self.conn.execute("SELECT id, name, content_hash FROM mazes")}
        for e in entries:
            row = stored[e.id]
            if (row["name"], row["content_hash"]) != (e.name, e.content_hash):
                raise MazeSetMismatch(
                    f"maze {e.id} is stored as {row['name']} ({row['content_hash'][:12]}) but the code "
                    f"generates {e.name} ({e.content_hash[:12]}); mazes must never change under stored runs"
                )
        return inserted

    def find_maze(self, key: str | int) -> StoredMaze | None:
        """A stored maze by name (a seeded one by its canonical name), or by id (an int, or a string of ASCII
        digits as a CLI or an input passes it)."""
        number = key if isinstance(key, int) else ascii_int(key, 18, signed=False)
        if number is not None and not 0 <= number <= MAX_MAZE_ID:
            return None  # no maze has such an id (and the column could not even hold it)
        by_id = number is not None
        row = self._execute(f"SELECT {_MAZE_COLUMNS} FROM mazes WHERE {'id' if by_id else 'name'} = %s",
                            (number if by_id else mazeset.canonical_name(key),)).fetchone()
        return None if row is None else stored_maze(row)

    def add_maze(self, entry: MazeEntry, source: str) -> StoredMaze:
        """Store a seeded or imported maze under its name and return it as stored; storing it again returns
        the stored one. A name already stored with another grid is refused: a maze never changes under runs."""
        row = self._execute(
            _INSERT_MAZE + f" ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING {_MAZE_COLUMNS}",
            _maze_row(entry, source),
        ).fetchone()
        if row["content_hash"] != entry.content_hash:
            raise MazeSetMismatch(f"maze {entry.name} is stored with another grid ({row['content_hash'][:12]}, "
                                  f"generator version {row['generator_version']}) than the one drawn now "
                                  f"({entry.content_hash[:12]}, version {mazeset.GENERATOR_VERSION})")
        return stored_maze(row)

    def maze_with_grid(self, content_hash: str) -> StoredMaze | None:
        """A stored maze with exactly this grid, start and goal (importing it again is a no-op)."""
        row = self._execute(f"SELECT {_MAZE_COLUMNS} FROM mazes WHERE content_hash = %s ORDER BY id LIMIT 1",
                            (content_hash,)).fetchone()
        return None if row is None else stored_maze(row)

    def load_catalog(self, parameters: Iterable[Parameter]) -> None:
        """Write the catalog's view of each configuration key into ``config_keys`` (which providers it applies
        to, whether it is an experimental variable, its default), replacing what was there.

        The analysis views compare experiments on these keys only, so the catalog stays the one place that
        says what a setting is; a new catalog entry needs nothing else.
        """
        rows = [(p.key, list(p.providers), p.experimental, Jsonb(p.default)) for p in parameters if p.overridable]
        with self.conn.transaction():
            self.conn.execute("DELETE FROM config_keys")
            with self.conn.cursor() as cur:
                cur.executemany("INSERT INTO config_keys (key, providers, experimental, default_value) "
                                "VALUES (%s, %s, %s, %s)", rows)

    # -- experiments ----------------------------------------------------------------------------

    def create_experiment(self, new: NewExperiment) -> ExperimentRef:
        """Insert the experiment, keyed on the execution that starts it: a retried start returns the
        row the first attempt made instead of creating a second experiment."""
        row = self._execute(
            """
            INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_text, prompt_hash,
                agent_id, comment, config, seed, current_x, current_y, goal_first_seen_step,
                origin_execution_arn, execution_arns, code_version, continuation_hashes, agent_label)
            VALUES (%(maze_id)s, %(llm_provider)s, %(model_name)s, %(prompt_version)s, %(prompt_text)s,
                %(prompt_hash)s, %(agent_id)s, %(comment)s, %(config)s, %(seed)s, %(x)s, %(y)s,
                %(goal_first_seen_step)s, %(execution_arn)s, ARRAY[%(execution_arn)s], %(code_version)s, '{}',
                %(agent_label)s)
            ON CONFLICT (origin_execution_arn) DO UPDATE SET origin_execution_arn = EXCLUDED.origin_execution_arn
            RETURNING id, llm_provider, status, turn_count, cardinality(execution_arns) AS parts
            """,
            {**new.__dict__, "config": Jsonb(new.config), "x": new.start[0], "y": new.start[1]},
        ).fetchone()
        return ExperimentRef(**row)

    def issue_continuation(self, experiment_id: int, part: int, token_hash: str) -> ContinuationIssue | None:
        """Record the hash of a continuation token for the experiment's part ``part + 1``, while ``part`` is its
        latest execution and it runs; None when the experiment does not exist. Each call adds a hash (a retried
        ContinueAsNew adds its own; the successor an earlier attempt started keeps the token it holds)."""
        row = self._execute(
            """
            WITH issued AS (
                UPDATE experiments SET continuation_hashes = coalesce(continuation_hashes, '{}') || %(hash)s::text
                 WHERE id = %(id)s AND completed_at IS NULL AND cardinality(execution_arns) = %(part)s
                RETURNING id)
            SELECT EXISTS (SELECT FROM issued) AS issued, status, cardinality(execution_arns) AS parts
              FROM experiments WHERE id = %(id)s
            """,
            {"id": experiment_id, "part": part, "hash": token_hash},
        ).fetchone()
        return None if row is None else ContinuationIssue(**row)

    def attach_execution(self, experiment_id: int, execution_arn: str, part: int,
                         token_hash: str | None) -> ExperimentRef | None:
        """Record a continuation execution on its experiment as its ``part``-th execution and return the row;
        None unless the experiment exists, has ``part - 1`` executions and lists ``token_hash`` among the hashes
        its current execution issued (or has this execution already: a retry). Attaching consumes the issued
        hashes in the same statement, so a token opens one part only. An experiment started before tokens
        existed (hashes NULL) takes its next part without one."""
        row = self._execute(
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
        ).fetchone()
        return None if row is None else ExperimentRef(**row)

    def load_turn(self, experiment_id: int, turn_number: int, with_maze: bool) -> LoadedTurn | None:
        """Everything one turn needs, in one round trip: the experiment, its recent actions (as many as
        the history and the recall window of its configuration need), the maze when the caller has not
        cached it, and the turn's row if it was already committed."""
        row = self._execute(_LOAD_TURN, {"id": experiment_id, "turn": turn_number, "with_maze": with_maze}).fetchone()
        return None if row is None else LoadedTurn.from_row(row)

    def commit_turn(self, experiment_id: int, turn_number: int, write: TurnWrite) -> bool:
        """Write a whole turn (actions, model calls, turn row, experiment) in one statement; False when the
        turn was already committed.

        The experiment update only matches when ``turn_count`` is ``turn_number - 1`` and the experiment
        is running; the turn and action inserts select from that update, so either all of it is written
        or none of it. The experiment's ``stalled_turns`` counts turns in a row without a valid action; its
        aggregates (unique tiles, model calls, latency, the last action's time) are advanced in the same
        update, so the analysis views never aggregate actions.
        """
        row = self._execute(
            _COMMIT_TURN,
            {**write.experiment, **write.turn, "id": experiment_id, "turn": turn_number,
             "agent_state": Jsonb(write.experiment["agent_state"]), "memory": Jsonb(write.experiment["memory"]),
             "closing_messages": Jsonb(write.turn["closing_messages"]),
             "context": None if write.turn["context"] is None else Jsonb(write.turn["context"]),
             "actions": Jsonb(write.actions), "calls": Jsonb(write.calls)},
        ).fetchone()
        return row["committed"] == 1

    def progress(self, experiment_id: int) -> ProgressRow | None:
        row = self._execute(
            "SELECT status, goal_found, action_count, stalled_turns, gave_up_reason, config, "
            "extract(epoch FROM clock_timestamp() - started_at)::float AS elapsed_seconds "
            "FROM experiments WHERE id = %s",
            (experiment_id,),
        ).fetchone()
        return None if row is None else ProgressRow(**row)

    def finalize(self, experiment_id: int, status: str, reason: str | None,
                 last_execution: str | None = None) -> bool:
        """Close a running experiment, with its ending category (``progress.ending_category``); finalizing a
        completed one changes nothing (returns False).

        With ``last_execution``, only while that is still the experiment's latest execution: a successor
        that attached itself in the meantime carries the experiment on.
        """
        row = self._execute(
            "UPDATE experiments SET status = %(status)s, failure_reason = %(reason)s, ending = %(ending)s, "
            "completed_at = now() WHERE id = %(id)s AND completed_at IS NULL "
            "AND (%(last)s::text IS NULL OR execution_arns[cardinality(execution_arns)] = %(last)s) RETURNING id",
            {"status": status, "reason": reason, "ending": ending_category(status, reason), "id": experiment_id,
             "last": last_execution},
        ).fetchone()
        return row is not None

    def record_throttles(self, experiment_id: int, throttles: int) -> None:
        """Count the throttles of an attempt that failed (its turn is retried and never wrote them).

        An increment, so never sent twice (not through ``_execute``): a dropped connection fails the task.
        """
        self.conn.execute("UPDATE experiments SET throttle_count = throttle_count + %s WHERE id = %s",
                          (throttles, experiment_id))

    def open_experiments(self, execution_prefix: str | None = None) -> list[dict]:
        """Experiments not closed yet, oldest first, with their latest execution; only those whose latest
        execution ARN starts with ``execution_prefix`` when it is given."""
        return self._execute(
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
        ).fetchall()

    def experiment_by_execution(self, execution_arn: str) -> int | None:
        """The experiment an execution started (None: its start was rejected, or has not run yet)."""
        row = self._execute("SELECT id FROM experiments WHERE origin_execution_arn = %s", (execution_arn,)).fetchone()
        return None if row is None else row["id"]

    def experiment_for_execution(self, execution_arn: str, experiment_id: int | None,
                                 token_hash: str | None = None) -> ExecutionOwner | None:
        """The experiment that ``execution_arn`` ran (any of its parts), else experiment ``experiment_id``
        (what a successor's input names, for a successor that ended before it attached itself), with whether
        ``token_hash`` is one of the continuation tokens its current execution issued."""
        row = self._execute(
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
        ).fetchone()
        return None if row is None else ExecutionOwner(**row)

    # -- sweeps: experiments tagged with the agent id <sweep id>/<cell key>/r<repetition> -----------------

    def sweep_experiments(self, sweep_id: str) -> list[dict]:
        """Every experiment a sweep started, oldest first, with the execution that runs it now and what it has
        spent."""
        return self._execute(
            "SELECT id, agent_id, status, ending, origin_execution_arn, "
            "       execution_arns[cardinality(execution_arns)] AS last_execution_arn, "
            "       input_tokens + output_tokens AS tokens, cost_usd::float AS cost_usd, failure_reason "
            "  FROM experiments WHERE agent_id LIKE %s ORDER BY id",
            (_like_prefix(sweep_id + "/"),),
        ).fetchall()

    def record_sweep_plan(self, sweep_id: str, planned: int, run_input: dict) -> None:
        """Keep the sweep's latest plan (PlanSweep, on every run and resume): what ``oriole sweep status`` says is
        planned and left once the run that planned it has gone."""
        self._execute(
            "INSERT INTO sweeps (id, planned, spend_limit_usd, seed_from, run_input) "
            "VALUES (%(id)s, %(planned)s, %(limit)s, %(seed_from)s, %(input)s) "
            "ON CONFLICT (id) DO UPDATE SET planned = EXCLUDED.planned, spend_limit_usd = EXCLUDED.spend_limit_usd, "
            "seed_from = EXCLUDED.seed_from, run_input = EXCLUDED.run_input, planned_at = now()",
            {"id": sweep_id, "planned": planned, "limit": run_input.get("spend_limit_usd"),
             "seed_from": run_input.get("seed_from"), "input": Jsonb(run_input)})

    def sweep_spend(self, sweep_id: str) -> float:
        """Dollars spent so far by a sweep's experiments, running ones included."""
        return self._execute(
            "SELECT coalesce(sum(cost_usd), 0)::float AS spent FROM experiments WHERE agent_id LIKE %s",
            (_like_prefix(sweep_id + "/"),),
        ).fetchone()["spent"]

    def repetition_attempts(self, agent_id: str) -> list[dict]:
        """The experiments of one repetition of a sweep (its agent id), oldest first."""
        return self._execute("SELECT id, status, ending FROM experiments WHERE agent_id = %s ORDER BY id",
                             (agent_id,)).fetchall()

    def execution_outcome(self, execution_arn: str) -> dict | None:
        """The status of the experiment an execution started, and whether it is closed (None: no experiment:
        its start was rejected, or has not run yet)."""
        return self._execute("SELECT status, completed_at IS NOT NULL AS completed FROM experiments "
                             "WHERE origin_execution_arn = %s", (execution_arn,)).fetchone()


def _like_prefix(prefix: str) -> str:
    """A LIKE pattern matching strings that start with ``prefix`` (its wildcards escaped)."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def shared_store() -> Store:
    """The store the handlers use: the warm container's connection, replaced once by a fresh one when a
    statement finds it dropped."""
    return Store(db.connection(), reconnect=db.connection)


_LOAD_TURN = """
    SELECT {columns},
           CASE WHEN %(with_maze)s THEN to_jsonb(m) END AS maze,
           to_jsonb(t) AS committed_turn,
           (SELECT coalesce(jsonb_agg(r ORDER BY r.step_number), '[]'::jsonb)
              FROM (SELECT a.step_number, a.action_type, a.to_x, a.to_y, a.success, a.error, a.tiles_seen
                      FROM actions a
                     WHERE a.experiment_id = e.id
                     ORDER BY a.step_number DESC
                     LIMIT greatest((e.config ->> 'historyActions')::int,
                                    (e.config ->> 'maxRecallActions')::int)) r) AS recent_actions,
           (SELECT jsonb_agg(jsonb_build_object(
                       'turn', w.turn_number, 'closing', w.closing_messages, 'message_tokens', w.message_tokens,
                       'calls', (SELECT coalesce(jsonb_agg(jsonb_build_object('request', c.request_messages,
                                                                              'response', c.response)
                                                           ORDER BY c.call_index), '[]'::jsonb)
                                   FROM model_calls c
                                  WHERE c.experiment_id = w.experiment_id AND c.turn_number = w.turn_number
                                    AND c.kind = 'turn'))
                       ORDER BY w.turn_number)
              FROM (SELECT * FROM turns h
                     WHERE h.experiment_id = e.id
                       AND e.config ->> 'historyMode' IN ('conversation', 'summary')
                     ORDER BY h.turn_number DESC
                     LIMIT (e.config ->> 'historyTurns')::int + 1) w) AS earlier_turns
      FROM experiments e
      JOIN mazes m ON m.id = e.maze_id
      LEFT JOIN turns t ON t.experiment_id = e.id AND t.turn_number = %(turn)s
     WHERE e.id = %(id)s
""".replace("{columns}", ", ".join(f"e.{column}" for column in COLUMNS))

# The experiment's columns a turn advances (the turn state's own constants, never input): counters get this
# turn's increments, values are replaced.
_ADVANCE = ", ".join([*(f"{c} = {c} + %({c})s" for c in WORLD_COUNTERS),
                      *(f"{c} = %({c})s" for c in (*WORLD_VALUES, "current_x", "current_y", "agent_state",
                                                     "memory"))])

_COMMIT_TURN = """
    WITH advanced AS (
        UPDATE experiments SET
            {advance},
            turn_count = turn_count + 1,
            input_tokens = input_tokens + %(input_tokens)s,
            output_tokens = output_tokens + %(output_tokens)s,
            cost_usd = cost_usd + %(cost_usd)s,
            throttle_count = throttle_count + %(throttles)s,
            history_tokens = history_tokens + %(message_tokens)s,
            model_calls = model_calls + %(model_calls)s,
            latency_ms = latency_ms + %(latency_ms)s,
            last_action_at = CASE WHEN %(action_count)s > 0 THEN now() ELSE last_action_at END,
            stalled_turns = CASE WHEN %(stalled)s THEN stalled_turns + 1 ELSE 0 END,
            -- tiles first stood on this turn: its positions that no earlier action ended on, the start excepted
            -- (the statement sees the actions as they were before it; one probe of actions_position_idx each)
            unique_tiles_visited = unique_tiles_visited + (
                SELECT count(*)
                  FROM (SELECT DISTINCT a.to_x, a.to_y
                          FROM jsonb_to_recordset(%(actions)s) AS a(to_x integer, to_y integer)) p
                 WHERE NOT EXISTS (SELECT 1 FROM mazes m
                                    WHERE m.id = experiments.maze_id AND m.start_x = p.to_x AND m.start_y = p.to_y)
                   AND NOT EXISTS (SELECT 1 FROM actions o
                                    WHERE o.experiment_id = experiments.id AND o.to_x = p.to_x AND o.to_y = p.to_y))
         WHERE id = %(id)s AND turn_count = %(turn)s - 1 AND status = 'running'
        RETURNING id
    ), turn AS (
        INSERT INTO turns (experiment_id, turn_number, first_step, action_count, model_calls,
                           input_tokens, output_tokens, cost_usd, latency_ms, throttles, end_reason,
                           started_at, closing_messages, message_tokens, context)
        SELECT id, %(turn)s, %(first_step)s, %(action_count)s, %(model_calls)s, %(input_tokens)s,
               %(output_tokens)s, %(cost_usd)s, %(latency_ms)s, %(throttles)s, %(end_reason)s,
               %(started_at)s, %(closing_messages)s, %(message_tokens)s, %(context)s
          FROM advanced
        RETURNING experiment_id
    ), stored_calls AS (
        INSERT INTO model_calls (experiment_id, turn_number, call_index, request_messages, response,
                                 input_tokens, output_tokens, latency_ms, stop_reason, durations,
                                 throttles, kind)
        SELECT turn.experiment_id, %(turn)s, c.*
          FROM turn, jsonb_to_recordset(%(calls)s) AS c(
               call_index integer, request_messages jsonb, response jsonb, input_tokens integer,
               output_tokens integer, latency_ms integer, stop_reason text, durations jsonb,
               throttles integer, kind text)
        RETURNING 1
    ), stored_actions AS (
        INSERT INTO actions (experiment_id, turn_number, step_number, action_type, tool_name, arguments,
                             reasoning, from_x, from_y, to_x, to_y, success, error, tiles_seen,
                             goal_visible)
        SELECT turn.experiment_id, %(turn)s, a.*
          FROM turn, jsonb_to_recordset(%(actions)s) AS a(
               step_number integer, action_type text, tool_name text, arguments jsonb, reasoning text,
               from_x integer, from_y integer, to_x integer, to_y integer, success boolean,
               error text, tiles_seen jsonb, goal_visible boolean)
        RETURNING 1
    )
    SELECT count(*) AS committed FROM turn
""".replace("{advance}", _ADVANCE)
