-- Issue 37: a sweep's experiments are recorded as its own, never inferred from text anyone may write.
--
-- Membership was read from the comment (a `sweep:<id>` word) by the reports and exports, and from the agent id
-- (`<id>/<cell>/r<n>`) by `oriole sweep status` and the sweep flow: a free comment put a single run into a sweep's
-- report while the sweep's own status disagreed. StartExperiment now records the sweep that started the experiment
-- (the execution input's sweepId, which only the sweep flow writes; the sweep must have been planned), and every
-- reading of a sweep's experiments goes by it. Experiments started before this migration by a planned sweep (their
-- agent id of the sweep's form and their sweep:<id> tag both naming it) are recorded as its members here.
--
-- A sweep's spend limit counts what its experiments spent. Deleting some of them locally (`oriole experiments
-- delete`) took their spend out of the count, so a sweep resumed after a delete could spend its limit again:
-- what deleted experiments had spent is kept on the sweep.

ALTER TABLE experiments ADD COLUMN sweep_id text REFERENCES sweeps (id);
COMMENT ON COLUMN experiments.sweep_id IS
    'the sweep that started it (sweeps.id; NULL: started on its own), as recorded at its start';
CREATE INDEX experiments_sweep_idx ON experiments (sweep_id, id) WHERE sweep_id IS NOT NULL;

UPDATE experiments e
   SET sweep_id = s.id
  FROM sweeps s
 WHERE e.sweep_id IS NULL
   AND e.replay_of IS NULL
   AND e.agent_id ~ '^[A-Za-z0-9_-]{1,40}/[0-9a-f]{12}/r[0-9]+$'
   AND split_part(e.agent_id, '/', 1) = s.id
   AND ('sweep:' || s.id) = ANY (regexp_split_to_array(btrim(e.comment), '\s+'));

ALTER TABLE sweeps ADD COLUMN deleted_cost_usd numeric(24, 6) NOT NULL DEFAULT 0 CHECK (deleted_cost_usd >= 0);
COMMENT ON COLUMN sweeps.deleted_cost_usd IS
    'what experiments of the sweep deleted from the database had spent: its spend limit still counts it';
