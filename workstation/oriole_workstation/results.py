"""The researcher's reads: what the CLI shows (an experiment's outcome, the comparison, a run to draw) and
the experiments a local runner holds. The turn path's SQL and a sweep's bookkeeping (which the sweep state
machine's tasks need) stay in the runtime package (``oriole.store``); none of this ships to Lambda.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.abc import AdaptContext, Buffer
from psycopg.adapt import Loader
from psycopg.rows import class_row, scalar_row, tuple_row
from psycopg.types.numeric import FloatLoader
from psycopg.types.string import ByteaLoader, TextLoader

from oriole.errors import OrioleError
from oriole.statuses import Ending
from oriole.store import Store
from oriole_workstation.display import terminal_safe
from oriole_workstation.provenance import natural
from oriole_workstation.rows import (
    ColumnDescription,
    ComparedExperiment,
    ComparisonRow,
    ExperimentDetail,
    ExperimentRun,
    ExperimentSummary,
    ListedExperiment,
    ListingChoices,
    MazeCount,
    Neighbours,
    OverBudget,
    PairedRow,
    StatusRow,
    StepRow,
    SweepPlan,
    SweepRow,
)

Row = TypeVar("Row")

RUN_LOCK_SPACE = 0x6F72_696F  # "orio": (space, hashtext(execution ARN)) advisory locks held by local runners
SWEEP_LOCK_SPACE = 0x6F72_7377  # "orsw": (space, hashtext(sweep id)) held by the process running a sweep locally
EXPORT_TABLES = ("experiments", "turns", "actions", "model_calls")  # what `oriole export` writes, in this order
_CHOSEN = (
    "chosen_experiments(ids => %(ids)s, sweeps => %(sweeps)s, models => %(models)s, agents => %(agents)s, "
    "mazes => %(mazes)s, prompts => %(prompts)s, tags => %(tags)s, since => %(since)s, until => %(until)s)"
)
_PICKED = f"comparison_scope(experiments => ARRAY(SELECT c.id FROM {_CHOSEN} c))"
# Each exported table over the picked experiments, in a stable order; the experiments file is the view, its
# varied_config over the picked experiments (their compared_config), as the report's: the view alone compares
# every experiment of the database, an export or a report those its filters select.
_EXPORTS = {
    "experiments": f"SELECT scoped.* FROM {_PICKED} c JOIN experiment_results r USING (experiment_id), "
    "LATERAL jsonb_populate_record(r, jsonb_build_object('varied_config', c.compared_config)) scoped "
    "ORDER BY scoped.experiment_id",
    **{
        table: f"SELECT t.* FROM {table} t WHERE t.experiment_id IN (SELECT experiment_id FROM {_PICKED}) "
        f"ORDER BY {order}"
        for table, order in (
            ("turns", "t.experiment_id, t.turn_number"),
            ("actions", "t.experiment_id, t.step_number"),
            ("model_calls", "t.experiment_id, t.turn_number, t.call_index"),
        )
    },
}
# What each filter could name (``Results.known_values``): the values the experiments have.
_KNOWN = {
    "sweeps": "SELECT id FROM sweeps UNION SELECT substring(t FROM 7) "
    "FROM experiments, unnest(comment_tags(comment)) t WHERE starts_with(t, 'sweep:')",
    "models": "SELECT DISTINCT model_name FROM experiments",
    "agents": "SELECT agent_label FROM experiments WHERE agent_label IS NOT NULL "
    "UNION SELECT llm_provider || '/' || model_name FROM experiments",
    "mazes": "SELECT m.name FROM mazes m WHERE m.id IN (SELECT maze_id FROM experiments) "
    "UNION SELECT m.family FROM mazes m WHERE m.id IN (SELECT maze_id FROM experiments)",
    "prompts": "SELECT DISTINCT prompt_version FROM experiments",
    "tags": "SELECT DISTINCT t FROM experiments, unnest(comment_tags(comment)) t",
}
_NEAREST_IDS = (
    "(SELECT id FROM experiments WHERE id < %(id)s ORDER BY id DESC LIMIT 2) "
    "UNION ALL (SELECT id FROM experiments WHERE id > %(id)s ORDER BY id LIMIT 2)"
)
# Where each exported table's column descriptions live (COMMENT ON COLUMN: migration 0005 for the tables,
# migrations/views/experiment_results.sql for the view).
_DESCRIBED_BY = {
    "experiments": "experiment_results",
    "turns": "turns",
    "actions": "actions",
    "model_calls": "model_calls",
}


FILTER_KINDS = {  # a Filters field -> the option that sets it, as messages name it
    "ids": "experiment",
    "sweeps": "--sweep",
    "models": "--model",
    "agents": "--agent",
    "mazes": "--maze",
    "prompts": "--prompt",
    "tags": "--tag",
}


@dataclass(frozen=True)
class Filters:
    """Which experiments a command acts on, the same for every command (``chosen_experiments``, the SQL's one
    definition): each filter a tuple of values (empty: any), the values of one filter a union (``--sweep a
    --sweep b``), the filters an intersection (``--sweep a --model m``)."""

    ids: tuple[int, ...] = ()
    sweeps: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    mazes: tuple[str, ...] = ()
    prompts: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None

    def arguments(self) -> dict[str, Any]:
        """The filters as ``chosen_experiments``' arguments (an empty filter is NULL: any)."""
        return {
            name: (list(value) if isinstance(value, tuple) else value) or None for name, value in vars(self).items()
        }

    def named(self) -> list[tuple[str, str]]:
        """Every value a filter names, as ``(field, value)``: each must match some experiment."""
        return [(name, str(value)) for name in FILTER_KINDS for value in getattr(self, name)]

    @property
    def chosen(self) -> bool:
        """Whether any filter is set (none: every experiment)."""
        return any(vars(self).values())

    @property
    def fixed(self) -> bool:
        """Whether the filters name experiments by id alone: a set no new experiment joins."""
        return bool(self.ids) and not any(value for name, value in vars(self).items() if name != "ids")

    def describe(self) -> str:
        """``sweep a or b, model m, since 2026-01-02 00:00``; ids named as a list (``experiments 9, 3 and 5``: each
        one, not a choice among them); ``every experiment`` when none is set."""
        parts = [
            _listed(values) if name == "ids" else f"{FILTER_KINDS[name].lstrip('-')} {' or '.join(map(str, values))}"
            for name, values in vars(self).items()
            if name in FILTER_KINDS and values
        ]
        parts += [f"{name} {value:%Y-%m-%d %H:%M}" for name in ("since", "until") if (value := getattr(self, name))]
        return terminal_safe(", ".join(parts)) or "every experiment"


