-- The comparison over the experiments matching the filters, one row per agent (model and sweep-file label: one model
-- served by two servers under two labels is two agents) x prompt x maze family and size (or maze) x compared
-- configuration, with on how many different mazes (grids) each rate rests. Runs are the success
-- and agent endings (agent failure: its budget used, gave up, stalled); censored and error endings are counted
-- apart and running experiments as running, and none of them enters a rate. The report adds, beside the Wilson
-- interval, a bootstrap over mazes where runs share mazes (oriole_workstation/intervals.py).
CREATE FUNCTION compare_experiments(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL,           -- a whitespace-separated word of the comment, e.g. 'baseline'
    by_maze boolean DEFAULT false,   -- one row per maze instead of per maze family and size
    experiments bigint[] DEFAULT NULL  -- only these (the CLI's selection: ARRAY(SELECT id FROM chosen_experiments(...)))
) RETURNS TABLE (
    llm_provider text, model_name text, agent_label text, prompt_version text, prompt_hash text, maze_family text,
    maze_size text,
    maze text, mazes bigint,
    config jsonb, runs bigint, successes bigint, success_rate numeric, success_rate_low numeric,
    success_rate_high numeric, median_actions_to_goal numeric, median_path_efficiency numeric,
    tokens_per_run numeric, tokens_per_success numeric, cost_per_run numeric, cost_per_success numeric,
    mean_latency_ms numeric, errors bigint, running bigint, censored bigint
)
LANGUAGE sql STABLE AS $$
    WITH grouped AS (
        SELECT p.llm_provider, p.model_name, p.agent_label, p.prompt_version, p.prompt_hash, p.maze_family,
               p.maze_size,
               CASE WHEN compare_experiments.by_maze THEN p.maze END AS maze,
               c.compared_config AS config,
               min(p.maze_id) AS first_maze_id,
               count(DISTINCT p.maze_hash) FILTER (WHERE p.ending IN ('success', 'agent')) AS mazes,
               count(*) FILTER (WHERE p.ending IN ('success', 'agent')) AS runs,
               count(*) FILTER (WHERE p.ending = 'success') AS successes,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY p.actions)
                   FILTER (WHERE p.ending = 'success') AS median_actions_to_goal,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY p.path_efficiency)
                   FILTER (WHERE p.ending = 'success') AS median_path_efficiency,
               sum(p.input_tokens + p.output_tokens) FILTER (WHERE p.ending IN ('success', 'agent')) AS tokens,
               sum(p.cost_usd) FILTER (WHERE p.ending IN ('success', 'agent')) AS cost,
               sum(p.mean_latency_ms * p.model_calls) FILTER (WHERE p.ending IN ('success', 'agent'))
                   / nullif(sum(p.model_calls) FILTER (WHERE p.ending IN ('success', 'agent')), 0)
                   AS mean_latency_ms,
               count(*) FILTER (WHERE p.ending = 'error') AS errors,
               count(*) FILTER (WHERE p.ending IS NULL) AS running,
               count(*) FILTER (WHERE p.ending = 'censored') AS censored
          FROM compared_experiments(compare_experiments.model, compare_experiments.prompt, compare_experiments.maze,
                                    compare_experiments.since, compare_experiments.until, compare_experiments.tag,
                                    compare_experiments.experiments) c
          JOIN experiment_results p ON p.experiment_id = c.experiment_id
         GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
    )
    SELECT g.llm_provider, g.model_name, g.agent_label, g.prompt_version, g.prompt_hash, g.maze_family, g.maze_size,
           g.maze,
           g.mazes, g.config,
           g.runs, g.successes,
           round(g.successes::numeric / nullif(g.runs, 0), 4),
           round(wilson_lower(g.successes, g.runs)::numeric, 4),
           round(wilson_upper(g.successes, g.runs)::numeric, 4),
           round(g.median_actions_to_goal::numeric, 1),
           round(g.median_path_efficiency::numeric, 4),
           round(g.tokens::numeric / nullif(g.runs, 0), 1),
           round(g.tokens::numeric / nullif(g.successes, 0), 1),
           round(g.cost / nullif(g.runs, 0), 6),
           round(g.cost / nullif(g.successes, 0), 6),
           round(g.mean_latency_ms, 1),
           g.errors, g.running, g.censored
      FROM grouped g
      JOIN (SELECT family, min(id) AS first_id FROM mazes GROUP BY family) f ON f.family = g.maze_family
     ORDER BY f.first_id, length(g.maze_size), g.maze_size,
              CASE WHEN compare_experiments.by_maze THEN g.first_maze_id END,
              g.llm_provider, g.model_name, g.agent_label NULLS FIRST, g.prompt_version, g.config::text
$$;
