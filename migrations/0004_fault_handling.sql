-- Issue 5: the stall rule's counter, and finding an experiment from any of its executions.

-- Consecutive turns without a valid action (no tool call, or only invalid calls); a valid action resets it.
ALTER TABLE experiments ADD COLUMN stalled_turns integer NOT NULL DEFAULT 0 CHECK (stalled_turns >= 0);

-- The status-change finalizer looks an execution up in execution_arns (`execution_arns @> ARRAY[arn]`).
CREATE INDEX experiments_execution_arns_idx ON experiments USING gin (execution_arns);
