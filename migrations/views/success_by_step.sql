-- Success by step, one row per group of compared_runs (as compare_experiments groups them) and step at which a
-- counted run ended: the Kaplan-Meier estimate of the share of runs that reached the goal within that many actions.
-- A run that succeeded is an event at its step; a run censored (the wall clock, a timeout, a stop, a spend cap) or
-- errored is censored at its step: it leaves the runs at risk without counting as a failure, so a slow server or a
-- stopped sweep does not read as the agent failing. An agent failure (its budget spent, it gave up or stalled) never
-- reaches the goal: it stays at risk at every step, so without censoring the last row's estimate is the success rate
-- over the decided runs. Running experiments are left out. Each repetition counts once (comparison_scope).
CREATE FUNCTION success_by_step(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL,           -- a whitespace-separated word of the comment, e.g. 'baseline'
    by_maze boolean DEFAULT false,   -- one curve per maze instead of per maze family and size
    experiments bigint[] DEFAULT NULL  -- only these (the CLI's selection: ARRAY(SELECT id FROM chosen_experiments(...)))
) RETURNS TABLE (
    llm_provider text, model_name text, agent_label text, prompt_version text, prompt_hash text, maze_family text,
    maze_size text, maze text, config jsonb,
    step integer,            -- actions taken when these runs ended
    at_risk bigint,          -- runs not yet ended by this step, agent failures always included
    successes bigint,        -- runs that reached the goal at this step
    censored bigint,         -- runs censored or errored at this step
    success_share numeric    -- Kaplan-Meier: the estimated share of runs that reach the goal within `step` actions
)
LANGUAGE sql STABLE AS $$
    WITH runs AS (
        SELECT r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash, r.maze_family,
               r.maze_size, r.maze, r.config, r.actions AS step, r.ending
          FROM compared_runs(success_by_step.model, success_by_step.prompt, success_by_step.maze,
                             success_by_step.since, success_by_step.until, success_by_step.tag,
                             success_by_step.by_maze, success_by_step.experiments) r
         WHERE r.counted AND r.ending IS NOT NULL
    ), steps AS (
        SELECT r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash, r.maze_family,
               r.maze_size, r.maze, r.config, r.step,
               count(*) FILTER (WHERE r.ending = 'success') AS successes,
               count(*) FILTER (WHERE r.ending IN ('censored', 'error')) AS censored,
               count(*) FILTER (WHERE r.ending <> 'agent') AS leaving
          FROM runs r
         GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
        HAVING count(*) FILTER (WHERE r.ending <> 'agent') > 0
    ), failures AS (
        SELECT r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash, r.maze_family,
               r.maze_size, r.maze, r.config, count(*) FILTER (WHERE r.ending = 'agent') AS failures
          FROM runs r
         GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
    ), at_risk AS (
        SELECT s.*,
               f.failures + sum(s.leaving) OVER (
                   PARTITION BY s.llm_provider, s.model_name, s.agent_label, s.prompt_version, s.prompt_hash,
                                s.maze_family, s.maze_size, s.maze, s.config
                   ORDER BY s.step DESC) AS at_risk
          FROM steps s
          JOIN failures f
            ON (f.llm_provider, f.model_name, f.prompt_version, f.prompt_hash, f.maze_family, f.maze_size, f.config)
               = (s.llm_provider, s.model_name, s.prompt_version, s.prompt_hash, s.maze_family, s.maze_size, s.config)
           AND f.agent_label IS NOT DISTINCT FROM s.agent_label AND f.maze IS NOT DISTINCT FROM s.maze
    )
    SELECT a.llm_provider, a.model_name, a.agent_label, a.prompt_version, a.prompt_hash, a.maze_family, a.maze_size,
           a.maze, a.config, a.step, a.at_risk::bigint, a.successes, a.censored,
           round((1 - CASE WHEN bool_or(a.successes = a.at_risk) OVER w THEN 0  -- every run at risk succeeded
                           ELSE exp(sum(ln(1 - a.successes::float8 / a.at_risk))
                                        FILTER (WHERE a.successes < a.at_risk) OVER w) END)::numeric, 4)
      FROM at_risk a
    WINDOW w AS (PARTITION BY a.llm_provider, a.model_name, a.agent_label, a.prompt_version, a.prompt_hash,
                              a.maze_family, a.maze_size, a.maze, a.config
                 ORDER BY a.step ROWS UNBOUNDED PRECEDING)
     ORDER BY a.maze_family, a.maze_size, a.maze, a.llm_provider, a.model_name, a.agent_label NULLS FIRST,
              a.prompt_version, a.config::text, a.step
$$;
