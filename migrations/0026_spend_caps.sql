-- Issue 32: a safety cap on an experiment's spending (maxInputTokens, maxCostUsd, judged by CheckProgress after
-- every turn) ends it censored, with the cause spend_cap (oriole.core.endings); its failure_reason starts
-- 'spend cap reached'. No row closed before this migration was ended so: nothing to classify again.

COMMENT ON COLUMN experiments.ending IS
    'success; agent (agent failure: its action budget used, gave up, stalled); censored (stopped by something '
    'outside the agent: the wall clock, the execution timeout, a stop, a deployment limit, a spend cap); error (a '
    'provider or infrastructure failure); NULL while running';
COMMENT ON COLUMN experiments.ending_cause IS
    'what ended it, within its ending: goal; max_moves, gave_up, stalled; max_duration, execution_timeout, '
    'stopped, deployment_limit, spend_cap; provider, infrastructure; NULL while running';
