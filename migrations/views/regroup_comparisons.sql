-- Work the kept comparison (comparison_groups) out again from the experiments: the groups of the given agents (each
-- jsonb_build_array(llm_provider, model_name, agent_label, prompt_version, prompt_hash, maze family, maze size)),
-- both per maze family and size and per maze; or every group when `agents` is NULL or the settings that vary among
-- the experiments, or the models split on their build (compared_builds), are no longer those the kept groups were
-- worked out with (comparison_settings): a group's compared configuration is then another. Each group is worked out
-- by one keeper at a time, after the one before has committed, so that it always reflects every committed change:
-- `settled` (the statement changed no experiment's provider, model, snapshot, build or membership, so neither the
-- varied settings nor the builds can have changed: a finalizer's) takes a lock of each of its groups (advisory, in
-- one order: two finalizers of different agents run side by side, two of one agent one after the other) and shares
-- the whole table's; any other change takes the whole table's alone, after every keeper before it. Called by
-- keep_comparison_groups.
CREATE FUNCTION regroup_comparisons(agents jsonb[], settled boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    varied jsonb;
    ids bigint[];
BEGIN
    IF settled AND agents IS NOT NULL THEN  -- 0x6f726367, "orcg": the comparison groups' locks
        PERFORM pg_advisory_xact_lock_shared(1869767527, 0);
        PERFORM pg_advisory_xact_lock(1869767527, g.key)
           FROM (SELECT DISTINCT hashtext(a::text) AS key FROM unnest(agents) a ORDER BY 1) g;
    ELSE
        PERFORM pg_advisory_xact_lock(1869767527, 0);
    END IF;
    IF NOT settled OR agents IS NULL THEN
        SELECT jsonb_build_object(
                   'settings', (SELECT coalesce(jsonb_agg(jsonb_build_array(v.llm_provider, v.settings, v.config)
                                                          ORDER BY v.llm_provider, v.settings), '[]')
                                  FROM (SELECT array_agg(k.llm_provider) AS providers,
                                               array_agg(k.settings) AS settings
                                          FROM experiment_kinds k WHERE k.experiments > 0) d
                                 CROSS JOIN LATERAL varied_settings(d.providers, d.settings) v),
                   'builds', (SELECT coalesce(jsonb_agg(jsonb_build_array(b.llm_provider, b.model_name)
                                                        ORDER BY b.llm_provider, b.model_name), '[]')
                                FROM compared_builds() b))
          INTO varied;
        IF agents IS NULL OR varied IS DISTINCT FROM (SELECT s.varied FROM comparison_settings s) THEN
            DELETE FROM comparison_groups;
            INSERT INTO comparison_groups SELECT false, g.* FROM compared_groups(by_maze => false) g;
            INSERT INTO comparison_groups SELECT true, g.* FROM compared_groups(by_maze => true) g;
            DELETE FROM comparison_settings;
            INSERT INTO comparison_settings (varied) VALUES (varied);
            RETURN;
        END IF;
    END IF;
    DELETE FROM comparison_groups g
     WHERE jsonb_build_array(g.llm_provider, g.model_name, g.agent_label, g.prompt_version, g.prompt_hash,
                             g.maze_family, g.maze_size) = ANY (agents);
    ids := ARRAY(  -- the agents' experiments, and every attempt of their repetitions (which one counts)
        WITH own AS MATERIALIZED (  -- through experiments_group_idx
            SELECT e.id, e.sweep_id, e.agent_id
              FROM unnest(agents) a
              JOIN mazes m ON m.family = a ->> 5 AND m.width || 'x' || m.height = a ->> 6
              JOIN experiments e ON e.llm_provider = a ->> 0 AND e.model_name = a ->> 1
                                AND e.prompt_version = a ->> 3 AND e.maze_id = m.id
             WHERE e.agent_label IS NOT DISTINCT FROM a ->> 2 AND e.prompt_hash IS NOT DISTINCT FROM a ->> 4
        )
        SELECT o.id FROM own o
         UNION
        SELECT s.id
          FROM own o
         CROSS JOIN LATERAL (SELECT e.id FROM experiments e WHERE e.agent_id = o.agent_id AND e.sweep_id = o.sweep_id) s);
    INSERT INTO comparison_groups
    SELECT false, g.* FROM compared_groups(by_maze => false, experiments => ids, groups => agents) g;
    INSERT INTO comparison_groups
    SELECT true, g.* FROM compared_groups(by_maze => true, experiments => ids, groups => agents) g;
END
$$;
