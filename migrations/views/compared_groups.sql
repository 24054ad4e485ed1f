-- The groups of the comparison over the experiments matching the filters, unordered (compare_experiments orders
-- them; comparison_groups keeps them for the whole database): one row per group of compared_runs, with what
-- compare_experiments says of each, and the group's first maze (by_maze orders by it).
CREATE FUNCTION compared_groups(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL,           -- a whitespace-separated word of the comment, e.g. 'baseline'
    by_maze boolean DEFAULT false,   -- one row per maze instead of per maze family and size
    experiments bigint[] DEFAULT NULL,  -- only these (the CLI's selection: ARRAY(SELECT id FROM chosen_experiments(...)))
    groups jsonb[] DEFAULT NULL      -- only these agents' groups, compared as in the whole database (comparison_scope)
) RETURNS TABLE (
    llm_provider text, model_name text, agent_label text, prompt_version text, prompt_hash text, maze_family text,
    maze_size text, maze text, mazes bigint, few_mazes boolean, config jsonb,
    all_runs bigint, runs bigint, successes bigint, agent_failures bigint, censored bigint, errors bigint,
    running bigint, superseded bigint,
    success_rate numeric, success_rate_low numeric, success_rate_high numeric,
    success_rate_all numeric, success_rate_all_low numeric, success_rate_all_high numeric,
    undecided_share numeric, many_undecided boolean,
    median_actions_to_goal numeric, median_path_length numeric, median_path_efficiency numeric, spl numeric,
    spl_all numeric, tokens numeric, tokens_per_run numeric, tokens_per_success numeric,
    cost_usd numeric, unpriced_runs bigint, cost_per_run numeric, cost_per_success numeric,
    mean_latency_ms numeric, first_maze_id integer
)
LANGUAGE sql STABLE AS $$
    WITH grouped AS (
        SELECT r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash, r.maze_family,
               r.maze_size, r.maze, r.config,
               min(r.maze_id) AS first_maze_id,
               count(DISTINCT r.maze_hash) FILTER (WHERE r.counted AND r.ending IN ('success', 'agent')) AS mazes,
               count(*) FILTER (WHERE r.counted AND r.ending = 'success') AS successes,
               count(*) FILTER (WHERE r.counted AND r.ending = 'agent') AS agent_failures,
               count(*) FILTER (WHERE r.counted AND r.ending = 'censored') AS censored,
               count(*) FILTER (WHERE r.counted AND r.ending = 'error') AS errors,
               count(*) FILTER (WHERE r.counted AND r.ending IS NULL) AS running,
               count(*) FILTER (WHERE NOT r.counted) AS superseded,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY r.actions)
                   FILTER (WHERE r.counted AND r.ending = 'success') AS median_actions_to_goal,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY r.path_length)
                   FILTER (WHERE r.counted AND r.ending = 'success') AS median_path_length,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY r.path_efficiency)
                   FILTER (WHERE r.counted AND r.ending = 'success') AS median_path_efficiency,
               avg(r.spl) FILTER (WHERE r.counted AND r.ending IN ('success', 'agent')) AS spl,
               avg(r.spl) FILTER (WHERE r.counted AND r.ending IS NOT NULL) AS spl_all,
               sum(r.tokens) FILTER (WHERE r.ending IS NOT NULL) AS tokens,
               sum(r.cost_usd) FILTER (WHERE r.ending IS NOT NULL) AS cost,
               count(*) FILTER (WHERE r.ending IS NOT NULL AND r.cost_usd IS NULL) AS unpriced_runs,
               sum(r.mean_latency_ms * r.model_calls) FILTER (WHERE r.ending IS NOT NULL)
                   / nullif(sum(r.model_calls) FILTER (WHERE r.ending IS NOT NULL), 0) AS mean_latency_ms
          FROM compared_runs(compared_groups.model, compared_groups.prompt, compared_groups.maze,
                             compared_groups.since, compared_groups.until, compared_groups.tag,
                             compared_groups.by_maze, compared_groups.experiments,
                             compared_groups.groups) r
         GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
    ), counted AS (
        SELECT g.*, g.successes + g.agent_failures AS runs,
               g.successes + g.agent_failures + g.censored + g.errors AS all_runs
          FROM grouped g
    )
    SELECT g.llm_provider, g.model_name, g.agent_label, g.prompt_version, g.prompt_hash, g.maze_family, g.maze_size,
           g.maze, g.mazes, g.mazes < 10, g.config,
           g.all_runs, g.runs, g.successes, g.agent_failures, g.censored, g.errors, g.running, g.superseded,
           round(g.successes::numeric / nullif(g.runs, 0), 4),
           round(wilson_lower(g.successes, g.runs)::numeric, 4),
           round(wilson_upper(g.successes, g.runs)::numeric, 4),
           round(g.successes::numeric / nullif(g.all_runs, 0), 4),
           round(wilson_lower(g.successes, g.all_runs)::numeric, 4),
           round(wilson_upper(g.successes, g.all_runs)::numeric, 4),
           round((g.censored + g.errors)::numeric / nullif(g.all_runs, 0), 4),
           (g.censored + g.errors) * 20 > g.all_runs,
           round(g.median_actions_to_goal::numeric, 1),
           round(g.median_path_length::numeric, 1),
           round(g.median_path_efficiency::numeric, 4),
           round(g.spl, 4),
           round(g.spl_all, 4),
           g.tokens,
           round(g.tokens / nullif(g.all_runs, 0), 1),
           round(g.tokens / nullif(g.successes, 0), 1),
           round(g.cost, 6),
           g.unpriced_runs,
           round(g.cost / nullif(g.all_runs, 0), 6),
           round(g.cost / nullif(g.successes, 0), 6),
           round(g.mean_latency_ms, 1),
           g.first_maze_id
      FROM counted g
$$;
