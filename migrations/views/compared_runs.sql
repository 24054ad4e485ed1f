-- The runs the comparisons group, one row per experiment matching the filters (comparison_scope): what puts it
-- in a group (the agent: provider, model and sweep-file label; the prompt, version and hash; the maze family and
-- size, or the maze with by_maze; the compared configuration), whether it counts for its repetition, and what the
-- comparisons measure. The one definition of a group for compare_experiments, paired_comparison and success_by_step.
CREATE FUNCTION compared_runs(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL,           -- a whitespace-separated word of the comment, e.g. 'sweep:ladder'
    by_maze boolean DEFAULT false,   -- the group's maze is the experiment's maze (else NULL: its family and size)
    experiments bigint[] DEFAULT NULL,  -- only these (the CLI's selection: ARRAY(SELECT id FROM chosen_experiments(...)))
    groups jsonb[] DEFAULT NULL      -- only these agents' groups, compared as in the whole database (comparison_scope)
) RETURNS TABLE (
    experiment_id bigint, llm_provider text, model_name text, agent_label text, prompt_version text,
    prompt_hash text, maze_family text, maze_size text, maze text, config jsonb, counted boolean, ending text,
    maze_id integer, maze_hash text, seed bigint, actions integer, path_length integer, path_efficiency numeric,
    spl numeric, tokens bigint, cost_usd numeric, model_calls integer, mean_latency_ms numeric
)
LANGUAGE sql STABLE AS $$
    SELECT r.experiment_id, r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash,
           r.maze_family, r.maze_size, CASE WHEN compared_runs.by_maze THEN r.maze END, c.compared_config,
           c.counted, r.ending, r.maze_id, r.maze_hash, r.seed, r.actions, r.path_length, r.path_efficiency, r.spl,
           r.input_tokens + r.output_tokens, r.cost_usd, r.model_calls, r.mean_latency_ms
      FROM comparison_scope(compared_runs.model, compared_runs.prompt, compared_runs.maze, compared_runs.since,
                                compared_runs.until, compared_runs.tag, compared_runs.experiments,
                                compared_runs.groups) c
      JOIN experiment_results r ON r.experiment_id = c.experiment_id
$$;