EVERYTHING = Filters()  # no filter


def _listed(ids: tuple[int, ...]) -> str:
    """``experiment 9``; ``experiments 9, 3 and 5``."""
    if len(ids) == 1:
        return f"experiment {ids[0]}"
    return f"experiments {', '.join(map(str, ids[:-1]))} and {ids[-1]}"


# What the viewer's experiment list sorts by: its names -> the expression over experiment_results.
LISTING_ORDER = {
    "id": "experiment_id",
    "agent": "agent",
    "model": "model_name",
    "maze": "maze",
    "ending": "ending",
    "started": "started_at",
    "actions": "actions",
    "efficiency": "path_efficiency",
    "tokens": "tokens",
    "cost": "cost_usd",
}
ENDINGS_LISTED = (*(e.value for e in Ending), "running")  # what the viewer's ending filter offers


@dataclass(frozen=True)
class Listing:
    """The viewer's experiment list: its filters (None: any; ``agent`` is the name tables show, ``maze`` a maze
    or a family, ``ending`` one of ``ENDINGS_LISTED``), a search over the id, agent, model, maze, failure reason
    and comment, the order (a key of ``LISTING_ORDER``) and the page."""

    agent: str | None = None
    model: str | None = None
    maze: str | None = None
    ending: str | None = None
    tag: str | None = None
    sweep: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    search: str | None = None
    order: str = "id"
    descending: bool = True
    limit: int = 100
    offset: int = 0


_AGENT = "coalesce(r.agent_label, r.llm_provider || '/' || r.model_name)"


@dataclass(frozen=True)
class _Unmatched:
    kind: str
    value: str


