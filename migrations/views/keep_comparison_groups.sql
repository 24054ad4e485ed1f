-- Keep comparison_groups as the experiments change, once per statement: the groups of the agents (provider, model,
-- label, prompt, maze family and size) of the experiments an insert or a delete touched, or an update changed in
-- what a comparison reads (its group, its ending, archived or brought back, its repetition; an ended one's counts),
-- with those of every attempt of their repetitions, are worked out again (regroup_comparisons). The turn's write
-- changes a running experiment's counters only, which no group reads: it finds nothing to do. A change to
-- config_keys (which keys are compared) works out every group. The triggers are named to run after those of
-- keep_experiment_kinds (triggers of one event run in the order of their names), whose kinds they read. Made with
-- its triggers, after which every group is worked out (nothing changed while the triggers were away is missed).
CREATE FUNCTION keep_comparison_groups() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    touched jsonb;  -- the experiments' rows, before and after
    agents jsonb[];
BEGIN
    IF TG_TABLE_NAME = 'config_keys' THEN
        PERFORM regroup_comparisons(NULL);
        RETURN NULL;
    ELSIF TG_OP = 'INSERT' THEN
        SELECT jsonb_agg(to_jsonb(n)) INTO touched FROM added n WHERE n.replay_of IS NULL AND n.archived_at IS NULL;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT jsonb_agg(to_jsonb(o)) INTO touched FROM removed o WHERE o.replay_of IS NULL AND o.archived_at IS NULL;
    ELSE
        SELECT jsonb_agg(r.row) INTO touched
          FROM before_update o
          JOIN after_update n ON n.id = o.id
         CROSS JOIN LATERAL (VALUES (to_jsonb(o)), (to_jsonb(n))) r (row)
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
    END IF;
    IF touched IS NULL THEN
        RETURN NULL;
    END IF;
    WITH rows AS (
        SELECT * FROM jsonb_to_recordset(touched) AS t (llm_provider text, model_name text, agent_label text,
                  prompt_version text, prompt_hash text, maze_id integer, sweep_id text, agent_id text)
    )
    SELECT array_agg(DISTINCT jsonb_build_array(e.llm_provider, e.model_name, e.agent_label, e.prompt_version,
                                                e.prompt_hash, m.family, m.width || 'x' || m.height))
      INTO agents
      FROM (SELECT r.llm_provider, r.model_name, r.agent_label, r.prompt_version, r.prompt_hash, r.maze_id FROM rows r
             UNION ALL
            SELECT e.llm_provider, e.model_name, e.agent_label, e.prompt_version, e.prompt_hash, e.maze_id
              FROM experiments e JOIN rows r ON e.sweep_id = r.sweep_id AND e.agent_id = r.agent_id) e
      JOIN mazes m ON m.id = e.maze_id;
    PERFORM regroup_comparisons(agents);
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
CREATE TRIGGER regroup_comparisons_keys AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON config_keys
    FOR EACH STATEMENT EXECUTE FUNCTION keep_comparison_groups();

SELECT regroup_comparisons(NULL);
