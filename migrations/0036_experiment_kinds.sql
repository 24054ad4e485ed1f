-- Issue 33: one experiment's results row at lab scale.
--
-- experiment_results.varied_config names the experimental settings whose value is not the same in every compared
-- experiment of the database. Working that out read every experiment's snapshot, so one experiment's row cost as
-- much as all of them (270 ms at 40,000 experiments). What it needs is only the distinct kinds of experiment: a
-- provider and its experimental settings (the snapshot without the keys that are never compared), a few dozen in a
-- lab. This table keeps them, each with how many compared experiments (not archived, not a replay) are of that
-- kind. The triggers that keep it (views/keep_experiment_kinds.sql) follow an experiment's insert, delete, archive
-- and return, and recount every kind when the catalog's configuration keys change (which keys are compared), or
-- when they are made again; the turn's write touches none of these columns: the turn does no more work and no
-- more round trips.

CREATE TABLE experiment_kinds (
    llm_provider text NOT NULL,
    settings jsonb NOT NULL,
    experiments bigint NOT NULL,
    PRIMARY KEY (llm_provider, settings)
);
COMMENT ON TABLE experiment_kinds IS
    'the distinct kinds of compared experiment (provider and experimental settings), kept by triggers on experiments';
COMMENT ON COLUMN experiment_kinds.llm_provider IS 'the provider (experiments.llm_provider)';
COMMENT ON COLUMN experiment_kinds.settings IS
    'the configuration snapshot without the keys that are never compared (config_keys.experimental false)';
COMMENT ON COLUMN experiment_kinds.experiments IS
    'how many experiments of this kind are compared (neither archived nor a replay); 0: none left';