class ExportCursor:
    """One exported table, streamed in batches of tuples from a server-side cursor: JSON arrives as its text,
    numeric as float, so nothing is parsed only to be written back."""

    def __init__(self, cursor: psycopg.ServerCursor[tuple[Any, ...]], batch_rows: int):
        self.cursor, self.batch_rows = cursor, batch_rows

    @property
    def columns(self) -> list[psycopg.Column]:
        """The query's columns: ``exported`` runs it before handing the cursor over, so they are known."""
        assert self.cursor.description is not None, "an ExportCursor's query has been executed"
        return self.cursor.description

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def type_names(self) -> list[str]:
        """Each column's PostgreSQL type name, an array's as ``_`` and its element's (``_text``)."""
        names = []
        for column in self.columns:
            info = self.cursor.adapters.types.get(column.type_code)
            assert info is not None, "every exported column has a built-in type, which psycopg knows"
            names.append(("_" if info.oid != column.type_code else "") + info.name)
        return names

    def batches(self) -> Iterator[list[tuple[Any, ...]]]:
        while rows := self.cursor.fetchmany(self.batch_rows):
            yield rows

    def close(self) -> None:
        self.cursor.close()


class _AnswerText(Loader):
    """A verbatim answer (``model_calls.answer``, bytes, read as ``bytea`` reads it) as the text a file can hold:
    UTF-8, with U+FFFD for any byte that is not (the database keeps the bytes)."""

    def __init__(self, oid: int, context: AdaptContext | None = None):
        super().__init__(oid, context)
        self._bytea = ByteaLoader(oid, context)

    def load(self, data: Buffer) -> str:
        return bytes(self._bytea.load(bytes(data))).decode("utf-8", errors="replace")


