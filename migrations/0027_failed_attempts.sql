-- Issue 30 item 6, issue 37: every model call a server answered counts, whether or not its turn committed. A turn
-- is written once, at its end (one statement); an attempt that fails after some calls (a later call times out, the
-- server fails, the model's answer is refused) is retried by the state machine or ends the experiment, and the calls
-- the server had already answered, and billed, used to be lost: their tokens and cost were in no total and no spend
-- limit. Now the failing task writes them on its way out, in one statement, before its error reaches the state
-- machine: the attempt (failed_attempts), its answered calls (failed_attempt_calls) and what they add to the
-- experiment's totals. input_tokens, output_tokens, cost_usd, model_calls, latency_ms and throttle_count count every
-- call; the failed_* columns say how much of each was spent on failed attempts (turns and model_calls hold the
-- committed turns alone, so the experiment's totals are the sum of its turns and its failed attempts).
-- What a killed task loses (a Lambda timed out or out of memory, before it could write anything) is said in
-- docs/explanation/failures.md.

CREATE TABLE failed_attempts (
    attempt       uuid        PRIMARY KEY,
    experiment_id bigint      NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    turn_number   integer     NOT NULL CHECK (turn_number > 0),
    error         text        NOT NULL,
    throttles     integer     NOT NULL DEFAULT 0 CHECK (throttles >= 0),
    recorded_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX failed_attempts_experiment_idx ON failed_attempts (experiment_id, turn_number);

CREATE TABLE failed_attempt_calls (
    attempt       uuid    NOT NULL REFERENCES failed_attempts (attempt) ON DELETE CASCADE,
    call_index    integer NOT NULL CHECK (call_index > 0),
    kind          text    NOT NULL CHECK (kind IN ('turn', 'compaction')),
    input_tokens  integer NOT NULL CHECK (input_tokens >= 0),
    output_tokens integer NOT NULL CHECK (output_tokens >= 0),
    cost_usd      numeric(14, 6) CHECK (cost_usd >= 0),
    latency_ms    integer NOT NULL CHECK (latency_ms >= 0),
    stop_reason   text,
    throttles     integer NOT NULL DEFAULT 0 CHECK (throttles >= 0),
    response      jsonb   NOT NULL,
    answer        bytea,
    PRIMARY KEY (attempt, call_index)
);

ALTER TABLE experiments
    ADD COLUMN failed_attempts      integer        NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
    ADD COLUMN failed_model_calls   bigint         NOT NULL DEFAULT 0 CHECK (failed_model_calls >= 0),
    ADD COLUMN failed_input_tokens  bigint         NOT NULL DEFAULT 0 CHECK (failed_input_tokens >= 0),
    ADD COLUMN failed_output_tokens bigint         NOT NULL DEFAULT 0 CHECK (failed_output_tokens >= 0),
    ADD COLUMN failed_cost_usd      numeric(24, 6) NOT NULL DEFAULT 0 CHECK (failed_cost_usd >= 0);

COMMENT ON TABLE failed_attempts IS
    'an attempt of a turn that failed (and was retried, or ended the experiment): written by the failing task';
COMMENT ON COLUMN failed_attempts.attempt IS 'the attempt''s id, drawn by the task that played it';
COMMENT ON COLUMN failed_attempts.experiment_id IS 'experiments.id';
COMMENT ON COLUMN failed_attempts.turn_number IS 'the turn it tried to play';
COMMENT ON COLUMN failed_attempts.error IS 'the error that failed it, as Name: message';
COMMENT ON COLUMN failed_attempts.throttles IS 'throttled attempts of the call that failed (no answer counts them)';
COMMENT ON COLUMN failed_attempts.recorded_at IS 'when the failing task wrote it';
COMMENT ON TABLE failed_attempt_calls IS 'the model calls a server answered in a failed attempt, billed all the same';
COMMENT ON COLUMN failed_attempt_calls.attempt IS 'failed_attempts.attempt';
COMMENT ON COLUMN failed_attempt_calls.call_index IS 'the call within its attempt, from 1';
COMMENT ON COLUMN failed_attempt_calls.kind IS 'turn, or compaction for a model summary of turns leaving the window';
COMMENT ON COLUMN failed_attempt_calls.input_tokens IS 'input tokens, as the server reported them';
COMMENT ON COLUMN failed_attempt_calls.output_tokens IS 'output tokens, as the server reported them';
COMMENT ON COLUMN failed_attempt_calls.cost_usd IS 'USD at the prices captured in the snapshot';
COMMENT ON COLUMN failed_attempt_calls.latency_ms IS 'latency of the call';
COMMENT ON COLUMN failed_attempt_calls.stop_reason IS 'why the model stopped, as the provider said';
COMMENT ON COLUMN failed_attempt_calls.throttles IS 'throttled attempts before the answer';
COMMENT ON COLUMN failed_attempt_calls.response IS 'the answer: text, thinking, tool calls (JSON)';
COMMENT ON COLUMN failed_attempt_calls.answer IS 'the provider''s answer, verbatim';
COMMENT ON COLUMN experiments.failed_attempts IS 'attempts of its turns that failed and were written as such';
COMMENT ON COLUMN experiments.failed_model_calls IS 'model calls answered in failed attempts (in model_calls too)';
COMMENT ON COLUMN experiments.failed_input_tokens IS 'input tokens spent on failed attempts (in input_tokens too)';
COMMENT ON COLUMN experiments.failed_output_tokens IS 'output tokens spent on failed attempts (in output_tokens too)';
COMMENT ON COLUMN experiments.failed_cost_usd IS 'USD spent on failed attempts (in cost_usd too)';
COMMENT ON COLUMN experiments.input_tokens IS
    'input tokens of every model call a server answered, failed attempts'' included';
COMMENT ON COLUMN experiments.output_tokens IS
    'output tokens of every model call a server answered, failed attempts'' included';
COMMENT ON COLUMN experiments.cost_usd IS
    'USD at the prices captured in the snapshot: the sum of its turns and of its failed attempts';
COMMENT ON COLUMN experiments.model_calls IS 'model calls a server answered, failed attempts'' included';
