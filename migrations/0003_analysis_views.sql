-- Analysis views: what researchers query to compare models, prompts and settings.
--   experiment_results   one row per experiment (outcome, effort, exploration, tokens, cost, latency)
--   compare_experiments  the comparison by model x prompt x maze family (or maze) x varied configuration,
--                        over the experiments matching optional filters
--   model_comparison     compare_experiments() over every experiment
--   wilson_lower/upper   the 95% Wilson score interval of a success rate
-- Every column is documented in the README ("Analysis views"). Actions are aggregated once per query
-- (GROUP BY experiment_id), never by a subquery per experiment row.

-- Distinct positions per experiment straight from the index, in order, without sorting the actions.
CREATE INDEX actions_position_idx ON actions (experiment_id, to_x, to_y);
-- Sweeps find their experiments by agent_id prefix ('<sweep id>/...'); the report filters on dates.
CREATE INDEX experiments_agent_idx ON experiments (agent_id text_pattern_ops);
CREATE INDEX experiments_started_idx ON experiments (started_at);

-- 95% Wilson score interval for `successes` out of `trials` (NULL when there are no trials).
CREATE FUNCTION wilson_lower(successes bigint, trials bigint) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN trials > 0 THEN greatest(0.0, (p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)))
                                               / (1 + z * z / n)) END
      FROM (SELECT successes::float8 / nullif(trials, 0) AS p, trials::float8 AS n, 1.959963984540054 AS z) v
$$;

CREATE FUNCTION wilson_upper(successes bigint, trials bigint) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN trials > 0 THEN least(1.0, (p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)))
                                            / (1 + z * z / n)) END
      FROM (SELECT successes::float8 / nullif(trials, 0) AS p, trials::float8 AS n, 1.959963984540054 AS z) v
$$;

CREATE VIEW experiment_results AS
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
       e.goal_found,
       e.goal_first_seen_step,
       e.goal_reached_step,
       e.action_count AS actions,
       e.move_count AS moves,
       e.failed_move_count AS failed_moves,
       e.recall_count AS recalls,
       e.invalid_call_count AS invalid_calls,
       e.turn_count AS turns,
       coalesce(visited.tiles, 0) + (back_at_start.experiment_id IS NULL)::int AS unique_tiles_visited,
       e.move_count - e.failed_move_count - (coalesce(visited.tiles, 0) + (back_at_start.experiment_id IS NULL)::int - 1)
           AS revisits,
       CASE WHEN e.status = 'succeeded' AND e.move_count > 0
            THEN round(m.shortest_path_length::numeric / e.move_count, 4) END AS path_efficiency,
       e.input_tokens,
       e.output_tokens,
       e.cost_usd,
       e.started_at,
       e.completed_at,
       extract(epoch FROM e.completed_at - e.started_at)::float8 AS duration_seconds,
       coalesce(calls.model_calls, 0) AS model_calls,
       round(calls.latency_ms::numeric / nullif(calls.model_calls, 0), 1) AS mean_latency_ms,
       e.config - constant.keys - '{seed,pricing}'::text[] AS varied_config,
       e.config,
       e.seed,
       e.agent_id,
       e.comment,
       coalesce(regexp_split_to_array(nullif(btrim(e.comment), ''), '\s+'), '{}') AS tags,
       substring(e.comment FROM '(?:^|\s)sweep:(\S+)') AS sweep_id,
       e.failure_reason
  FROM experiments e
  JOIN mazes m ON m.id = e.maze_id
  -- tiles the agent stood on: the distinct positions its actions ended on, plus the start unless an action
  -- ended there (found by one index probe per experiment in a join, not by a subquery per row)
  LEFT JOIN (
      SELECT d.experiment_id, count(*) AS tiles
        FROM (SELECT DISTINCT a.experiment_id, a.to_x, a.to_y FROM actions a) d
       GROUP BY d.experiment_id
  ) visited ON visited.experiment_id = e.id
  LEFT JOIN (
      SELECT DISTINCT s.experiment_id
        FROM actions s
        JOIN experiments se ON se.id = s.experiment_id
        JOIN mazes sm ON sm.id = se.maze_id AND sm.start_x = s.to_x AND sm.start_y = s.to_y
  ) back_at_start ON back_at_start.experiment_id = e.id
  LEFT JOIN (
      SELECT t.experiment_id, sum(t.model_calls) AS model_calls, sum(t.latency_ms) AS latency_ms
        FROM turns t
       GROUP BY t.experiment_id
  ) calls ON calls.experiment_id = e.id
  -- configuration keys with one value in every experiment (not varied), computed once for the whole view
  CROSS JOIN (
      SELECT coalesce(array_agg(k.key), '{}') AS keys
        FROM (SELECT v.key
                FROM (SELECT c.key, c.value, count(*) AS n
                        FROM experiments ce CROSS JOIN jsonb_each(ce.config) c
                       GROUP BY c.key, c.value) v
               GROUP BY v.key
              HAVING count(*) = 1 AND sum(v.n) = (SELECT count(*) FROM experiments)) k
  ) constant;

