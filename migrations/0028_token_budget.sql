-- Issue 30 item 1: a study's token budget (maxTotalTokens: the input and output tokens its committed turns' model
-- calls may use). Running out of it is the agent's failure, like running out of actions: the turn that reaches it
-- ends with end_reason max_tokens, and CheckProgress closes the experiment as timed_out with the failure reason
-- "max_tokens reached: ...", whose ending is agent and cause max_tokens (oriole.core.endings).

COMMENT ON COLUMN experiments.ending IS
    'success; agent (agent failure: its action or token budget used, gave up, stalled); censored (stopped by '
    'something outside the agent: the wall clock, the execution timeout, a stop, a deployment limit); error (a '
    'provider or infrastructure failure); NULL while running';
COMMENT ON COLUMN experiments.ending_cause IS
    'what ended it, within its ending: goal; max_moves, max_tokens, gave_up, stalled; max_duration, '
    'execution_timeout, stopped, deployment_limit; provider, infrastructure; NULL while running';
COMMENT ON COLUMN turns.end_reason IS
    'why the turn ended: no_tool_call, action_budget, max_moves, max_tokens (the token budget, maxTotalTokens), '
    'goal_found, circuit_breaker, repetition, gave_up or deadline (the agent task''s Lambda could not fit another '
    'model request)';
