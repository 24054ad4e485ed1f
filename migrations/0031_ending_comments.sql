-- The endings' comments name every cause: 0026 (spend caps) and 0028 (the token budget) each rewrote them from
-- their own side, and 0028, applied last, left out spend_cap.

COMMENT ON COLUMN experiments.ending IS
    'success; agent (agent failure: its action or token budget used, gave up, stalled); censored (stopped by '
    'something outside the agent: the wall clock, the execution timeout, a stop, a deployment limit, a spend cap); '
    'error (a provider or infrastructure failure); NULL while running';
COMMENT ON COLUMN experiments.ending_cause IS
    'what ended it, within its ending: goal; max_moves, max_tokens, gave_up, stalled; max_duration, '
    'execution_timeout, stopped, deployment_limit, spend_cap; provider, infrastructure; NULL while running';
