-- The indexes the analysis views read through (the views and their functions are in views/, one file each).

-- Distinct positions per experiment straight from the index, in order, without sorting the actions.
CREATE INDEX actions_position_idx ON actions (experiment_id, to_x, to_y);
-- Sweeps find their experiments by agent_id prefix ('<sweep id>/...'); the report filters on dates.
CREATE INDEX experiments_agent_idx ON experiments (agent_id text_pattern_ops);
CREATE INDEX experiments_started_idx ON experiments (started_at);
