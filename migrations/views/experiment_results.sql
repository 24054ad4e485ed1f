-- One row per experiment: its outcome and ending, effort, exploration, tokens, cost, latency, the settings it was
-- run with (varied_config: those whose value is not the same everywhere) and its maze's size and grid hash. The
-- turn's one write keeps the aggregates on the experiment's row, so the view aggregates no action or turn. Every
-- column is documented here (COMMENT ON COLUMN, the data dictionary `oriole export` writes) and in the README.
CREATE VIEW experiment_results AS
SELECT e.id AS experiment_id,
       e.llm_provider,
       e.model_name,
       e.agent_label,
       e.prompt_version,
       e.prompt_hash,
       m.id AS maze_id,
       m.name AS maze,
       m.family AS maze_family,
       m.shortest_path_length,
       e.status,
       e.ending,
       e.ending_cause,
       e.goal_found,
       e.goal_first_seen_step,
       e.goal_reached_step,
       e.action_count AS actions,
       e.move_count AS moves,
       e.failed_move_count AS failed_moves,
       e.recall_count AS recalls,
       e.invalid_call_count AS invalid_calls,
       e.turn_count AS turns,
       e.unique_tiles_visited,
       e.move_count - e.failed_move_count - (e.unique_tiles_visited - 1) AS revisits,
       e.move_count - e.failed_move_count AS path_length,
       e.optimal_path_length,
       CASE WHEN e.status = 'succeeded' THEN efficiency.value END AS path_efficiency,
       CASE WHEN e.status = 'succeeded' THEN efficiency.value WHEN e.ending IS NOT NULL THEN 0 END AS spl,
       e.input_tokens,
       e.output_tokens,
       e.cost_usd,
       e.failed_attempts,
       e.failed_model_calls,
       e.failed_input_tokens,
       e.failed_output_tokens,
       e.failed_cost_usd,
       e.started_at,
       e.last_action_at,
       e.completed_at,
       extract(epoch FROM e.completed_at - e.started_at)::float8 AS duration_seconds,
       e.model_calls,
       round(e.latency_ms::numeric / nullif(e.model_calls, 0), 1) AS mean_latency_ms,
       coalesce(everything.compared_config, '{}') AS varied_config,
       e.config,
       e.seed,
       e.agent_id,
       e.comment,
       comment_tags(e.comment) AS tags,
       e.sweep_id,
       e.failure_reason,
       m.width || 'x' || m.height AS maze_size,
       m.content_hash AS maze_hash,
       e.model_build,
       e.reported_model,
       e.server_software,
       e.server_version,
       e.model_parameter_size,
       e.model_quantization,
       e.inference_profile,
       e.code_version,
       e.code_commit,
       e.code_dirty,
       e.code_hash,
       e.harness_version,
       e.harness_hash
  FROM experiments e
  JOIN mazes m ON m.id = e.maze_id
  -- optimum / max(optimum, path length): 1 on a shortest run, never above (a run without a move that changes
  -- position, which the optimum then is too, is a shortest one)
  CROSS JOIN LATERAL (
      SELECT coalesce(round(e.optimal_path_length::numeric
                            / nullif(greatest(e.optimal_path_length, e.move_count - e.failed_move_count), 0), 4),
                      1) AS value
  ) efficiency
  -- its experimental settings whose value is not the same in every compared experiment of the database: worked
  -- out on the distinct kinds of experiment the triggers keep (experiment_kinds), a few rows whatever the lab's size;
  -- an archived experiment is compared with none (grouped by kind so that the planner knows one row per experiment
  -- and drops the join from queries that do not read it)
  CROSS JOIN (SELECT coalesce(array_agg(n.key), '{}') AS keys FROM config_keys n WHERE NOT n.experimental) never
  LEFT JOIN (SELECT v.llm_provider, v.settings, (array_agg(v.config))[1] AS compared_config
               FROM (SELECT array_agg(k.llm_provider) AS providers, array_agg(k.settings) AS settings
                       FROM experiment_kinds k WHERE k.experiments > 0) kinds
              CROSS JOIN LATERAL varied_settings(kinds.providers, kinds.settings) v
              GROUP BY v.llm_provider, v.settings) everything
         ON everything.llm_provider = e.llm_provider AND everything.settings = e.config - never.keys
        AND e.archived_at IS NULL
 WHERE e.replay_of IS NULL;  -- a replay's scratch experiment is no result

