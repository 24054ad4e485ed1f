-- The comparison's scope: the experiments matching the filters (NULL: no filter; chosen_experiments applies them),
-- replays and archived ones left out, each with `compared_config`: its experimental settings (config_keys: the keys
-- that apply to its provider, the catalog default where its snapshot predates a key) whose value differs among these
-- experiments, so settings never get mixed in one group (and `modelBuild`, the build its server reported, where
-- experiments of one model name ran on more than one build); and `counted`: whether it is the attempt its repetition
-- counts as. A repetition of a sweep (the sweep recorded at its start, and its agent id <sweep>/<cell>/r<n>) counts
-- once in every rate: its attempt that ended decided (success or agent failure), else its latest; an attempt that
-- errored or was censored and then run again is not counted, though what it spent is. An experiment outside a sweep
-- is a repetition of its own. The scope of every report: compare_experiments, experiment_results.varied_config (no
-- filter), `oriole report --format html` and `oriole export`.
-- Built for many experiments: each one costs a jsonb subtraction and a hash; the settings are spread into rows
-- only for the few distinct (provider, experimental configuration) pairs (varied_settings).
CREATE FUNCTION comparison_scope(
    model text DEFAULT NULL,         -- model_name
    prompt text DEFAULT NULL,        -- prompt_version
    maze text DEFAULT NULL,          -- a maze name or a maze family
    since timestamptz DEFAULT NULL,  -- started_at >= since
    until timestamptz DEFAULT NULL,  -- started_at < until
    tag text DEFAULT NULL,           -- a whitespace-separated word of the comment, e.g. 'baseline'
    experiments bigint[] DEFAULT NULL,  -- only these (the CLI's selection: ARRAY(SELECT id FROM chosen_experiments(...)))
    -- only the experiments of these agents, each jsonb_build_array(llm_provider, model_name, agent_label,
    -- prompt_version, prompt_hash, maze family, maze size), whose settings are compared with the whole database's
    -- (what comparison_groups keeps: keep_comparison_groups); `experiments` then names them and their repetitions
    groups jsonb[] DEFAULT NULL
) RETURNS TABLE (experiment_id bigint, compared_config jsonb, counted boolean)
LANGUAGE sql STABLE AS $$
    WITH picked AS MATERIALIZED (
        -- the snapshot without the keys that are never compared (transport, the seed, bookkeeping)
        SELECT e.id, e.llm_provider, e.model_name, e.model_build,
               comparison_scope.groups IS NULL OR jsonb_build_array(e.llm_provider, e.model_name, e.agent_label,
                   e.prompt_version, e.prompt_hash, m.family, m.width || 'x' || m.height) = ANY (comparison_scope.groups)
                   AS in_groups,
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
          JOIN mazes m ON m.id = e.maze_id
         WHERE e.replay_of IS NULL
           AND e.archived_at IS NULL  -- archived (`oriole experiments archive`): out of every comparison and export
    ), everything AS (  -- no filter, or settings compared with the whole database's
        SELECT comparison_scope.groups IS NOT NULL
               OR num_nonnulls(comparison_scope.model, comparison_scope.prompt, comparison_scope.maze,
                               comparison_scope.since, comparison_scope.until, comparison_scope.tag,
                               comparison_scope.experiments) = 0 AS everything
    ), kinds AS (  -- the distinct (provider, experimental settings) pairs: without a filter, those the triggers keep
        SELECT array_agg(d.llm_provider) AS providers, array_agg(d.settings) AS settings
          FROM (SELECT DISTINCT p.llm_provider, p.settings FROM picked p, everything f WHERE NOT f.everything
                 UNION ALL
                SELECT k.llm_provider, k.settings FROM experiment_kinds k, everything f
                 WHERE f.everything AND k.experiments > 0) d
    ), varied AS MATERIALIZED (  -- once, whatever the plan of the join below
        SELECT v.* FROM kinds d CROSS JOIN LATERAL varied_settings(d.providers, d.settings) v
    ), rebuilt AS (
        -- a model its server reported more than one build of among these experiments (experiments.model_build: an
        -- Ollama tag pulled again, another quantisation behind one name): split on the build, named modelBuild
        -- (with groups: among every compared experiment of the database, as the whole comparison finds them)
        SELECT p.llm_provider, p.model_name FROM picked p WHERE comparison_scope.groups IS NULL
         GROUP BY p.llm_provider, p.model_name HAVING count(DISTINCT coalesce(p.model_build, '')) > 1
         UNION ALL
        SELECT b.llm_provider, b.model_name FROM compared_builds() b WHERE comparison_scope.groups IS NOT NULL
    )
    SELECT p.id,
           coalesce(v.config, '{}')
           || CASE WHEN (p.llm_provider, p.model_name) IN (SELECT r.llm_provider, r.model_name FROM rebuilt r)
                   THEN jsonb_build_object('modelBuild', coalesce(p.model_build, 'not recorded')) ELSE '{}' END,
           p.counted
      FROM picked p
      LEFT JOIN varied v ON v.llm_provider = p.llm_provider AND v.settings = p.settings
     WHERE p.in_groups
$$;
