"""The researcher's reads: what the CLI shows (an experiment's outcome, the comparison, a run to draw),
a sweep's bookkeeping, and the experiments a local runner holds. The turn path's SQL stays in the runtime
package (``oriole.store``); none of this ships to Lambda.
"""

from __future__ import annotations

from datetime import datetime

import psycopg

from oriole.store import Store

RUN_LOCK_SPACE = 0x6F72_696F  # "orio": (space, experiment id) advisory locks held by local runners


class Results:
    """Reads over one connection (autocommit, dict rows), for the workstation commands."""

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn
        self.store = Store(conn)  # the runtime's own look-ups (an experiment by its execution), shared

    def _execute(self, query: str, params=None) -> psycopg.Cursor:
        return self.conn.execute(query, params)

    def hold(self, experiment_id: int) -> None:
        """Mark the experiment as run by this session (a local runner) until the session ends: a session
        advisory lock, so a runner that dies lets go of its experiments with its connection."""
        self.conn.execute("SELECT pg_try_advisory_lock(%s::int, %s::int)", (RUN_LOCK_SPACE, experiment_id))

    def open_experiments(self, execution_prefix: str | None = None) -> list[dict]:
        """Experiments not closed yet, oldest first, optionally only those whose latest execution ARN starts
        with ``execution_prefix``; ``held`` says whether a live session (a local runner) holds them."""
        return self._execute(
            """
            SELECT e.id AS experiment_id, m.name AS maze, e.llm_provider, e.model_name, e.started_at,
                   e.turn_count AS turns, e.action_count AS actions,
                   (SELECT max(t.completed_at) FROM turns t WHERE t.experiment_id = e.id) AS last_turn_at,
                   e.execution_arns[cardinality(e.execution_arns)] AS last_execution,
                   EXISTS (SELECT 1 FROM pg_locks l
                            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                              AND l.classid = %(space)s::bigint::oid AND l.objid = e.id::oid) AS held
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
            SELECT e.id AS experiment_id, e.status, e.ending, e.goal_found, e.action_count AS actions,
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

    def sweep_experiments(self, sweep_id: str) -> list[dict]:
        """Every experiment a sweep started (``agent_id`` ``<sweep id>/...``), oldest first."""
        return self._execute(
            "SELECT id, agent_id, status, ending, origin_execution_arn FROM experiments "
            "WHERE agent_id LIKE %s ORDER BY id",
            (_like_prefix(sweep_id + "/"),),
        ).fetchall()

    def sweep_spend(self, sweep_id: str) -> float:
        """Dollars spent so far by a sweep's experiments, running ones included."""
        return self._execute(
            "SELECT coalesce(sum(cost_usd), 0)::float AS spent FROM experiments WHERE agent_id LIKE %s",
            (_like_prefix(sweep_id + "/"),),
        ).fetchone()["spent"]


def _like_prefix(prefix: str) -> str:
    """A LIKE pattern matching strings that start with ``prefix`` (its wildcards escaped)."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
