-- Issue 30: every run ends in exactly one of four endings, with the cause within it (oriole.core.endings).
--   success   the goal condition was met (cause goal)
--   agent     agent failure: its action budget used (max_moves), it gave up (gave_up), it stalled (stalled)
--   censored  stopped by something outside the agent: the wall clock (max_duration), the execution timeout
--             (execution_timeout), a stop (stopped), throttled past every retry (deployment_limit)
--   error     a provider (provider) or infrastructure (infrastructure) failure
-- Before, a run the wall clock or the execution timeout ended counted as the agent's failure and a stopped one as
-- an error. The rows closed before this migration are classified again by the rules of oriole.core.endings
-- (tests/integration/test_migrations.py holds the two to each other).

ALTER TABLE experiments
    DROP CONSTRAINT experiments_ending_check,
    ADD CONSTRAINT experiments_ending_check CHECK (ending IN ('success', 'agent', 'censored', 'error')),
    ADD COLUMN ending_cause text;

UPDATE experiments
   SET ending_cause = CASE
           WHEN status = 'succeeded' THEN 'goal'
           WHEN starts_with(failure_reason, 'max_moves reached') THEN 'max_moves'
           WHEN starts_with(failure_reason, 'agent_gave_up') THEN 'gave_up'
           WHEN starts_with(failure_reason, 'agent_stalled') THEN 'stalled'
           WHEN starts_with(failure_reason, 'max_duration_minutes reached') THEN 'max_duration'
           WHEN starts_with(failure_reason, 'execution TIMED_OUT') THEN 'execution_timeout'
           WHEN starts_with(failure_reason, 'execution ABORTED') THEN 'stopped'
           WHEN status = 'aborted' THEN 'stopped'
           WHEN status = 'timed_out' THEN 'execution_timeout'
           WHEN btrim(split_part(coalesce(failure_reason, ''), ':', 1)) IN
                ('ModelUnavailable', 'ModelTimeout', 'ModelRequestRejected', 'InvalidModelResponse', 'InvalidApiKey')
               THEN 'provider'
           WHEN btrim(split_part(coalesce(failure_reason, ''), ':', 1)) IN
                ('ModelThrottled', 'Lambda.TooManyRequestsException')
               THEN 'deployment_limit'
           ELSE 'infrastructure' END
 WHERE status <> 'running';

UPDATE experiments
   SET ending = CASE
           WHEN ending_cause = 'goal' THEN 'success'
           WHEN ending_cause IN ('max_moves', 'gave_up', 'stalled') THEN 'agent'
           WHEN ending_cause IN ('max_duration', 'execution_timeout', 'stopped', 'deployment_limit') THEN 'censored'
           ELSE 'error' END
 WHERE status <> 'running';

ALTER TABLE experiments
    ADD CONSTRAINT experiments_cause_when_closed CHECK ((ending_cause IS NULL) = (ending IS NULL));

COMMENT ON COLUMN experiments.ending IS
    'success; agent (agent failure: its action budget used, gave up, stalled); censored (stopped by something '
    'outside the agent: the wall clock, the execution timeout, a stop, a deployment limit); error (a provider or '
    'infrastructure failure); NULL while running';
COMMENT ON COLUMN experiments.ending_cause IS
    'what ended it, within its ending: goal; max_moves, gave_up, stalled; max_duration, execution_timeout, '
    'stopped, deployment_limit; provider, infrastructure; NULL while running';
