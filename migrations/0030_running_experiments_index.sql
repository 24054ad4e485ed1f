-- Issue 33: live status at lab scale.
--
-- `oriole ls --running`, `oriole watch` and experiment_status WHERE status = 'running' read the few experiments
-- still running; without an index on that condition each read scanned every experiment (130 ms at 40,000 on the
-- development machine, growing with the lab). The partial index holds only the running ones: the read is 0.1 ms,
-- and the index changes only when an experiment starts or ends (the turn's write leaves the status alone).
CREATE INDEX experiments_running_idx ON experiments (id) WHERE status = 'running';
