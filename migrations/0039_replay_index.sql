-- Issue 33: bulk writes at lab scale.
--
-- experiments.replay_of references experiments.id, and PostgreSQL checks that reference for every experiment
-- deleted (`oriole experiments delete`, a sweep's 1,000 in one statement) by looking for replays of it: without an
-- index on the column, a scan of every experiment each time (40 s for 1,000 of 40,000 on the development machine).
-- Replays are few: the partial index holds only them, and the turn's write never changes it.
CREATE INDEX experiments_replay_of_idx ON experiments (replay_of) WHERE replay_of IS NOT NULL;
