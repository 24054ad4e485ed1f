-- Issue 16: mazes as distributions. The comparison groups by maze family and size (perfect-11 and
-- perfect-11@42 are one kind of maze; perfect-21 another) and says on how many different mazes (grids) each
-- rate rests; experiment_results gains the maze's size and grid hash. The report adds, beside the Wilson
-- interval, a bootstrap over mazes where runs share mazes (oriole_workstation/report.py).

DROP VIEW model_comparison;
DROP FUNCTION compare_experiments(text, text, text, timestamptz, timestamptz, text, boolean);

CREATE OR REPLACE VIEW experiment_results AS
SELECT e.id AS experiment_id,
       e.llm_provider,
       e.model_name,
       e.prompt_version,
       e.prompt_hash,
       m.id AS maze_id,
       m.name AS maze,
       m.family AS maze_family,
       m.shortest_path_length,
       e.status,
       e.ending,
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
       CASE WHEN e.status = 'succeeded' AND e.move_count > 0
            THEN round(m.shortest_path_length::numeric / e.move_count, 4) END AS path_efficiency,
       e.input_tokens,
       e.output_tokens,
       e.cost_usd,
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
       substring(e.comment FROM '(?:^|\s)sweep:(\S+)') AS sweep_id,
       e.failure_reason,
       m.width || 'x' || m.height AS maze_size,
       m.content_hash AS maze_hash
  FROM experiments e
  JOIN mazes m ON m.id = e.maze_id
  -- its experimental settings whose value is not the same in every experiment of the database (grouped by id
  -- so that the planner knows one row per experiment and drops the join from queries that do not read it)
  LEFT JOIN (SELECT c.experiment_id, (array_agg(c.compared_config))[1] AS compared_config
               FROM compared_experiments() c GROUP BY c.experiment_id) everything ON everything.experiment_id = e.id;

CREATE FUNCTION compare_experiments(
    model text DEFAULT NULL,
    prompt text DEFAULT NULL,
    maze text DEFAULT NULL,
    since timestamptz DEFAULT NULL,
    until timestamptz DEFAULT NULL,
    tag text DEFAULT NULL,
    by_maze boolean DEFAULT false    -- one row per maze instead of per maze family and size
) RETURNS TABLE (
    llm_provider text, model_name text, prompt_version text, prompt_hash text, maze_family text, maze_size text,
    maze text, mazes bigint,
    config jsonb, runs bigint, successes bigint, success_rate numeric, success_rate_low numeric,
    success_rate_high numeric, median_actions_to_goal numeric, median_path_efficiency numeric,
    tokens_per_run numeric, tokens_per_success numeric, cost_per_run numeric, cost_per_success numeric,
    mean_latency_ms numeric, errors bigint, running bigint
)
LANGUAGE sql STABLE AS $$
    WITH grouped AS (
        SELECT p.llm_provider, p.model_name, p.prompt_version, p.prompt_hash, p.maze_family,
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
               count(*) FILTER (WHERE p.ending IS NULL) AS running
          FROM compared_experiments(compare_experiments.model, compare_experiments.prompt, compare_experiments.maze,
                                    compare_experiments.since, compare_experiments.until, compare_experiments.tag) c
          JOIN experiment_results p ON p.experiment_id = c.experiment_id
         GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    )
    SELECT g.llm_provider, g.model_name, g.prompt_version, g.prompt_hash, g.maze_family, g.maze_size, g.maze,
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
           g.errors, g.running
      FROM grouped g
      JOIN (SELECT family, min(id) AS first_id FROM mazes GROUP BY family) f ON f.family = g.maze_family
     ORDER BY f.first_id, length(g.maze_size), g.maze_size,
              CASE WHEN compare_experiments.by_maze THEN g.first_maze_id END,
              g.llm_provider, g.model_name, g.prompt_version, g.config::text
$$;

CREATE VIEW model_comparison AS SELECT * FROM compare_experiments();

COMMENT ON COLUMN experiment_results.maze_size IS 'the maze''s width x height, e.g. 11x11';
COMMENT ON COLUMN experiment_results.maze_hash IS 'the maze''s content hash: two experiments on the same grid share it';