-- The comparison over the experiments matching the filters (NULL: no filter). Runs are the experiments
-- that ended on the agent's merits (succeeded or timed out); failed and aborted ones are counted as
-- errors, running ones as running, and neither enters the rates. `config` holds the configuration values
-- that differ among the compared experiments (seed and pricing excluded), so settings never get mixed.
CREATE FUNCTION compare_experiments(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL,           -- a whitespace-separated word of the comment, e.g. 'sweep:ladder'
    by_maze boolean DEFAULT false    -- one row per maze instead of per maze family
) RETURNS TABLE (
    llm_provider text, model_name text, prompt_version text, prompt_hash text, maze_family text, maze text,
    config jsonb, runs bigint, successes bigint, success_rate numeric, success_rate_low numeric,
    success_rate_high numeric, median_actions_to_goal numeric, median_path_efficiency numeric,
    tokens_per_run numeric, tokens_per_success numeric, cost_per_run numeric, cost_per_success numeric,
    mean_latency_ms numeric, errors bigint, running bigint
)
LANGUAGE sql STABLE AS $$
    WITH picked AS (
        SELECT r.*
          FROM experiment_results r
         WHERE (compare_experiments.model IS NULL OR r.model_name = compare_experiments.model)
           AND (compare_experiments.prompt IS NULL OR r.prompt_version = compare_experiments.prompt)
           AND (compare_experiments.maze IS NULL OR compare_experiments.maze IN (r.maze, r.maze_family))
           AND (compare_experiments.since IS NULL OR r.started_at >= compare_experiments.since)
           AND (compare_experiments.until IS NULL OR r.started_at < compare_experiments.until)
           AND (compare_experiments.tag IS NULL OR compare_experiments.tag = ANY (r.tags))
    ), constant AS (
        SELECT coalesce(array_agg(k.key), '{}') || '{seed,pricing}'::text[] AS keys
          FROM (SELECT v.key
                  FROM (SELECT c.key, c.value, count(*) AS n
                          FROM picked p CROSS JOIN jsonb_each(p.config) c
                         GROUP BY c.key, c.value) v
                 GROUP BY v.key
                HAVING count(*) = 1 AND sum(v.n) = (SELECT count(*) FROM picked)) k
    ), grouped AS (
        SELECT p.llm_provider, p.model_name, p.prompt_version, p.prompt_hash, p.maze_family,
               CASE WHEN compare_experiments.by_maze THEN p.maze END AS maze,
               p.config - constant.keys AS config,
               min(p.maze_id) AS first_maze_id,
               count(*) FILTER (WHERE p.status IN ('succeeded', 'timed_out')) AS runs,
               count(*) FILTER (WHERE p.status = 'succeeded') AS successes,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY p.actions)
                   FILTER (WHERE p.status = 'succeeded') AS median_actions_to_goal,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY p.path_efficiency)
                   FILTER (WHERE p.status = 'succeeded') AS median_path_efficiency,
               sum(p.input_tokens + p.output_tokens) FILTER (WHERE p.status IN ('succeeded', 'timed_out')) AS tokens,
               sum(p.cost_usd) FILTER (WHERE p.status IN ('succeeded', 'timed_out')) AS cost,
               sum(p.mean_latency_ms * p.model_calls) FILTER (WHERE p.status IN ('succeeded', 'timed_out'))
                   / nullif(sum(p.model_calls) FILTER (WHERE p.status IN ('succeeded', 'timed_out')), 0)
                   AS mean_latency_ms,
               count(*) FILTER (WHERE p.status IN ('failed', 'aborted')) AS errors,
               count(*) FILTER (WHERE p.status = 'running') AS running
          FROM picked p CROSS JOIN constant
         GROUP BY 1, 2, 3, 4, 5, 6, 7
    )
    SELECT g.llm_provider, g.model_name, g.prompt_version, g.prompt_hash, g.maze_family, g.maze, g.config,
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
     ORDER BY f.first_id, CASE WHEN compare_experiments.by_maze THEN g.first_maze_id END,
              g.llm_provider, g.model_name, g.prompt_version, g.config::text
$$;

CREATE VIEW model_comparison AS SELECT * FROM compare_experiments();
