-- The comparison's scope: the experiments matching the filters (NULL: no filter; chosen_experiments applies them),
-- replays and archived ones left out, each with `compared_config`: its experimental settings (config_keys: the keys
-- that apply to its provider, the catalog default where its snapshot predates a key) whose value differs among these
-- experiments, so settings never get mixed in one group; and `counted`: whether it is the attempt its repetition
-- counts as. A repetition of a sweep (the sweep recorded at its start, and its agent id <sweep>/<cell>/r<n>) counts
-- once in every rate: its attempt that ended decided (success or agent failure), else its latest; an attempt that
-- errored or was censored and then run again is not counted, though what it spent is. An experiment outside a sweep
-- is a repetition of its own. The scope of every report: compare_experiments, experiment_results.varied_config (no
-- filter), `oriole report --format html` and `oriole export`.
-- Built for many experiments: each one costs a jsonb subtraction and a hash; the settings are spread into rows
-- only for the few distinct (provider, experimental configuration) pairs, since a study varies few values.
CREATE FUNCTION comparison_scope(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL,           -- a whitespace-separated word of the comment, e.g. 'baseline'
    experiments bigint[] DEFAULT NULL  -- only these (the CLI's selection: ARRAY(SELECT id FROM chosen_experiments(...)))
) RETURNS TABLE (experiment_id bigint, compared_config jsonb, counted boolean)
LANGUAGE sql STABLE AS $$
    WITH picked AS MATERIALIZED (
        -- the snapshot without the keys that are never compared (transport, the seed, bookkeeping)
        SELECT e.id, e.llm_provider,
               e.config - (SELECT coalesce(array_agg(k.key), '{}') FROM config_keys k WHERE NOT k.experimental)
                   AS settings,
               row_number() OVER (
                   PARTITION BY CASE WHEN e.sweep_id IS NOT NULL AND e.agent_id IS NOT NULL
                                     THEN e.sweep_id || ' ' || e.agent_id ELSE e.id::text END
                   ORDER BY coalesce(e.ending IN ('success', 'agent'), false) DESC, e.id DESC) = 1 AS counted
          FROM chosen_experiments(
                   ids => comparison_scope.experiments,
                   models => nullif(ARRAY[comparison_scope.model], '{NULL}'),
                   mazes => nullif(ARRAY[comparison_scope.maze], '{NULL}'),
                   prompts => nullif(ARRAY[comparison_scope.prompt], '{NULL}'),
                   tags => nullif(ARRAY[comparison_scope.tag], '{NULL}'),
                   since => comparison_scope.since,
                   until => comparison_scope.until) e
         WHERE e.replay_of IS NULL
           AND e.archived_at IS NULL  -- archived (`oriole experiments archive`): out of every comparison and export
    ), kinds AS MATERIALIZED (
        SELECT DISTINCT p.llm_provider, p.settings FROM picked p
    ), spread AS MATERIALIZED (  -- each kind's experimental settings that apply to its provider
        SELECT d.llm_provider, d.settings, k.key, coalesce(d.settings -> k.key, k.default_value) AS value
          FROM kinds d JOIN config_keys k ON k.experimental AND d.llm_provider = ANY (k.providers)
    ), varied AS (
        SELECT s.llm_provider, s.settings, jsonb_object_agg(s.key, s.value) AS config
          FROM spread s
         WHERE s.key IN (SELECT v.key FROM spread v GROUP BY v.key HAVING count(DISTINCT v.value) > 1)
         GROUP BY s.llm_provider, s.settings
    )
    SELECT p.id, coalesce(v.config, '{}'), p.counted
      FROM picked p
      LEFT JOIN varied v ON v.llm_provider = p.llm_provider AND v.settings = p.settings
$$;
