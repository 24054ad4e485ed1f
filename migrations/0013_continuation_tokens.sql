-- Issue 19: a continuation attaches only when its predecessor started it. ContinueAsNew draws a secret token
-- for the next part, keeps its SHA-256 here and puts the token itself only into the successor's input; the
-- successor's StartExperiment attaches itself only with a token whose hash is listed, and consumes the list in
-- the same guarded statement (store.attach_execution). An execution started by hand under the successor's name
-- (exp-<id>-part-<n>) holds no such token and is refused.
--
-- One hash per ContinueAsNew attempt: a retried task adds another, and the successor an earlier attempt
-- started keeps the token it holds (the state machine's retries bound the list to a few entries).
--
-- NULL marks an experiment started before this migration: its executions already running on the earlier code
-- hand over without a token, which is accepted for that experiment only, once. StartExperiment stores an empty
-- list for every new experiment, and the first attach consumes NULL into an empty list too.
ALTER TABLE experiments ADD COLUMN continuation_hashes text[];

COMMENT ON COLUMN experiments.continuation_hashes IS
    'SHA-256 (hex) of the continuation tokens ContinueAsNew issued for the next part; NULL: started before tokens';
