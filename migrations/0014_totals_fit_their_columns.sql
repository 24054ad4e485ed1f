-- Issue 26: whatever a model reports within the bounds the code accepts, an experiment's totals fit their
-- columns. The bounds are chosen together: at most 10,000,000 tokens each way per call and an hour of latency
-- (oriole.providers), at most 10,000 USD per million tokens (oriole.catalog.MAX_PRICE_PER_MTOK), at most
-- maxActionsPerTurn + 2 calls a turn (one per action, the answer without a call, a compaction), and at most
-- maxMoves + (maxMoves + 1) x maxStalledTurns turns an experiment (a turn without a valid action counts
-- towards the stall limit). A turn's cost (at most about 2.04e7 USD) fits numeric(14, 6); an experiment's
-- (about 2.1e16 USD) and its model calls (about 1.0e11) did not: they widen here.
-- tests/integration/test_hostile_runs.py computes the worst case of every total against the column types.
--
-- A column a view reads cannot change type: the two views over experiments are saved as the server prints
-- them (with their column comments), dropped, and created again unchanged. Both roles get their rights back
-- as 0007 gave them.

DO $$
DECLARE
    results_definition text := pg_get_viewdef('experiment_results'::regclass);
    status_definition text := pg_get_viewdef('experiment_status'::regclass);
    saved record;
BEGIN
    CREATE TEMPORARY TABLE saved_view_comments ON COMMIT DROP AS
        SELECT c.relname AS view_name, a.attname AS column_name, d.description
          FROM pg_description d
          JOIN pg_class c ON c.oid = d.objoid
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.objsubid
         WHERE c.relname IN ('experiment_results', 'experiment_status') AND c.relnamespace = 'public'::regnamespace;

    DROP VIEW experiment_status;
    DROP VIEW experiment_results;

    ALTER TABLE experiments
        ALTER COLUMN cost_usd TYPE numeric(24, 6),
        ALTER COLUMN model_calls TYPE bigint,
        ALTER COLUMN throttle_count TYPE bigint;

    EXECUTE 'CREATE VIEW experiment_results AS ' || results_definition;
    EXECUTE 'CREATE VIEW experiment_status AS ' || status_definition;
    FOR saved IN SELECT * FROM saved_view_comments LOOP
        EXECUTE format('COMMENT ON COLUMN %I.%I IS %L', saved.view_name, saved.column_name, saved.description);
    END LOOP;

    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_app') THEN
        GRANT SELECT, INSERT, UPDATE ON experiment_results, experiment_status TO oriole_app;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_reader') THEN
        GRANT SELECT ON experiment_results, experiment_status TO oriole_reader;
    END IF;
END
$$;
