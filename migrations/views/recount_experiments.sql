-- The per-experiment aggregates the turn's one write keeps up to date (unique tiles, model calls, latency, the last
-- action's time), recomputed from the raw actions, turns and failed attempts' calls: for rows written by hand (an
-- import, a test's fixture).
-- `ids` NULL: every experiment. Returns how many rows it set.
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
    ), failed AS (
        SELECT f.experiment_id, count(*) AS model_calls, sum(c.latency_ms) AS latency_ms
          FROM failed_attempts f JOIN picked p ON p.id = f.experiment_id
          JOIN failed_attempt_calls c ON c.attempt = f.attempt
         GROUP BY f.experiment_id
    ), updated AS (
        UPDATE experiments e
           SET unique_tiles_visited = 1 + coalesce(tiles.tiles, 0),
               model_calls = coalesce(calls.model_calls, 0) + coalesce(failed.model_calls, 0),
               latency_ms = coalesce(calls.latency_ms, 0) + coalesce(failed.latency_ms, 0),
               last_action_at = calls.last_action_at
          FROM picked
          LEFT JOIN tiles ON tiles.experiment_id = picked.id
          LEFT JOIN calls ON calls.experiment_id = picked.id
          LEFT JOIN failed ON failed.experiment_id = picked.id
         WHERE e.id = picked.id
        RETURNING 1
    )
    SELECT count(*) FROM updated
$$;