COMMENT ON COLUMN experiment_results.experiment_id IS 'experiments.id';
COMMENT ON COLUMN experiment_results.llm_provider IS 'the provider that played (providers.name)';
COMMENT ON COLUMN experiment_results.model_name IS 'the model (or the baseline agent) that played';
COMMENT ON COLUMN experiment_results.agent_label IS
    'the agent''s label given by its sweep file, shown instead of llm_provider/model_name (NULL: none)';
COMMENT ON COLUMN experiment_results.prompt_version IS 'the prompt version';
COMMENT ON COLUMN experiment_results.prompt_hash IS 'SHA-256 of the prompt text the experiment really used';
COMMENT ON COLUMN experiment_results.maze_id IS 'mazes.id';
COMMENT ON COLUMN experiment_results.maze IS 'the maze name, e.g. perfect-11';
COMMENT ON COLUMN experiment_results.maze_family IS 'the maze family, e.g. perfect, sparse';
COMMENT ON COLUMN experiment_results.shortest_path_length IS 'moves on a shortest path from start to goal';
COMMENT ON COLUMN experiment_results.status IS 'running, succeeded, timed_out, failed or aborted';
COMMENT ON COLUMN experiment_results.ending IS
    'success; agent (agent failure: its action or token budget used, gave up, stalled); censored (stopped by '
    'something outside the agent: the wall clock, the execution timeout, a stop, a deployment limit, a spend cap); '
    'error (a provider or infrastructure failure); NULL while running';
COMMENT ON COLUMN experiment_results.ending_cause IS
    'what ended it, within its ending: goal; max_moves, max_tokens, gave_up, stalled; max_duration, '
    'execution_timeout, stopped, deployment_limit, spend_cap; provider, infrastructure; NULL while running';
COMMENT ON COLUMN experiment_results.goal_found IS 'whether the goal condition was met';
COMMENT ON COLUMN experiment_results.goal_first_seen_step IS 'the step the goal was first visible (0: from the start)';
COMMENT ON COLUMN experiment_results.goal_reached_step IS 'the step the agent first stood on the goal';
COMMENT ON COLUMN experiment_results.actions IS 'every action: moves, failed moves, recalls, invalid calls';
COMMENT ON COLUMN experiment_results.moves IS 'move attempts, wall hits included';
COMMENT ON COLUMN experiment_results.failed_moves IS 'moves into a wall or off the grid';
COMMENT ON COLUMN experiment_results.recalls IS 'recall_all uses';
COMMENT ON COLUMN experiment_results.invalid_calls IS 'invalid tool calls';
COMMENT ON COLUMN experiment_results.turns IS 'agent turns';
COMMENT ON COLUMN experiment_results.unique_tiles_visited IS 'distinct tiles the agent stood on, the start included';
COMMENT ON COLUMN experiment_results.revisits IS 'successful moves onto a tile already stood on';
COMMENT ON COLUMN experiment_results.path_length IS
    'moves that changed position (move attempts less those into a wall): the length of the path walked';
COMMENT ON COLUMN experiment_results.optimal_path_length IS
    'the fewest moves that change position from the start to the goal condition: to the goal (reach), or to the '
    'nearest tile from which the goal is seen with the experiment''s vision range (sight)';
COMMENT ON COLUMN experiment_results.path_efficiency IS
    'for successes: optimal_path_length / max(optimal_path_length, path_length), 1 on a shortest run, never above';
COMMENT ON COLUMN experiment_results.spl IS
    'success weighted by path length (Anderson et al. 2018): path_efficiency for a success, 0 for any other '
    'ended run, NULL while running; its mean over runs is a group''s SPL';
COMMENT ON COLUMN experiment_results.input_tokens IS 'input tokens of every model call';
COMMENT ON COLUMN experiment_results.output_tokens IS 'output tokens of every model call';
COMMENT ON COLUMN experiment_results.cost_usd IS 'USD at the prices captured in the snapshot';
COMMENT ON COLUMN experiment_results.failed_attempts IS 'attempts of its turns that failed (retried, or ending the run)';
COMMENT ON COLUMN experiment_results.failed_model_calls IS
    'model calls a server answered in those failed attempts (in model_calls too)';
