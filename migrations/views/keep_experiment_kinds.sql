-- Keep experiment_kinds as the experiments change, once per statement: an insert or a delete adds or takes away the
-- kinds of the rows it touched; a change to config_keys recounts every kind, and so does a TRUNCATE of the
-- experiments (none left). An update that moves experiments in or out of the comparisons (archived, brought back) or
-- changes their provider or snapshot moves them between kinds in keep_comparison_groups, the one statement trigger an
-- update of the experiments fires (a trigger of its own would be called by every turn's write too, for nothing),
-- grouped by kind and before the groups that read the kinds are worked out. Made with its triggers, after which every
-- kind is recounted (nothing inserted while the triggers were away is missed).
CREATE FUNCTION keep_experiment_kinds() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'config_keys' OR TG_OP = 'TRUNCATE' THEN
        PERFORM recount_experiment_kinds();
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM count_experiment_kinds(array_agg(n.llm_provider), array_agg(n.config), 1)
           FROM added n WHERE n.replay_of IS NULL AND n.archived_at IS NULL HAVING count(*) > 0;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM count_experiment_kinds(array_agg(o.llm_provider), array_agg(o.config), -1)
           FROM removed o WHERE o.replay_of IS NULL AND o.archived_at IS NULL HAVING count(*) > 0;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER keep_experiment_kinds_insert AFTER INSERT ON experiments
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION keep_experiment_kinds();
CREATE TRIGGER keep_experiment_kinds_delete AFTER DELETE ON experiments
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION keep_experiment_kinds();
CREATE TRIGGER keep_experiment_kinds_truncate AFTER TRUNCATE ON experiments
    FOR EACH STATEMENT EXECUTE FUNCTION keep_experiment_kinds();
CREATE TRIGGER keep_experiment_kinds_keys AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON config_keys
    FOR EACH STATEMENT EXECUTE FUNCTION keep_experiment_kinds();

SELECT recount_experiment_kinds();
