-- Scores that mean what they say, comparisons that scale with experiments, and live progress (issues 11, 12).
--   experiments.ending        how each experiment ended, for scoring: success, agent (a run without success) or
--                             error; set once when the row is closed (Store.finalize, oriole.progress.ending_category)
--   per-experiment aggregates unique tiles, model calls, latency, the last action's time: kept up to date by the
--                             turn's one write (Store.commit_turn), so no view aggregates actions or turns
--   config_keys               which configuration keys are experimental variables, for which providers (written
--                             from the parameter catalog on every migrate, Store.load_catalog)
--   compared_experiments, experiment_results, compare_experiments, model_comparison and experiment_status
--                             the views of 0003 again on top of these, and the live status view
-- Every column is documented in the README ("Analysis views", "Live progress") and, for the exported tables and
-- views, in the database itself (COMMENT ON COLUMN, what `oriole export` writes into its data dictionary).

DROP VIEW model_comparison;
DROP FUNCTION compare_experiments(text, text, text, timestamptz, timestamptz, text, boolean);
DROP VIEW experiment_results;

-- 1. The ending. The same rule as oriole.progress.ending_category, for the rows closed before this migration:
--    a failure is the agent's when its reason starts with one of AGENT_ENDING_PREFIXES (today agent_stalled).
ALTER TABLE experiments ADD COLUMN ending text CHECK (ending IN ('success', 'agent', 'error'));
UPDATE experiments
   SET ending = CASE WHEN status = 'succeeded' THEN 'success'
                     WHEN status = 'timed_out' THEN 'agent'
                     WHEN status = 'failed' AND starts_with(failure_reason, 'agent_stalled') THEN 'agent'
                     ELSE 'error' END
 WHERE status <> 'running';
ALTER TABLE experiments
    ADD CONSTRAINT experiments_ending_when_closed CHECK ((ending IS NULL) = (status = 'running')),
    ADD CONSTRAINT experiments_success_ending CHECK ((ending = 'success') = (status = 'succeeded'));

-- 2. Aggregates the turn's write keeps up to date (the tiles by probing actions_position_idx for the turn's
--    positions, inside the same statement).
ALTER TABLE experiments
    ADD COLUMN unique_tiles_visited integer NOT NULL DEFAULT 1 CHECK (unique_tiles_visited > 0),
    ADD COLUMN model_calls integer NOT NULL DEFAULT 0,
    ADD COLUMN latency_ms bigint NOT NULL DEFAULT 0,
    ADD COLUMN last_action_at timestamptz;

