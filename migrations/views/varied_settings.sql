-- Of the given kinds of experiment (parallel arrays: a provider and its experimental settings, the snapshot without
-- the keys that are never compared), each kind with its experimental settings (config_keys: the keys that apply to
-- its provider, the catalog default where its snapshot predates a key) whose value differs among these kinds; a
-- kind none of whose settings differ is left out. The one definition of "varied": comparison_scope applies it
-- to the experiments it compares, experiment_results to every compared experiment (experiment_kinds).
-- Built for few kinds: a study varies few values, so the settings are spread into rows only for the kinds.
CREATE FUNCTION varied_settings(kind_providers text[], kind_settings jsonb[])
RETURNS TABLE (llm_provider text, settings jsonb, config jsonb)
LANGUAGE sql STABLE AS $$
    WITH kinds AS MATERIALIZED (
        SELECT DISTINCT d.llm_provider, d.settings FROM unnest(kind_providers, kind_settings) d (llm_provider, settings)
    ), spread AS MATERIALIZED (  -- each kind's experimental settings that apply to its provider
        SELECT d.llm_provider, d.settings, k.key, coalesce(d.settings -> k.key, k.default_value) AS value
          FROM kinds d JOIN config_keys k ON k.experimental AND d.llm_provider = ANY (k.providers)
    )
    SELECT s.llm_provider, s.settings, jsonb_object_agg(s.key, s.value)
      FROM spread s
     WHERE s.key IN (SELECT v.key FROM spread v GROUP BY v.key HAVING count(DISTINCT v.value) > 1)
     GROUP BY s.llm_provider, s.settings
$$;