class Results:
    """Reads over one connection (autocommit), for the workstation commands: each returns typed rows
    (``oriole_workstation.rows``), whatever row factory the connection has."""

    def __init__(self, conn: psycopg.Connection[Any]):
        self.conn = conn
        self.store = Store(conn)  # the runtime's own look-ups (an experiment by its execution), shared

    def _rows(self, row_type: type[Row], query: str, params: Any = None) -> list[Row]:
        with self.conn.cursor(row_factory=class_row(row_type)) as cursor:
            return cursor.execute(query, params).fetchall()

    def _row(self, row_type: type[Row], query: str, params: Any = None) -> Row | None:
        with self.conn.cursor(row_factory=class_row(row_type)) as cursor:
            return cursor.execute(query, params).fetchone()

    def _values(self, query: str, params: Any = None) -> list[Any]:
        """The first column of every row."""
        with self.conn.cursor(row_factory=scalar_row) as cursor:
            return cursor.execute(query, params).fetchall()

    def hold(self, execution_arn: str) -> None:
        """Mark the execution as run by this session (a local runner) until the session ends or lets go: a
        session advisory lock keyed on the execution's ARN, known before its experiment row exists, so a runner
        that dies lets go of its executions with its connection."""
        self.conn.execute("SELECT pg_try_advisory_lock(%s::int, hashtext(%s))", (RUN_LOCK_SPACE, execution_arn))

    def hold_sweep(self, sweep_id: str) -> bool:
        """Mark the sweep as run by this session (a local ``oriole sweep``) until the session ends; False when
        another session runs it already (two processes would start, follow and count the same experiments)."""
        [held] = self._values("SELECT pg_try_advisory_lock(%s::int, hashtext(%s))", (SWEEP_LOCK_SPACE, sweep_id))
        return bool(held)

    def ping(self) -> None:
        """One trivial round trip: raises OperationalError when the connection was dropped."""
        self.conn.execute("SELECT 1")

    def let_go(self, execution_arn: str) -> None:
        """Release an execution this session holds (its experiment is closed)."""
        self.conn.execute("SELECT pg_advisory_unlock(%s::int, hashtext(%s))", (RUN_LOCK_SPACE, execution_arn))

    def held(self, execution_arns: list[str]) -> set[str]:
        """Which of these executions a live session (a local runner) holds (see ``hold``): a session of a role
        that may run experiments (one that may update them), so a lock the read-only role took in the runners'
        space (where the server lets it) masks no abandoned run. Two ARNs whose 32-bit hashes collide would make
        a dead one look held while the other runs: ``oriole doctor`` then lists it a little later, never too
        early."""
        return set(
            self._values(
                """
            SELECT x.arn
              FROM unnest(%(arns)s::text[]) AS x(arn)
             WHERE EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                              AND l.classid = %(space)s::bigint::oid AND l.objid = hashtext(x.arn)::oid
                              AND has_table_privilege(a.usesysid, 'experiments', 'UPDATE'))
            """,
                {"space": RUN_LOCK_SPACE, "arns": execution_arns},
            )
        )

    def database(self) -> str:
        """Which database these results come from, as a report names it: host, port and database name (a local
        socket by its folder), never a password."""
        info = self.conn.info
        host = info.host if not info.host.startswith("/") else f"local socket {info.host}"
        return f"{host}:{info.port}/{info.dbname}"

    def summary(self, experiment_id: int) -> ExperimentSummary | None:
        """One experiment's outcome, as the CLI reports it."""
        return self._row(
            ExperimentSummary,
            """
            SELECT e.id AS experiment_id, e.status, e.ending, e.goal_found, e.action_count AS actions,
                   e.turn_count AS turns, e.move_count AS moves, e.failed_move_count AS failed_moves,
                   e.current_x, e.current_y, e.failure_reason, e.llm_provider, e.model_name,
                   e.goal_first_seen_step, e.goal_reached_step, m.name AS maze, m.shortest_path_length,
                   e.optimal_path_length, e.move_count - e.failed_move_count AS path_length,
                   CASE WHEN e.goal_found
                        THEN coalesce(round(e.optimal_path_length::numeric / nullif(greatest(e.optimal_path_length,
                                            e.move_count - e.failed_move_count), 0), 4), 1)::float END
                        AS path_efficiency,
                   e.input_tokens, e.output_tokens, e.cost_usd::float AS cost_usd, e.failed_attempts,
                   e.failed_input_tokens + e.failed_output_tokens AS failed_tokens,
                   e.failed_cost_usd::float AS failed_cost_usd,
                   extract(epoch FROM coalesce(e.completed_at, now()) - e.started_at)::float AS duration_seconds,
                   e.completed_at IS NOT NULL AS completed, e.execution_arns
              FROM experiments e JOIN mazes m ON m.id = e.maze_id
             WHERE e.id = %s
            """,
            (experiment_id,),
        )

    def comparison(self, filters: Filters = EVERYTHING, by_maze: bool = False) -> list[ComparisonRow]:
        """The comparison (``compare_experiments``) over the experiments matching the filters."""
        return self._rows(
            ComparisonRow,
            f"SELECT * FROM compare_experiments(experiments => ARRAY(SELECT c.id FROM {_CHOSEN} c), "
            "by_maze => %(by_maze)s)",
            {**filters.arguments(), "by_maze": by_maze},
        )

    def success_by_step(self, filters: Filters = EVERYTHING, by_maze: bool = False) -> list[StepRow]:
        """Each group's success by step (``success_by_step``: Kaplan-Meier, censored runs censored)."""
        return self._rows(
            StepRow,
            f"SELECT * FROM success_by_step(experiments => ARRAY(SELECT c.id FROM {_CHOSEN} c), "
            "by_maze => %(by_maze)s)",
            {**filters.arguments(), "by_maze": by_maze},
        )

    def paired(self, filters: Filters = EVERYTHING, by_maze: bool = False) -> list[PairedRow]:
        """Every two groups of a family and size (or maze) over their shared runs (``paired_comparison``)."""
        return self._rows(
            PairedRow,
            f"SELECT * FROM paired_comparison(experiments => ARRAY(SELECT c.id FROM {_CHOSEN} c), "
            "by_maze => %(by_maze)s)",
            {**filters.arguments(), "by_maze": by_maze},
        )

    def over_budget_calls(self, filters: Filters = EVERYTHING) -> dict[int, int]:
        """Per experiment matching the filters with any: its model calls whose prompt the server counted over the
        context budget."""
        rows = self._rows(
            OverBudget,
            "SELECT t.experiment_id, count(*) AS calls "
            f"FROM {_PICKED} c JOIN turns t ON t.experiment_id = c.experiment_id "
            "CROSS JOIN LATERAL jsonb_array_elements(coalesce(t.context -> 'over_budget', '[]')) f "
            "GROUP BY t.experiment_id",
            filters.arguments(),
        )
        return {row.experiment_id: row.calls for row in rows}

    def chosen(self, filters: Filters) -> list[int]:
        """The ids of the experiments the filters choose (``chosen_experiments``), in order."""
        return self._values(f"SELECT c.id FROM {_CHOSEN} c ORDER BY c.id", filters.arguments())

    def unmatched(self, filters: Filters) -> list[tuple[str, str]]:
        """Every value a filter names (``Filters.named``) that matches no experiment on its own, as ``(field,
        value)``; a sweep planned here (``sweeps``) but without an experiment yet matches."""
        named = filters.named()
        if not named:
            return []
        rows = self._rows(
            _Unmatched,
            """
            SELECT f.kind, f.value FROM unnest(%(kinds)s::text[], %(values)s::text[]) WITH ORDINALITY f(kind, value, n)
             WHERE NOT EXISTS (SELECT 1 FROM chosen_experiments(
                       ids => CASE WHEN f.kind = 'ids' THEN ARRAY[f.value::bigint] END,
                       sweeps => CASE WHEN f.kind = 'sweeps' THEN ARRAY[f.value] END,
                       models => CASE WHEN f.kind = 'models' THEN ARRAY[f.value] END,
                       agents => CASE WHEN f.kind = 'agents' THEN ARRAY[f.value] END,
                       mazes => CASE WHEN f.kind = 'mazes' THEN ARRAY[f.value] END,
                       prompts => CASE WHEN f.kind = 'prompts' THEN ARRAY[f.value] END,
                       tags => CASE WHEN f.kind = 'tags' THEN ARRAY[f.value] END))
               AND NOT (f.kind = 'sweeps' AND EXISTS (SELECT 1 FROM sweeps s WHERE s.id = f.value))
             ORDER BY f.n
            """,
            {"kinds": [kind for kind, _ in named], "values": [value for _, value in named]},
        )
        return [(row.kind, row.value) for row in rows]

    def known_values(self, kind: str, near: str) -> list[str]:
        """What a filter of ``kind`` (a ``Filters`` field) could name, to suggest in place of ``near``: every
        sweep, model, agent, maze (and family), prompt version or tag the experiments have; for an id, the
        existing ids nearest to it."""
        if kind == "ids":
            return [str(n) for n in self._values(_NEAREST_IDS, {"id": int(near)})]
        return self._values(_KNOWN[kind])

    def compared(self, filters: Filters = EVERYTHING) -> list[ComparedExperiment]:
        """The experiments the comparison counts (``experiment_results``), each with the configuration values that
        set its comparison group apart (``compared_config``), its maze's size and the code that started it
        (``code_version`` and the rest of its identity), oldest first."""
        return self._rows(
            ComparedExperiment,
            f"SELECT r.*, c.compared_config, c.counted, m.width * m.height AS maze_tiles FROM {_PICKED} c "
            "JOIN experiment_results r USING (experiment_id) JOIN mazes m ON m.id = r.maze_id "
            "ORDER BY r.experiment_id",
            filters.arguments(),
        )

    def status(
        self, filters: Filters = EVERYTHING, *, running: bool = False, limit: int | None = None
    ) -> list[StatusRow]:
        """Rows of ``experiment_status`` of the experiments the filters choose: running ones first, then the
        newest."""
        return self._rows(
            StatusRow,
            f"SELECT * FROM experiment_status WHERE experiment_id IN (SELECT c.id FROM {_CHOSEN} c) "
            "AND (NOT %(running)s OR status = 'running') "
            "ORDER BY status = 'running' DESC, experiment_id DESC LIMIT %(limit)s",
            {**filters.arguments(), "running": running, "limit": limit},
        )

    def set_archived(self, filters: Filters, archived: bool) -> list[int]:
        """Archive (``archived``) or restore the experiments the filters choose: an archived experiment keeps
        every row but leaves every report, comparison and export. The ids changed, in order."""
        return sorted(
            self._values(
                "UPDATE experiments SET archived_at = CASE WHEN %(archived)s THEN coalesce(archived_at, now()) END "
                f"WHERE id IN (SELECT c.id FROM {_CHOSEN} c) AND (archived_at IS NULL) = %(archived)s RETURNING id",
                {**filters.arguments(), "archived": archived},
            )
        )

    def delete(self, filters: Filters) -> list[int]:
        """Delete the experiments the filters choose, and the replays of them (a replay's scratch experiment cannot
        outlive its original), with their turns, actions and model calls, in one transaction; a running one is
        refused, and then nothing is deleted. What a sweep's deleted experiments had spent stays on the sweep
        (``sweeps.deleted_cost_usd``): its spend limit still counts it when the sweep resumes. The ids deleted, in
        order."""
        chosen = f"(id IN (SELECT c.id FROM {_CHOSEN} c) OR replay_of IN (SELECT c.id FROM {_CHOSEN} c))"  # and replays
        with self.conn.transaction():
            running = self._values(
                f"SELECT id FROM experiments WHERE {chosen} AND status = 'running' ORDER BY id FOR UPDATE",
                filters.arguments(),
            )
            if running:
                raise OrioleError(
                    f"experiment(s) {', '.join(map(str, running))} still running: stop them (or wait "
                    "for them to end) first; nothing was deleted"
                )
            return sorted(
                self._values(
                    f"""
                    WITH doomed AS (SELECT id, sweep_id, cost_usd FROM experiments WHERE {chosen}),
                         kept AS (UPDATE sweeps s SET deleted_cost_usd = s.deleted_cost_usd + d.spent
                                    FROM (SELECT sweep_id, sum(cost_usd) AS spent FROM doomed
                                           WHERE sweep_id IS NOT NULL GROUP BY sweep_id) d
                                   WHERE s.id = d.sweep_id)
                    DELETE FROM experiments WHERE id IN (SELECT id FROM doomed) RETURNING id
                    """,
                    filters.arguments(),
                )
            )

    def sweep_plan(self, sweep_id: str) -> SweepPlan | None:
        """A sweep's latest plan as PlanSweep recorded it (``sweeps``); None when it never ran against this
        database."""
        return self._row(
            SweepPlan,
            "SELECT id, planned, spend_limit_usd, seed_from, first_planned_at, planned_at FROM sweeps WHERE id = %s",
            (sweep_id,),
        )

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read-only transaction on one snapshot: every read inside it sees the same database, so files
        exported while experiments run still agree with one another."""
        with self.conn.transaction():
            self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield

    def exported(self, table: str, filters: Filters, batch_rows: int = 20_000) -> ExportCursor:
        """A server-side cursor over one exported table (``EXPORT_TABLES``) for the experiments matching the
        filters; use it inside ``with results.snapshot():`` and close it."""
        cursor = self.conn.cursor(name=f"export_{table}", row_factory=tuple_row)
        for json_type in ("json", "jsonb"):
            cursor.adapters.register_loader(json_type, TextLoader)
        cursor.adapters.register_loader("numeric", FloatLoader)
        cursor.adapters.register_loader("bytea", _AnswerText)
        # every row is read: planned for the whole result, not for the first rows as a cursor is by default (which
        # walked all the actions of the database in their key's order to send a sweep's first ones early)
        self.conn.execute("SET LOCAL cursor_tuple_fraction = 1")
        cursor.execute(_EXPORTS[table], filters.arguments())
        return ExportCursor(cursor, batch_rows)

    def descriptions(self, table: str) -> dict[str, str | None]:
        """An exported table's column descriptions, from the database (COMMENT ON COLUMN): its data dictionary."""
        rows = self._rows(
            ColumnDescription,
            "SELECT a.attname AS name, col_description(a.attrelid, a.attnum) AS description FROM pg_attribute a "
            "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
            (_DESCRIBED_BY[table],),
        )
        return {row.name: row.description for row in rows}

    def experiment_run(self, experiment_id: int) -> ExperimentRun | None:
        """An experiment with its maze, each turn's model text and its actions in order: what a picture or a
        replay of the run shows. The actions come as a stream (``run_actions``), read once."""
        record = self._row(
            ExperimentRun,
            """
            SELECT e.id AS experiment_id, e.llm_provider, e.model_name, e.prompt_version, e.status, e.goal_found,
                   e.goal_first_seen_step, e.goal_reached_step, e.failure_reason,
                   (e.config ->> 'visionRange')::int AS vision_range,
                   m.name AS maze, m.grid, m.start_x, m.start_y, m.goal_x, m.goal_y, m.shortest_path_length,
                   e.optimal_path_length,
                   (SELECT coalesce(jsonb_object_agg(t.turn_number, t.text), '{}'::jsonb)
                      FROM (SELECT c.turn_number, string_agg(c.response ->> 'text', E'\n' ORDER BY c.call_index) AS text
                              FROM model_calls c
                             WHERE c.experiment_id = e.id AND coalesce(c.response ->> 'text', '') <> ''
                             GROUP BY c.turn_number) t) AS model_text
              FROM experiments e JOIN mazes m ON m.id = e.maze_id
             WHERE e.id = %s
            """,
            (experiment_id,),
        )
        return None if record is None else replace(record, actions=self.run_actions(experiment_id))

    def run_actions(self, experiment_id: int, batch_rows: int = 5_000) -> Iterator[dict[str, Any]]:
        """An experiment's actions in order, one dict each (step, turn, action, from, to, success, error,
        reasoning, tiles_seen: only the tiles first seen at that action, None when none was: a tile seen again
        changes no picture), read through a server-side cursor ``batch_rows`` at a time: a run of a million
        actions is never held whole, by the database or here. The read starts at the first ``next``."""
        with self.conn.transaction(), self.conn.cursor(name=f"run_actions_{experiment_id}") as cursor:
            cursor.itersize = batch_rows
            cursor.execute(
                """
                WITH firsts AS (SELECT step, jsonb_agg(tile) AS tiles
                                  FROM (SELECT min(a.step_number) AS step, t.tile
                                          FROM actions a, jsonb_array_elements(a.tiles_seen) t (tile)
                                         WHERE a.experiment_id = %(id)s GROUP BY t.tile) first_sight
                                 GROUP BY step)
                SELECT a.step_number AS step, a.turn_number AS turn, a.action_type AS action,
                       ARRAY[a.from_x, a.from_y] AS "from", ARRAY[a.to_x, a.to_y] AS "to", a.success, a.error,
                       a.reasoning, f.tiles AS tiles_seen
                  FROM actions a LEFT JOIN firsts f ON f.step = a.step_number
                 WHERE a.experiment_id = %(id)s ORDER BY a.step_number
                """,
                {"id": experiment_id},
            )
            yield from cursor

    def listing(self, chosen: Listing) -> list[ListedExperiment]:
        """A page of the experiments ``chosen`` selects, in its order (then by id), each with the count of every
        match (``total``)."""
        order = sql.SQL(LISTING_ORDER.get(chosen.order, "experiment_id"))
        query = sql.SQL(
            f"""
            SELECT * FROM (
                SELECT r.experiment_id, {_AGENT} AS agent, r.llm_provider, r.model_name, r.maze, r.maze_family,
                       r.maze_size, r.status, r.ending, r.actions, r.path_efficiency,
                       r.input_tokens + r.output_tokens AS tokens, r.cost_usd, r.started_at, r.completed_at,
                       r.sweep_id, r.failure_reason, count(*) OVER () AS total
                  FROM experiment_results r
                 WHERE (%(agent)s::text IS NULL OR {_AGENT} = %(agent)s)
                   AND (%(model)s::text IS NULL OR r.model_name = %(model)s)
                   AND (%(maze)s::text IS NULL OR %(maze)s IN (r.maze, r.maze_family))
                   AND (%(ending)s::text IS NULL OR coalesce(r.ending, 'running') = %(ending)s)
                   AND (%(tag)s::text IS NULL OR %(tag)s = ANY (r.tags))
                   AND (%(sweep)s::text IS NULL OR r.sweep_id = %(sweep)s)
                   AND (%(since)s::timestamptz IS NULL OR r.started_at >= %(since)s)
                   AND (%(until)s::timestamptz IS NULL OR r.started_at < %(until)s)
                   AND (%(search)s::text IS NULL OR concat_ws(' ', r.experiment_id, {_AGENT}, r.model_name, r.maze,
                                                              r.failure_reason, r.comment) ILIKE %(pattern)s)
            ) listed
            ORDER BY {{order}} {"DESC" if chosen.descending else "ASC"} NULLS LAST, experiment_id
            LIMIT %(limit)s OFFSET %(offset)s
            """
        ).format(order=order)
        search = chosen.search or None
        pattern = None if search is None else "%" + re.sub(r"([\\%_])", r"\\\1", search) + "%"
        with self.conn.cursor(row_factory=class_row(ListedExperiment)) as cursor:
            return cursor.execute(query, {**asdict(chosen), "search": search, "pattern": pattern}).fetchall()

    def listing_choices(self) -> dict[str, list[str]]:
        """What the viewer's filters offer: every agent, model, maze family, maze, tag and sweep the results hold."""
        row = self._row(
            ListingChoices,
            f"""
            SELECT array_agg(DISTINCT {_AGENT}) AS agents, array_agg(DISTINCT r.model_name) AS models,
                   array_agg(DISTINCT r.maze_family) AS families, array_agg(DISTINCT r.maze) AS mazes,
                   (SELECT array_agg(DISTINCT t) FROM experiment_results x, unnest(x.tags) t) AS tags,
                   array_agg(DISTINCT r.sweep_id) FILTER (WHERE r.sweep_id IS NOT NULL) AS sweeps
              FROM experiment_results r
            """,
        )
        return {name: sorted(values or (), key=natural) for name, values in asdict(row).items()} if row else {}

    def sweeps(self) -> list[SweepRow]:
        """Every sweep, newest activity first: those PlanSweep recorded and those only their experiments' tags
        name."""
        return self._rows(
            SweepRow,
            """
            WITH tagged AS (
                SELECT r.sweep_id, count(*) AS experiments, count(*) FILTER (WHERE r.status = 'running') AS running,
                       count(*) FILTER (WHERE r.ending = 'success') AS successes,
                       count(*) FILTER (WHERE r.ending = 'error') AS errors,
                       count(DISTINCT coalesce(r.agent_label, r.llm_provider || '/' || r.model_name)) AS agents,
                       count(DISTINCT r.maze_hash) AS mazes, min(r.started_at) AS first_started,
                       max(coalesce(r.last_action_at, r.started_at)) AS last_activity,
                       sum(r.input_tokens + r.output_tokens) AS tokens, sum(r.cost_usd) AS cost_usd
                  FROM experiment_results r WHERE r.sweep_id IS NOT NULL GROUP BY r.sweep_id
            )
            SELECT coalesce(t.sweep_id, s.id) AS id, s.planned, coalesce(t.experiments, 0) AS experiments,
                   coalesce(t.running, 0) AS running, coalesce(t.successes, 0) AS successes,
                   coalesce(t.errors, 0) AS errors, coalesce(t.agents, 0) AS agents, coalesce(t.mazes, 0) AS mazes,
                   coalesce(t.first_started, s.first_planned_at) AS first_started,
                   greatest(t.last_activity, s.planned_at) AS last_activity,
                   coalesce(t.tokens, 0) AS tokens, coalesce(t.cost_usd, 0) AS cost_usd
              FROM tagged t FULL JOIN sweeps s ON s.id = t.sweep_id
             ORDER BY 10 DESC NULLS LAST, 1
            """,
        )

    def detail(self, experiment_id: int) -> ExperimentDetail | None:
        """Where an experiment came from: its agent, prompt, configuration, seed, code, maze and executions."""
        return self._row(
            ExperimentDetail,
            """
            SELECT e.id AS experiment_id, coalesce(e.agent_label, e.llm_provider || '/' || e.model_name) AS agent,
                   e.llm_provider, e.model_name, e.prompt_version, e.prompt_hash, e.status, e.ending,
                   e.failure_reason, e.goal_found, e.seed, e.code_version, e.config, e.agent_id, e.comment,
                   e.sweep_id, e.started_at, e.completed_at,
                   e.execution_arns, m.name AS maze, m.family AS maze_family, m.width || 'x' || m.height AS maze_size,
                   m.content_hash AS maze_hash, m.source AS maze_source, m.generator AS maze_generator,
                   m.seed AS maze_seed, m.shortest_path_length, e.action_count AS actions, e.turn_count AS turns,
                   e.input_tokens, e.output_tokens, e.cost_usd
              FROM experiments e JOIN mazes m ON m.id = e.maze_id
             WHERE e.id = %s AND e.replay_of IS NULL
            """,
            (experiment_id,),
        )

    def neighbours(self, experiment_id: int, sweep_id: str | None) -> tuple[int | None, int | None]:
        """The experiments before and after this one: in its sweep when it has one, else among all results."""
        row = self._row(
            Neighbours,
            """
            SELECT (SELECT max(experiment_id) FROM experiment_results
                     WHERE experiment_id < %(id)s AND (%(sweep)s::text IS NULL OR sweep_id = %(sweep)s)) AS previous,
                   (SELECT min(experiment_id) FROM experiment_results
                     WHERE experiment_id > %(id)s AND (%(sweep)s::text IS NULL OR sweep_id = %(sweep)s)) AS next
            """,
            {"id": experiment_id, "sweep": sweep_id},
        )
        return (row.previous, row.next) if row else (None, None)

    def maze_counts(self) -> list[MazeCount]:
        """Per family and size: how many mazes the database holds, by source, with a few names."""
        return self._rows(
            MazeCount,
            """
            SELECT family, width, height, count(*) AS mazes,
                   count(*) FILTER (WHERE source = 'shipped') AS shipped,
                   count(*) FILTER (WHERE source = 'generated') AS generated,
                   count(*) FILTER (WHERE source = 'imported') AS imported,
                   (array_agg(name ORDER BY id))[1:5] AS names
              FROM mazes
             GROUP BY family, width, height
             ORDER BY min(id) FILTER (WHERE source = 'shipped') NULLS LAST, family, width
            """,
        )