-- Recomputes those aggregates from the raw actions and turns: the backfill below, and for rows written by hand
-- (an import, a test's fixture). `ids` NULL: every experiment. Returns how many rows it set.
CREATE FUNCTION recount_experiments(ids bigint[] DEFAULT NULL) RETURNS bigint
LANGUAGE sql AS $$
    WITH picked AS (
        SELECT e.id, m.start_x, m.start_y
          FROM experiments e JOIN mazes m ON m.id = e.maze_id
         WHERE recount_experiments.ids IS NULL OR e.id = ANY (recount_experiments.ids)
    ), tiles AS (  -- distinct tiles stood on besides the start, which every experiment has visited
        SELECT d.experiment_id, count(*) AS tiles
          FROM (SELECT DISTINCT a.experiment_id, a.to_x, a.to_y
                  FROM actions a JOIN picked p ON p.id = a.experiment_id
                 WHERE (a.to_x, a.to_y) <> (p.start_x, p.start_y)) d
         GROUP BY d.experiment_id
    ), calls AS (
        SELECT t.experiment_id, sum(t.model_calls) AS model_calls, sum(t.latency_ms) AS latency_ms,
               max(t.completed_at) FILTER (WHERE t.action_count > 0) AS last_action_at
          FROM turns t JOIN picked p ON p.id = t.experiment_id
         GROUP BY t.experiment_id
    ), updated AS (
        UPDATE experiments e
           SET unique_tiles_visited = 1 + coalesce(tiles.tiles, 0),
               model_calls = coalesce(calls.model_calls, 0),
               latency_ms = coalesce(calls.latency_ms, 0),
               last_action_at = calls.last_action_at
          FROM picked
          LEFT JOIN tiles ON tiles.experiment_id = picked.id
          LEFT JOIN calls ON calls.experiment_id = picked.id
         WHERE e.id = picked.id
        RETURNING 1
    )
    SELECT count(*) FROM updated
$$;

SELECT recount_experiments();

-- 3. The catalog's view of each configuration key: which providers it changes anything for, whether it is an
--    experimental variable (maze rules, limits, generation and memory settings) or not (transport such as the
--    endpoint and the request timeout, the seed of a repetition, bookkeeping), and its default (what an
--    experiment whose snapshot predates the key ran with). Rewritten from oriole.catalog on every migrate.
CREATE TABLE config_keys (
    key           text    PRIMARY KEY,
    providers     text[]  NOT NULL,
    experimental  boolean NOT NULL,
    default_value jsonb   NOT NULL
);

-- 4. The views.

-- The words of an experiment's comment: its tags (`oriole sweep` adds sweep:<id>).
CREATE FUNCTION comment_tags(comment text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(regexp_split_to_array(nullif(btrim(comment), ''), '\s+'), '{}')
$$;

-- The experiments matching the filters (NULL: no filter), each with `compared_config`: its experimental settings
-- (config_keys: the keys that apply to its provider, the catalog default where its snapshot predates a key)
-- whose value differs among these experiments, so settings never get mixed in one group. The one definition of
-- the report's filters: compare_experiments, experiment_results.varied_config (no filter), `oriole report
-- --format html` and `oriole export`.
-- Built for many experiments: each one costs a jsonb subtraction and a hash; the settings are spread into rows
-- only for the few distinct (provider, experimental configuration) pairs, since a study varies few values.
CREATE FUNCTION compared_experiments(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL            -- a whitespace-separated word of the comment, e.g. 'sweep:ladder'
) RETURNS TABLE (experiment_id bigint, compared_config jsonb)
LANGUAGE sql STABLE AS $$
    WITH picked AS MATERIALIZED (
        -- the snapshot without the keys that are never compared (transport, the seed, bookkeeping)
        SELECT e.id, e.llm_provider,
               e.config - (SELECT coalesce(array_agg(k.key), '{}') FROM config_keys k WHERE NOT k.experimental)
                   AS settings
          FROM experiments e
          JOIN mazes m ON m.id = e.maze_id
         WHERE (compared_experiments.model IS NULL OR e.model_name = compared_experiments.model)
           AND (compared_experiments.prompt IS NULL OR e.prompt_version = compared_experiments.prompt)
           AND (compared_experiments.maze IS NULL OR compared_experiments.maze IN (m.name, m.family))
           AND (compared_experiments.since IS NULL OR e.started_at >= compared_experiments.since)
           AND (compared_experiments.until IS NULL OR e.started_at < compared_experiments.until)
           AND (compared_experiments.tag IS NULL OR compared_experiments.tag = ANY (comment_tags(e.comment)))
    ), kinds AS MATERIALIZED (
        SELECT DISTINCT p.llm_provider, p.settings FROM picked p
    ), spread AS MATERIALIZED (  -- each kind's experimental settings that apply to its provider
        SELECT d.llm_provider, d.settings, k.key, coalesce(d.settings -> k.key, k.default_value) AS value
          FROM kinds d JOIN config_keys k ON k.experimental AND d.llm_provider = ANY (k.providers)
    ), varied AS (
        SELECT s.llm_provider, s.settings, jsonb_object_agg(s.key, s.value) AS config
          FROM spread s
         WHERE s.key IN (SELECT v.key FROM spread v GROUP BY v.key HAVING count(DISTINCT v.value) > 1)
         GROUP BY s.llm_provider, s.settings
    )
    SELECT p.id, coalesce(v.config, '{}')
      FROM picked p
      LEFT JOIN varied v ON v.llm_provider = p.llm_provider AND v.settings = p.settings
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
       e.failure_reason
  FROM experiments e
  JOIN mazes m ON m.id = e.maze_id
  -- its experimental settings whose value is not the same in every experiment of the database (grouped by id
  -- so that the planner knows one row per experiment and drops the join from queries that do not read it)
  LEFT JOIN (SELECT c.experiment_id, (array_agg(c.compared_config))[1] AS compared_config
               FROM compared_experiments() c GROUP BY c.experiment_id) everything ON everything.experiment_id = e.id;

-- The comparison over the experiments matching the filters, one row per model x prompt x maze family (or maze)
-- x compared configuration. Runs are the success and agent endings (a run without success: the limits, or a
-- failure the agent caused); error endings are counted as errors and running experiments as running, and
-- neither enters a rate.
CREATE FUNCTION compare_experiments(
    model text DEFAULT NULL,
    prompt text DEFAULT NULL,
    maze text DEFAULT NULL,
    since timestamptz DEFAULT NULL,
    until timestamptz DEFAULT NULL,
    tag text DEFAULT NULL,
    by_maze boolean DEFAULT false    -- one row per maze instead of per maze family
) RETURNS TABLE (
    llm_provider text, model_name text, prompt_version text, prompt_hash text, maze_family text, maze text,
    config jsonb, runs bigint, successes bigint, success_rate numeric, success_rate_low numeric,
    success_rate_high numeric, median_actions_to_goal numeric, median_path_efficiency numeric,
    tokens_per_run numeric, tokens_per_success numeric, cost_per_run numeric, cost_per_success numeric,
    mean_latency_ms numeric, errors bigint, running bigint
)
LANGUAGE sql STABLE AS $$
    WITH grouped AS (
        SELECT p.llm_provider, p.model_name, p.prompt_version, p.prompt_hash, p.maze_family,
               CASE WHEN compare_experiments.by_maze THEN p.maze END AS maze,
               c.compared_config AS config,
               min(p.maze_id) AS first_maze_id,
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

-- Live progress, one row per experiment: how far it is, when it last acted, what it has spent, and whether it is
-- stale (running with no action for its staleAfterMinutes, the catalog default for snapshots without the key).
CREATE VIEW experiment_status AS
SELECT r.experiment_id, r.llm_provider, r.model_name, r.maze, r.status, r.ending, r.turns AS turn, r.actions,
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

-- 5. The data dictionary of what `oriole export` writes: the experiment_results view and the turns, actions and
--    model_calls tables.
COMMENT ON COLUMN experiment_results.experiment_id IS 'experiments.id';
COMMENT ON COLUMN experiment_results.llm_provider IS 'bedrock, ollama or baseline';
COMMENT ON COLUMN experiment_results.model_name IS 'the model (or the baseline agent) that played';
COMMENT ON COLUMN experiment_results.prompt_version IS 'the prompt version';
COMMENT ON COLUMN experiment_results.prompt_hash IS 'SHA-256 of the prompt text the experiment really used';
COMMENT ON COLUMN experiment_results.maze_id IS 'mazes.id';
COMMENT ON COLUMN experiment_results.maze IS 'the maze name, e.g. perfect-11';
COMMENT ON COLUMN experiment_results.maze_family IS 'the maze family, e.g. perfect, sparse';
COMMENT ON COLUMN experiment_results.shortest_path_length IS 'moves on a shortest path from start to goal';
COMMENT ON COLUMN experiment_results.status IS 'running, succeeded, timed_out, failed or aborted';
COMMENT ON COLUMN experiment_results.ending IS
    'success; agent (a run without success: a limit, or a failure the agent caused such as agent_stalled); '
    'error (infrastructure or provider); NULL while running. Runs are success and agent endings';
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
COMMENT ON COLUMN experiment_results.path_efficiency IS
    'for successes: shortest_path_length / moves (1.0 is optimal; can exceed 1 with goalCondition sight)';
COMMENT ON COLUMN experiment_results.input_tokens IS 'input tokens of every model call';
COMMENT ON COLUMN experiment_results.output_tokens IS 'output tokens of every model call';
COMMENT ON COLUMN experiment_results.cost_usd IS 'USD at the prices captured in the snapshot';
COMMENT ON COLUMN experiment_results.started_at IS 'when the experiment started';
COMMENT ON COLUMN experiment_results.last_action_at IS 'when its last action was written (NULL: none yet)';
COMMENT ON COLUMN experiment_results.completed_at IS 'when it was closed (NULL while running)';
COMMENT ON COLUMN experiment_results.duration_seconds IS 'completed_at - started_at in seconds (NULL while running)';
COMMENT ON COLUMN experiment_results.model_calls IS 'model calls';
COMMENT ON COLUMN experiment_results.mean_latency_ms IS 'mean latency of its model calls (NULL without calls)';
COMMENT ON COLUMN experiment_results.varied_config IS
    'its experimental settings (for its provider) whose value is not the same in every experiment of the database';
COMMENT ON COLUMN experiment_results.config IS 'the whole configuration snapshot (JSON)';
COMMENT ON COLUMN experiment_results.seed IS 'the seed of the baseline agent or of Ollama';
COMMENT ON COLUMN experiment_results.agent_id IS 'as given in the execution input (a sweep: <sweep>/<cell>/r<n>)';
COMMENT ON COLUMN experiment_results.comment IS 'as given in the execution input';
COMMENT ON COLUMN experiment_results.tags IS 'the whitespace-separated words of the comment';
COMMENT ON COLUMN experiment_results.sweep_id IS 'the <id> of a sweep:<id> tag';
COMMENT ON COLUMN experiment_results.failure_reason IS 'why it did not succeed';

COMMENT ON COLUMN turns.experiment_id IS 'experiments.id';
COMMENT ON COLUMN turns.turn_number IS 'the turn, from 1';
COMMENT ON COLUMN turns.first_step IS 'the step number of its first action';
COMMENT ON COLUMN turns.action_count IS 'actions taken in the turn';
COMMENT ON COLUMN turns.model_calls IS 'model calls in the turn';
COMMENT ON COLUMN turns.input_tokens IS 'input tokens of its model calls';
COMMENT ON COLUMN turns.output_tokens IS 'output tokens of its model calls';
COMMENT ON COLUMN turns.cost_usd IS 'USD at the prices captured in the snapshot';
COMMENT ON COLUMN turns.latency_ms IS 'total latency of its model calls';
COMMENT ON COLUMN turns.throttles IS 'throttled attempts of its model calls';
COMMENT ON COLUMN turns.end_reason IS 'no_tool_call, action_budget, max_moves, goal_found or circuit_breaker';
COMMENT ON COLUMN turns.started_at IS 'when the turn started';
COMMENT ON COLUMN turns.completed_at IS 'when the turn was written';

COMMENT ON COLUMN actions.experiment_id IS 'experiments.id';
COMMENT ON COLUMN actions.step_number IS 'the action, from 1, without gaps';
COMMENT ON COLUMN actions.turn_number IS 'the turn it was taken in';
COMMENT ON COLUMN actions.action_type IS 'move_north, move_east, move_south, move_west, recall_all or invalid';
COMMENT ON COLUMN actions.tool_name IS 'the tool the agent called';
COMMENT ON COLUMN actions.arguments IS 'the call''s arguments (JSON)';
COMMENT ON COLUMN actions.reasoning IS 'the reasoning the agent gave with the call';
COMMENT ON COLUMN actions.from_x IS 'position before the action (x)';
COMMENT ON COLUMN actions.from_y IS 'position before the action (y, north is y - 1)';
COMMENT ON COLUMN actions.to_x IS 'position after the action (x)';
COMMENT ON COLUMN actions.to_y IS 'position after the action (y)';
COMMENT ON COLUMN actions.success IS 'false for a move into a wall or off the grid, and for an error';
COMMENT ON COLUMN actions.error IS 'what went wrong, as the agent was told';
COMMENT ON COLUMN actions.tiles_seen IS 'tiles in sight after the action, [x, y, cell] (JSON)';
COMMENT ON COLUMN actions.goal_visible IS 'whether the goal was in sight after the action';
COMMENT ON COLUMN actions.created_at IS 'when the action was written';

COMMENT ON COLUMN model_calls.experiment_id IS 'experiments.id';
COMMENT ON COLUMN model_calls.turn_number IS 'the turn of the call';
COMMENT ON COLUMN model_calls.call_index IS 'the call within its turn, from 1';
COMMENT ON COLUMN model_calls.request_messages IS
    'what the call added since the previous call of the turn: the context, then tool results (JSON)';
COMMENT ON COLUMN model_calls.response IS 'the answer: text, thinking, tool calls (JSON)';
COMMENT ON COLUMN model_calls.input_tokens IS 'input tokens';
COMMENT ON COLUMN model_calls.output_tokens IS 'output tokens';
COMMENT ON COLUMN model_calls.latency_ms IS 'latency of the call';
COMMENT ON COLUMN model_calls.stop_reason IS 'why the model stopped, as the provider said';
COMMENT ON COLUMN model_calls.durations IS 'durations the provider reported (JSON)';
COMMENT ON COLUMN model_calls.throttles IS 'throttled attempts before the answer';
