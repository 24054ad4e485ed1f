-- Of the given kinds of experiment (parallel arrays: a provider and its experimental settings, the snapshot without
-- the keys that are never compared), each kind with its experimental settings (config_keys: the keys that apply to
-- its provider, the catalog default where its snapshot predates a key) whose value differs among these kinds; a
-- kind none of whose settings differ is left out. A key that depends on another setting (config_keys.applies_when)
-- and that the snapshot lacks is filled only where it applies: elsewhere it played no part (historyTurns under
-- historyMode actions), and the kind goes without it, as it does without a key its provider does not use. A
-- snapshot that holds such a key (one stored before the catalog said when the key applies) keeps it as it ran.
-- The one definition of "varied": comparison_scope applies it to the experiments it compares, experiment_results
-- to every compared experiment (experiment_kinds).
-- Built for few kinds: a study varies few values, so the settings are spread into rows only for the kinds.
CREATE FUNCTION varied_settings(kind_providers text[], kind_settings jsonb[])
RETURNS TABLE (llm_provider text, settings jsonb, config jsonb)
LANGUAGE sql STABLE AS $$
    WITH kinds AS MATERIALIZED (
        SELECT DISTINCT d.llm_provider, d.settings FROM unnest(kind_providers, kind_settings) d (llm_provider, settings)
    ), spread AS MATERIALIZED (  -- each kind's experimental settings that apply to its provider and settings
        SELECT d.llm_provider, d.settings, k.key, coalesce(d.settings -> k.key, k.default_value) AS value
          FROM kinds d JOIN config_keys k ON k.experimental AND d.llm_provider = ANY (k.providers)
         WHERE k.applies_when IS NULL OR d.settings ? k.key OR NOT EXISTS (  -- no condition it depends on fails
                   SELECT FROM jsonb_each(k.applies_when) w (key, allowed) JOIN config_keys c ON c.key = w.key
                    WHERE NOT w.allowed @> jsonb_build_array(coalesce(d.settings -> w.key, c.default_value)))
    )
    SELECT s.llm_provider, s.settings, jsonb_object_agg(s.key, s.value)
      FROM spread s
     WHERE s.key IN (SELECT v.key FROM spread v GROUP BY v.key HAVING count(DISTINCT v.value) > 1)
     GROUP BY s.llm_provider, s.settings
$$;
