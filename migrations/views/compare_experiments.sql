-- The comparison over the experiments matching the filters, one row per group of compared_runs: agent (model and
-- sweep-file label: one model served by two servers under two labels is two agents) x prompt x maze family and size
-- (or maze) x compared configuration. Each repetition counts once, as its counted attempt (comparison_scope).
-- Two rates, each with its 95% Wilson interval: over the decided runs (success and agent failure) and over all runs
-- that ended (censored and errored runs as failures); the counts of each ending; a flag where censored and errored
-- runs are more than 5% of the runs, and where the decided runs rest on fewer than 10 different mazes. Tokens and cost
-- are every ended attempt's, retried ones included, per run and per success; cost is NULL where no run is priced and
-- counts the priced runs only where some are not (unpriced_runs). SPL, like the rate, twice: over the decided runs
-- (spl) and over all runs that ended (spl_all: a censored or errored run scores 0, as a failure does). The report
-- adds an interval over mazes (a bootstrap, repetitions nested: oriole_workstation/intervals.py) beside each Wilson
-- interval where runs share mazes. Without a filter the groups are read from comparison_groups, which triggers keep
-- (keep_comparison_groups); with one they are worked out from the experiments selected (compared_groups).
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
    maze_size text, maze text, mazes bigint, few_mazes boolean, config jsonb,
    all_runs bigint, runs bigint, successes bigint, agent_failures bigint, censored bigint, errors bigint,
    running bigint, superseded bigint,
    success_rate numeric, success_rate_low numeric, success_rate_high numeric,
    success_rate_all numeric, success_rate_all_low numeric, success_rate_all_high numeric,
    undecided_share numeric, many_undecided boolean,
    median_actions_to_goal numeric, median_path_length numeric, median_path_efficiency numeric, spl numeric,
    spl_all numeric, tokens numeric, tokens_per_run numeric, tokens_per_success numeric,
    cost_usd numeric, unpriced_runs bigint, cost_per_run numeric, cost_per_success numeric,
    mean_latency_ms numeric
)
LANGUAGE sql STABLE AS $$
    SELECT g.llm_provider, g.model_name, g.agent_label, g.prompt_version, g.prompt_hash, g.maze_family,
           g.maze_size, g.maze, g.mazes, g.few_mazes, g.config, g.all_runs, g.runs, g.successes,
           g.agent_failures, g.censored, g.errors, g.running, g.superseded, g.success_rate, g.success_rate_low,
           g.success_rate_high, g.success_rate_all, g.success_rate_all_low, g.success_rate_all_high,
           g.undecided_share, g.many_undecided, g.median_actions_to_goal, g.median_path_length,
           g.median_path_efficiency, g.spl, g.spl_all, g.tokens, g.tokens_per_run, g.tokens_per_success,
           g.cost_usd, g.unpriced_runs, g.cost_per_run, g.cost_per_success, g.mean_latency_ms
      FROM (SELECT s.*  -- without a filter: the groups kept for the whole database (comparison_groups)
              FROM comparison_groups s
             WHERE s.by_maze = compare_experiments.by_maze
               AND num_nonnulls(compare_experiments.model, compare_experiments.prompt, compare_experiments.maze,
                                compare_experiments.since, compare_experiments.until, compare_experiments.tag,
                                compare_experiments.experiments) = 0
             UNION ALL
            SELECT compare_experiments.by_maze, l.*  -- with one: worked out from the experiments it selects
              FROM compared_groups(compare_experiments.model, compare_experiments.prompt, compare_experiments.maze,
                                   compare_experiments.since, compare_experiments.until, compare_experiments.tag,
                                   compare_experiments.by_maze, compare_experiments.experiments) l
             WHERE num_nonnulls(compare_experiments.model, compare_experiments.prompt, compare_experiments.maze,
                                compare_experiments.since, compare_experiments.until, compare_experiments.tag,
                                compare_experiments.experiments) > 0) g
      JOIN (SELECT family, min(id) AS first_id FROM mazes GROUP BY family) f ON f.family = g.maze_family
     ORDER BY f.first_id, length(g.maze_size), g.maze_size,
              CASE WHEN compare_experiments.by_maze THEN g.first_maze_id END,
              g.llm_provider, g.model_name, g.agent_label NULLS FIRST, g.prompt_version, g.config::text
$$;
