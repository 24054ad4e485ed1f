"""The researcher's reads: what the CLI shows (an experiment's outcome, the comparison, a run to draw) and
the experiments a local runner holds. The turn path's SQL and a sweep's bookkeeping (which the sweep state
machine's tasks need) stay in the runtime package (``oriole.store``); none of this ships to Lambda.
"""

from __future__ import annotations

from datetime import datetime

import psycopg

from oriole.store import Store

RUN_LOCK_SPACE = 0x6F72_696F  # "orio": (space, hashtext(execution ARN)) advisory locks held by local runners


class Results:
    """Reads over one connection (autocommit, dict rows), for the workstation commands."""

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn
        self.store = Store(conn)  # the runtime's own look-ups (an experiment by its execution), shared

    def _execute(self, query: str, params=None) -> psycopg.Cursor:
        return self.conn.execute(query, params)

    def hold(self, execution_arn: str) -> None:
        """Mark the execution as run by this session (a local runner) until the session ends or lets go: a
        session advisory lock keyed on the execution's ARN, known before its experiment row exists, so a runner
        that dies lets go of its executions with its connection."""
        self.conn.execute("SELECT pg_try_advisory_lock(%s::int, hashtext(%s))", (RUN_LOCK_SPACE, execution_arn))

    def ping(self) -> None:
        """One trivial round trip: raises OperationalError when the connection was dropped."""
        self.conn.execute("SELECT 1")

    def let_go(self, execution_arn: str) -> None:
        """Release an execution this session holds (its experiment is closed)."""
        self.conn.execute("SELECT pg_advisory_unlock(%s::int, hashtext(%s))", (RUN_LOCK_SPACE, execution_arn))

    def open_experiments(self, execution_prefix: str | None = None) -> list[dict]:
        """Experiments not closed yet, oldest first, optionally only those whose latest execution ARN starts
        with ``execution_prefix``; ``held`` says whether a live session (a local runner) holds any of their
        executions. (Two ARNs whose 32-bit hashes collide would make a dead one look held while the other runs:
        ``oriole doctor`` then lists it a little later, never too early.)"""
        return self._execute(
            """
            SELECT e.id AS experiment_id, m.name AS maze, e.llm_provider, e.model_name, e.started_at,
                   e.turn_count AS turns, e.action_count AS actions,
                   (SELECT max(t.completed_at) FROM turns t WHERE t.experiment_id = e.id) AS last_turn_at,
                   e.execution_arns[cardinality(e.execution_arns)] AS last_execution,
                   EXISTS (SELECT 1 FROM pg_locks l, unnest(e.execution_arns) AS x(arn)
                            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                              AND l.classid = %(space)s::bigint::oid AND l.objid = hashtext(x.arn)::oid) AS held
              FROM experiments e JOIN mazes m ON m.id = e.maze_id
             WHERE e.completed_at IS NULL
               AND (%(prefix)s::text IS NULL OR starts_with(e.execution_arns[cardinality(e.execution_arns)],
                                                              %(prefix)s))
             ORDER BY e.id
            """,
            {"space": RUN_LOCK_SPACE, "prefix": execution_prefix},
        ).fetchall()

    def summary(self, experiment_id: int) -> dict | None:
        """One experiment's outcome, as the CLI reports it."""
        return self._execute(
            """
            SELECT e.id AS experiment_id, e.status, e.goal_found, e.action_count AS actions,
                   e.turn_count AS turns, e.move_count AS moves, e.failed_move_count AS failed_moves,
                   e.current_x, e.current_y, e.failure_reason, e.llm_provider, e.model_name,
                   e.goal_first_seen_step, e.goal_reached_step, m.name AS maze, m.shortest_path_length,
                   CASE WHEN e.goal_found AND e.move_count > 0
                        THEN round(m.shortest_path_length::numeric / e.move_count, 4)::float END
                        AS path_efficiency,
                   e.input_tokens, e.output_tokens, e.cost_usd::float AS cost_usd,
                   extract(epoch FROM coalesce(e.completed_at, now()) - e.started_at)::float AS duration_seconds,
                   e.completed_at IS NOT NULL AS completed, e.execution_arns
              FROM experiments e JOIN mazes m ON m.id = e.maze_id
             WHERE e.id = %s
            """,
            (experiment_id,),
        ).fetchone()

    def comparison(self, *, model: str | None = None, prompt: str | None = None, maze: str | None = None,
                   since: datetime | None = None, until: datetime | None = None, tag: str | None = None,
                   by_maze: bool = False) -> list[dict]:
        """The comparison (``compare_experiments``) over the experiments matching the filters (None: any)."""
        return self._execute(
            "SELECT * FROM compare_experiments(model => %(model)s, prompt => %(prompt)s, maze => %(maze)s, "
            "since => %(since)s, until => %(until)s, tag => %(tag)s, by_maze => %(by_maze)s)",
            {"model": model, "prompt": prompt, "maze": maze, "since": since, "until": until, "tag": tag,
             "by_maze": by_maze},
        ).fetchall()

    def experiment_run(self, experiment_id: int) -> dict | None:
        """An experiment with its maze, every action in order and each turn's model text: what a picture
        or a replay of the run shows."""
        return self._execute(
            """
            SELECT e.id AS experiment_id, e.llm_provider, e.model_name, e.prompt_version, e.status, e.goal_found,
                   e.goal_first_seen_step, e.goal_reached_step, e.failure_reason,
                   (e.config ->> 'visionRange')::int AS vision_range,
                   m.name AS maze, m.grid, m.start_x, m.start_y, m.goal_x, m.goal_y, m.shortest_path_length,
                   (SELECT coalesce(jsonb_agg(jsonb_build_object(
                               'step', a.step_number, 'turn', a.turn_number, 'action', a.action_type,
                               'from', jsonb_build_array(a.from_x, a.from_y), 'to', jsonb_build_array(a.to_x, a.to_y),
                               'success', a.success, 'error', a.error, 'reasoning', a.reasoning,
                               'tiles_seen', a.tiles_seen, 'goal_visible', a.goal_visible) ORDER BY a.step_number),
                           '[]'::jsonb)
                      FROM actions a WHERE a.experiment_id = e.id) AS actions,
                   (SELECT coalesce(jsonb_object_agg(t.turn_number, t.text), '{}'::jsonb)
                      FROM (SELECT c.turn_number, string_agg(c.response ->> 'text', E'\n' ORDER BY c.call_index) AS text
                              FROM model_calls c
                             WHERE c.experiment_id = e.id AND coalesce(c.response ->> 'text', '') <> ''
                             GROUP BY c.turn_number) t) AS model_text
              FROM experiments e JOIN mazes m ON m.id = e.maze_id
             WHERE e.id = %s
            """,
            (experiment_id,),
        ).fetchone()

    def maze_counts(self) -> list[dict]:
        """Per family and size: how many mazes the database holds, by source, with a few names."""
        return self._execute(
            """
            SELECT family, width, height, count(*) AS mazes,
                   count(*) FILTER (WHERE source = 'shipped') AS shipped,
                   count(*) FILTER (WHERE source = 'generated') AS generated,
                   count(*) FILTER (WHERE source = 'imported') AS imported,
                   (array_agg(name ORDER BY id))[1:5] AS names
              FROM mazes
             GROUP BY family, width, height
             ORDER BY min(id) FILTER (WHERE source = 'shipped') NULLS LAST, family, width
            """
        ).fetchall()
