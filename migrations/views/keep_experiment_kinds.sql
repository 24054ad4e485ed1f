-- Keep experiment_kinds as the experiments change: an insert or a delete adds or takes away the kinds of the rows
-- it touched (once per statement); an update that moves an experiment in or out of the comparisons (archived,
-- brought back) or changes its provider or snapshot moves it between kinds (only when one of those columns is set:
-- never the turn's write); a change to config_keys recounts every kind. Made with its triggers, after which every
-- kind is recounted (nothing inserted while the triggers were away is missed).
CREATE FUNCTION keep_experiment_kinds() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'config_keys' THEN
        PERFORM recount_experiment_kinds();
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM count_experiment_kinds(array_agg(n.llm_provider), array_agg(n.config), 1)
           FROM added n WHERE n.replay_of IS NULL AND n.archived_at IS NULL HAVING count(*) > 0;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM count_experiment_kinds(array_agg(o.llm_provider), array_agg(o.config), -1)
           FROM removed o WHERE o.replay_of IS NULL AND o.archived_at IS NULL HAVING count(*) > 0;
    ELSE  -- one updated experiment
        IF OLD.replay_of IS NULL AND OLD.archived_at IS NULL THEN
            PERFORM count_experiment_kinds(ARRAY[OLD.llm_provider], ARRAY[OLD.config], -1);
        END IF;
        IF NEW.replay_of IS NULL AND NEW.archived_at IS NULL THEN
            PERFORM count_experiment_kinds(ARRAY[NEW.llm_provider], ARRAY[NEW.config], 1);
        END IF;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER keep_experiment_kinds_insert AFTER INSERT ON experiments
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION keep_experiment_kinds();
CREATE TRIGGER keep_experiment_kinds_delete AFTER DELETE ON experiments
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION keep_experiment_kinds();
CREATE TRIGGER keep_experiment_kinds_update AFTER UPDATE OF llm_provider, config, archived_at, replay_of ON experiments
    FOR EACH ROW
    WHEN (OLD.llm_provider IS DISTINCT FROM NEW.llm_provider OR OLD.config IS DISTINCT FROM NEW.config
          OR (OLD.archived_at IS NULL) <> (NEW.archived_at IS NULL) OR (OLD.replay_of IS NULL) <> (NEW.replay_of IS NULL))
    EXECUTE FUNCTION keep_experiment_kinds();
CREATE TRIGGER keep_experiment_kinds_keys AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON config_keys
    FOR EACH STATEMENT EXECUTE FUNCTION keep_experiment_kinds();

SELECT recount_experiment_kinds();
