-- Count every kind of compared experiment again (experiment_kinds), from the experiments: when which keys are
-- compared changed (config_keys) and when the triggers that keep the counts are made again. The table is locked
-- first, so that an experiment inserted meanwhile waits and is then counted once.
CREATE FUNCTION recount_experiment_kinds() RETURNS void
LANGUAGE sql AS $$
    LOCK TABLE experiment_kinds IN EXCLUSIVE MODE;
    DELETE FROM experiment_kinds;
    SELECT count_experiment_kinds(array_agg(e.llm_provider), array_agg(e.config), 1)
      FROM experiments e
     WHERE e.replay_of IS NULL AND e.archived_at IS NULL
    HAVING count(*) > 0;
$$;