COMMENT ON COLUMN experiment_results.failed_input_tokens IS 'input tokens spent on failed attempts (in input_tokens too)';
COMMENT ON COLUMN experiment_results.failed_output_tokens IS
    'output tokens spent on failed attempts (in output_tokens too)';
COMMENT ON COLUMN experiment_results.failed_cost_usd IS
    'USD spent on failed attempts (in cost_usd too); NULL: its model has no price (unpriced), like cost_usd';
COMMENT ON COLUMN experiment_results.started_at IS 'when the experiment started';
COMMENT ON COLUMN experiment_results.last_action_at IS 'when its last action was written (NULL: none yet)';
COMMENT ON COLUMN experiment_results.completed_at IS 'when it was closed (NULL while running)';
COMMENT ON COLUMN experiment_results.duration_seconds IS 'completed_at - started_at in seconds (NULL while running)';
COMMENT ON COLUMN experiment_results.model_calls IS 'model calls';
COMMENT ON COLUMN experiment_results.mean_latency_ms IS 'mean latency of its model calls (NULL without calls)';
COMMENT ON COLUMN experiment_results.varied_config IS
    'its experimental settings (for its provider) whose value is not the same in every experiment compared: here, '
    'every experiment of the database; in `oriole export` and `oriole report`, the experiments their filters select';
COMMENT ON COLUMN experiment_results.config IS 'the whole configuration snapshot (JSON)';
COMMENT ON COLUMN experiment_results.seed IS
    'the experiment''s seed: a baseline agent''s, Ollama''s, an OpenAI-compatible server''s with sendSeed';
COMMENT ON COLUMN experiment_results.agent_id IS 'as given in the execution input (a sweep: <sweep>/<cell>/r<n>)';
COMMENT ON COLUMN experiment_results.comment IS 'as given in the execution input';
COMMENT ON COLUMN experiment_results.tags IS 'the whitespace-separated words of the comment';
COMMENT ON COLUMN experiment_results.sweep_id IS 'the sweep that started it (experiments.sweep_id; NULL: none)';
COMMENT ON COLUMN experiment_results.failure_reason IS 'why it did not succeed';
COMMENT ON COLUMN experiment_results.maze_size IS 'the maze''s width x height, e.g. 11x11';
COMMENT ON COLUMN experiment_results.maze_hash IS 'the maze''s content hash: two experiments on the same grid share it';
COMMENT ON COLUMN experiment_results.model_build IS
    'the model build its server reported at the start (experiments.model_build: an Ollama digest, a /models entry''s '
    'root or id, a Bedrock foundation model ARN); ''unknown'' when not told; NULL when not asked (a baseline)';
COMMENT ON COLUMN experiment_results.reported_model IS 'the model as its server names it (experiments.reported_model)';
COMMENT ON COLUMN experiment_results.server_software IS 'the model server''s software (experiments.server_software)';
COMMENT ON COLUMN experiment_results.server_version IS 'its version (experiments.server_version)';
COMMENT ON COLUMN experiment_results.model_parameter_size IS 'the parameter size Ollama reported (8.2B)';
COMMENT ON COLUMN experiment_results.model_quantization IS 'the quantisation level Ollama reported (Q4_K_M)';
COMMENT ON COLUMN experiment_results.inference_profile IS 'the Bedrock inference profile''s ARN, if one was named';
COMMENT ON COLUMN experiment_results.code_version IS
    'the code that started it (experiments.code_version): the package version and, on AWS, the Lambda asset''s '
    'hash (<version>+<12 hex>); locally <version>+local.<first 12 hex of code_hash>';
COMMENT ON COLUMN experiment_results.code_commit IS
    'the git commit its code was built from (experiments.code_commit); NULL when not recorded';
COMMENT ON COLUMN experiment_results.code_dirty IS
    'whether that checkout held uncommitted changes (experiments.code_dirty); NULL when not recorded';
COMMENT ON COLUMN experiment_results.code_hash IS
    'SHA-256 of the runtime package''s files as imported, the same for a checkout, a wheel and the Lambda asset of '
    'the same code (experiments.code_hash)';
COMMENT ON COLUMN experiment_results.harness_version IS
    'the harness version: the agent loop''s details that are no setting (tool wording, compaction prompt, '
    'text-tool instructions, frontier size, token estimator) named as one (experiments.harness_version)';
COMMENT ON COLUMN experiment_results.harness_hash IS
    'SHA-256 of that harness''s description, kept once in harnesses (experiments.harness_hash)';
