-- Issue 14: no negative count, token total or cost can reach the tables, whatever a provider reports.
-- The adapters already refuse such numbers (InvalidModelResponse); these checks are the schema's own guard.
-- Added NOT VALID (new rows are checked at once), then validated: a database holding a negative count
-- written before this migration keeps it, with a warning naming the constraint, instead of failing the deploy.

ALTER TABLE experiments ADD CONSTRAINT experiments_counts_not_negative CHECK (
    action_count >= 0 AND move_count >= 0 AND failed_move_count >= 0 AND recall_count >= 0
    AND invalid_call_count >= 0 AND turn_count >= 0 AND throttle_count >= 0
    AND input_tokens >= 0 AND output_tokens >= 0 AND cost_usd >= 0) NOT VALID;

ALTER TABLE turns ADD CONSTRAINT turns_counts_not_negative CHECK (
    model_calls >= 0 AND input_tokens >= 0 AND output_tokens >= 0 AND cost_usd >= 0 AND latency_ms >= 0
    AND throttles >= 0) NOT VALID;

ALTER TABLE model_calls ADD CONSTRAINT model_calls_counts_not_negative CHECK (
    input_tokens >= 0 AND output_tokens >= 0 AND latency_ms >= 0 AND throttles >= 0) NOT VALID;

DO $$
DECLARE
    checked record;
BEGIN
    FOR checked IN SELECT conrelid::regclass AS tab, conname FROM pg_constraint
                    WHERE conname IN ('experiments_counts_not_negative', 'turns_counts_not_negative',
                                      'model_calls_counts_not_negative')
    LOOP
        BEGIN
            EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', checked.tab, checked.conname);
        EXCEPTION WHEN check_violation THEN
            RAISE WARNING '% holds rows written before % that break it; new rows are checked',
                checked.tab, checked.conname;
        END;
    END LOOP;
END $$;
