-- Add experiments (parallel arrays: provider, configuration snapshot) to the counts of their kinds (`sign` 1), or
-- take them away (-1): the rows grouped by kind first, so a bulk insert or delete costs one pass. A kind is the
-- provider and the snapshot without the keys that are never compared (config_keys.experimental false), as
-- comparison_scope reads it. Called by keep_experiment_kinds and recount_experiment_kinds only.
CREATE FUNCTION count_experiment_kinds(providers text[], configs jsonb[], sign integer) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO experiment_kinds AS k (llm_provider, settings, experiments)
    SELECT c.llm_provider, c.config - never.keys, count(*) * sign
      FROM unnest(providers, configs) AS c (llm_provider, config)
     CROSS JOIN (SELECT coalesce(array_agg(n.key), '{}') AS keys FROM config_keys n WHERE NOT n.experimental) never
     GROUP BY 1, 2
        ON CONFLICT (llm_provider, settings) DO UPDATE SET experiments = k.experiments + excluded.experiments
$$;
