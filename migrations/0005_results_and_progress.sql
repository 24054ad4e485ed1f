-- Scores that mean what they say, comparisons that scale with experiments, and live progress (issues 11, 12).
--   experiments.ending        how each experiment ended, for scoring: success, agent (a run without success) or
--                             error; set once when the row is closed (oriole.progress.ending_category)
--   per-experiment aggregates unique tiles, model calls, latency, the last action's time: kept up to date by the
--                             turn's one write, so no view aggregates actions or turns
--   config_keys               which configuration keys are experimental variables, for which providers (written
--                             from the parameter catalog on every migrate)
-- The views over them are in views/ (one file each). Every column of the exported tables is documented in the
-- database itself (COMMENT ON COLUMN, what `oriole export` writes into its data dictionary) and in the README.

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

-- The aggregates of the rows stored before this migration, recomputed from their actions and turns (what
-- views/recount_experiments.sql does for rows written by hand).
WITH tiles AS (  -- distinct tiles stood on besides the start, which every experiment has visited
    SELECT d.experiment_id, count(*) AS tiles
      FROM (SELECT DISTINCT a.experiment_id, a.to_x, a.to_y
              FROM actions a JOIN experiments e ON e.id = a.experiment_id JOIN mazes m ON m.id = e.maze_id
             WHERE (a.to_x, a.to_y) <> (m.start_x, m.start_y)) d
     GROUP BY d.experiment_id
), calls AS (
    SELECT t.experiment_id, sum(t.model_calls) AS model_calls, sum(t.latency_ms) AS latency_ms,
           max(t.completed_at) FILTER (WHERE t.action_count > 0) AS last_action_at
      FROM turns t
     GROUP BY t.experiment_id
)
UPDATE experiments e
   SET unique_tiles_visited = 1 + coalesce(tiles.tiles, 0),
       model_calls = coalesce(calls.model_calls, 0),
       latency_ms = coalesce(calls.latency_ms, 0),
       last_action_at = calls.last_action_at
  FROM experiments picked
  LEFT JOIN tiles ON tiles.experiment_id = picked.id
  LEFT JOIN calls ON calls.experiment_id = picked.id
 WHERE e.id = picked.id;

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

-- 4. The data dictionary of the tables `oriole export` writes (turns, actions and model_calls; the
--    experiment_results view documents itself in views/experiment_results.sql).

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
