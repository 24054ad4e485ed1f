-- Live progress, one row per experiment: how far it is, when it last acted, what it has spent, and whether it is
-- stale (running with no action for its staleAfterMinutes, the catalog default for snapshots without the key).
CREATE VIEW experiment_status AS
SELECT r.experiment_id, r.llm_provider, r.model_name, r.agent_label, r.maze, r.status, r.ending, r.turns AS turn, r.actions,
       (r.config ->> 'maxMoves')::int AS max_actions,
       round(100.0 * r.actions / nullif((r.config ->> 'maxMoves')::int, 0), 1) AS progress_percent,
       r.goal_found, r.started_at, r.last_action_at, r.completed_at,
       r.input_tokens, r.output_tokens, r.cost_usd,
       stale.after_minutes AS stale_after_minutes,
       r.status = 'running'
           AND coalesce(r.last_action_at, r.started_at) < now() - stale.after_minutes * interval '1 minute' AS stale,
       r.agent_id, r.sweep_id, r.failure_reason
  FROM experiment_results r
 CROSS JOIN LATERAL (
      SELECT coalesce((r.config ->> 'staleAfterMinutes')::float8,
                      (SELECT (k.default_value #>> '{}')::float8 FROM config_keys k WHERE k.key = 'staleAfterMinutes'))
             AS after_minutes
 ) stale;
