-- Live progress, one row per experiment: how far it is, when it last acted, what it has spent, and whether it is
-- stale (running with no action for its staleAfterMinutes, the catalog default for snapshots without the key).
CREATE VIEW experiment_status AS
SELECT r.experiment_id, r.llm_provider, r.model_name, r.agent_label, r.maze, r.status, r.ending,
       r.ending_cause, r.turns AS turn, r.actions,
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

COMMENT ON COLUMN experiment_status.experiment_id IS 'experiments.id';
COMMENT ON COLUMN experiment_status.llm_provider IS 'the provider that played (providers.name)';
COMMENT ON COLUMN experiment_status.model_name IS 'the model (or the baseline agent) that played';
COMMENT ON COLUMN experiment_status.agent_label IS 'the agent''s label given by its sweep file (NULL: none)';
COMMENT ON COLUMN experiment_status.maze IS 'the maze name';
COMMENT ON COLUMN experiment_status.status IS 'running, succeeded, timed_out, failed or aborted';
COMMENT ON COLUMN experiment_status.ending IS 'success, agent, censored or error; NULL while running';
COMMENT ON COLUMN experiment_status.ending_cause IS 'what ended it (experiments.ending_cause); NULL while running';
COMMENT ON COLUMN experiment_status.turn IS 'agent turns so far';
COMMENT ON COLUMN experiment_status.actions IS 'actions so far';
COMMENT ON COLUMN experiment_status.max_actions IS 'the snapshot''s maxMoves';
COMMENT ON COLUMN experiment_status.progress_percent IS 'actions / max_actions, in percent';
COMMENT ON COLUMN experiment_status.goal_found IS 'whether the goal condition was met';
COMMENT ON COLUMN experiment_status.started_at IS 'when the experiment started';
COMMENT ON COLUMN experiment_status.last_action_at IS 'when its last action was written (NULL: none yet)';
COMMENT ON COLUMN experiment_status.completed_at IS 'when it was closed (NULL while running)';
COMMENT ON COLUMN experiment_status.input_tokens IS 'input tokens so far';
COMMENT ON COLUMN experiment_status.output_tokens IS 'output tokens so far';
COMMENT ON COLUMN experiment_status.cost_usd IS 'USD so far, at the prices captured in the snapshot';
COMMENT ON COLUMN experiment_status.stale_after_minutes IS 'its staleAfterMinutes (the catalog default if unset)';
COMMENT ON COLUMN experiment_status.stale IS 'running with no action for stale_after_minutes';
COMMENT ON COLUMN experiment_status.agent_id IS 'as given in the execution input';
COMMENT ON COLUMN experiment_status.sweep_id IS 'the sweep that started it (experiments.sweep_id; NULL: none)';
COMMENT ON COLUMN experiment_status.failure_reason IS 'why it did not succeed';
