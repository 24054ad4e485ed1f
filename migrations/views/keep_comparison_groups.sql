-- Keep comparison_groups as the experiments change, once per statement (and experiment_kinds as an update moves
-- experiments between kinds, before the groups that read them: see keep_experiment_kinds): the groups of the agents (provider, model,
-- label, prompt, maze family and size) of the experiments an insert or a delete touched, or an update changed in
-- what a comparison reads (its group, its ending, archived or brought back, its repetition; an ended one's counts),
-- with those of every attempt of their repetitions, are worked out again (regroup_comparisons), each group once
-- however many of its experiments the statement touched. Only the few columns that name a group are read from the
-- statement's rows (never a whole row, its snapshot included). The turn's write changes a running experiment's
-- counters only, which no group reads: it finds nothing to do. An update that leaves every experiment's provider,
-- model, snapshot, build and membership (archived, a replay) as they were (a finalizer's, which ends a run) cannot
-- change which settings vary or which models split on their build: it locks only the groups it works out, so
-- finalizers of other agents never wait for one another (regroup_comparisons). A change to config_keys (which keys
-- are compared), a TRUNCATE of the experiments and a change to a maze that experiments were run on (its name,
-- family, size or grid, which name and count the groups) work out every group. The triggers are named to run after
-- those of keep_experiment_kinds (triggers of one event run in the order of their names), whose kinds they read.
-- Made with its triggers, after which every group is worked out (nothing changed while the triggers were away is
-- missed).
CREATE FUNCTION keep_comparison_groups() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    touched jsonb;  -- what names the group of each experiment touched, before and after
    settled boolean := false;  -- no experiment's provider, model, snapshot, build or membership changed
    agents jsonb[];
BEGIN
    IF TG_TABLE_NAME = 'config_keys' OR TG_OP = 'TRUNCATE' THEN
        PERFORM regroup_comparisons(NULL);
        RETURN NULL;
    ELSIF TG_TABLE_NAME = 'mazes' THEN
        IF EXISTS (SELECT FROM before_update o JOIN after_update n ON n.id = o.id
                    WHERE (o.name, o.family, o.width, o.height, o.content_hash)
                          IS DISTINCT FROM (n.name, n.family, n.width, n.height, n.content_hash)
                      AND EXISTS (SELECT FROM experiments e WHERE e.maze_id = o.id)) THEN
            PERFORM regroup_comparisons(NULL);
        END IF;
        RETURN NULL;
    ELSIF TG_OP = 'INSERT' THEN
        SELECT jsonb_agg(jsonb_build_array(n.llm_provider, n.model_name, n.agent_label, n.prompt_version,
                                           n.prompt_hash, n.maze_id, n.sweep_id, n.agent_id))
          INTO touched FROM added n WHERE n.replay_of IS NULL AND n.archived_at IS NULL;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT jsonb_agg(jsonb_build_array(o.llm_provider, o.model_name, o.agent_label, o.prompt_version,
                                           o.prompt_hash, o.maze_id, o.sweep_id, o.agent_id))
          INTO touched FROM removed o WHERE o.replay_of IS NULL AND o.archived_at IS NULL;
    ELSE
        SELECT jsonb_agg(r.row),
               bool_and((o.llm_provider, o.model_name, o.config, o.model_build, o.archived_at IS NULL,
                         o.replay_of IS NULL)
                        IS NOT DISTINCT FROM (n.llm_provider, n.model_name, n.config, n.model_build,
                                              n.archived_at IS NULL, n.replay_of IS NULL))
          INTO touched, settled
          FROM before_update o
          JOIN after_update n ON n.id = o.id
         CROSS JOIN LATERAL (VALUES (jsonb_build_array(o.llm_provider, o.model_name, o.agent_label, o.prompt_version,
                                                       o.prompt_hash, o.maze_id, o.sweep_id, o.agent_id)),
                                    (jsonb_build_array(n.llm_provider, n.model_name, n.agent_label, n.prompt_version,
                                                       n.prompt_hash, n.maze_id, n.sweep_id, n.agent_id))) r (row)
         WHERE (o.replay_of IS NULL AND o.archived_at IS NULL OR n.replay_of IS NULL AND n.archived_at IS NULL)
           AND ((o.archived_at IS NULL) <> (n.archived_at IS NULL) OR (o.replay_of IS NULL) <> (n.replay_of IS NULL)
                OR (o.llm_provider, o.model_name, o.agent_label, o.prompt_version, o.prompt_hash, o.maze_id,
                    o.config, o.sweep_id, o.agent_id, o.ending, o.model_build)
                   IS DISTINCT FROM (n.llm_provider, n.model_name, n.agent_label, n.prompt_version, n.prompt_hash,
                                     n.maze_id, n.config, n.sweep_id, n.agent_id, n.ending, n.model_build)
                OR n.ending IS NOT NULL
                   AND (o.status, o.action_count, o.move_count, o.failed_move_count, o.optimal_path_length,
                        o.input_tokens, o.output_tokens, o.cost_usd, o.model_calls, o.latency_ms)
                       IS DISTINCT FROM (n.status, n.action_count, n.move_count, n.failed_move_count,
                                         n.optimal_path_length, n.input_tokens, n.output_tokens, n.cost_usd,
                                         n.model_calls, n.latency_ms));
        IF NOT settled THEN  -- the experiments whose kind or membership changed: out of their old kind, into their new
            PERFORM count_experiment_kinds(array_agg(o.llm_provider), array_agg(o.config), -1)
               FROM before_update o JOIN after_update n ON n.id = o.id
              WHERE o.replay_of IS NULL AND o.archived_at IS NULL
                AND (o.llm_provider, o.config, o.archived_at IS NULL, o.replay_of IS NULL)
                    IS DISTINCT FROM (n.llm_provider, n.config, n.archived_at IS NULL, n.replay_of IS NULL)
             HAVING count(*) > 0;
            PERFORM count_experiment_kinds(array_agg(n.llm_provider), array_agg(n.config), 1)
               FROM before_update o JOIN after_update n ON n.id = o.id
              WHERE n.replay_of IS NULL AND n.archived_at IS NULL
                AND (o.llm_provider, o.config, o.archived_at IS NULL, o.replay_of IS NULL)
                    IS DISTINCT FROM (n.llm_provider, n.config, n.archived_at IS NULL, n.replay_of IS NULL)
             HAVING count(*) > 0;
        END IF;
    END IF;
    IF touched IS NULL THEN
        RETURN NULL;
    END IF;
    WITH rows AS (
        SELECT r ->> 0 AS llm_provider, r ->> 1 AS model_name, r ->> 2 AS agent_label, r ->> 3 AS prompt_version,
               r ->> 4 AS prompt_hash, (r ->> 5)::integer AS maze_id, r ->> 6 AS sweep_id, r ->> 7 AS agent_id
          FROM jsonb_array_elements(touched) r
    )
    SELECT array_agg(DISTINCT jsonb_build_array(e.llm_provider, e.model_name, e.agent_label, e.prompt_version,
                                                e.prompt_hash, m.family, m.width || 'x' || m.height))
      INTO agents
      FROM (SELECT r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash, r.maze_id FROM rows r
             UNION ALL
            SELECT e.llm_provider, e.model_name, e.agent_label, e.prompt_version, e.prompt_hash, e.maze_id
              FROM experiments e JOIN (SELECT DISTINCT r.sweep_id, r.agent_id FROM rows r) r
                ON e.sweep_id = r.sweep_id AND e.agent_id = r.agent_id) e
      JOIN mazes m ON m.id = e.maze_id;
    PERFORM regroup_comparisons(agents, settled);
    RETURN NULL;
END
$$;

CREATE TRIGGER regroup_comparisons_insert AFTER INSERT ON experiments
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION keep_comparison_groups();
CREATE TRIGGER regroup_comparisons_delete AFTER DELETE ON experiments
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION keep_comparison_groups();
CREATE TRIGGER regroup_comparisons_update AFTER UPDATE ON experiments
    REFERENCING OLD TABLE AS before_update NEW TABLE AS after_update
    FOR EACH STATEMENT EXECUTE FUNCTION keep_comparison_groups();
CREATE TRIGGER regroup_comparisons_truncate AFTER TRUNCATE ON experiments
    FOR EACH STATEMENT EXECUTE FUNCTION keep_comparison_groups();
CREATE TRIGGER regroup_comparisons_mazes AFTER UPDATE ON mazes
    REFERENCING OLD TABLE AS before_update NEW TABLE AS after_update
    FOR EACH STATEMENT EXECUTE FUNCTION keep_comparison_groups();
CREATE TRIGGER regroup_comparisons_keys AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON config_keys
    FOR EACH STATEMENT EXECUTE FUNCTION keep_comparison_groups();

SELECT regroup_comparisons(NULL);
