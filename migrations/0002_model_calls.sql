-- Every model call of a turn, so a turn's conversation can be replayed exactly, and throttle counts.
-- request_messages holds only what the call added since the previous call of the turn (the first call:
-- the turn's context; later calls: the tool results), so storage grows linearly with the run.

CREATE TABLE model_calls (
    experiment_id    bigint  NOT NULL,
    turn_number      integer NOT NULL,
    call_index       integer NOT NULL CHECK (call_index > 0),
    request_messages jsonb   NOT NULL,
    response         jsonb   NOT NULL,
    input_tokens     integer NOT NULL DEFAULT 0,
    output_tokens    integer NOT NULL DEFAULT 0,
    latency_ms       integer NOT NULL DEFAULT 0,
    stop_reason      text,
    durations        jsonb   NOT NULL DEFAULT '{}',
    throttles        integer NOT NULL DEFAULT 0,
    PRIMARY KEY (experiment_id, turn_number, call_index),
    FOREIGN KEY (experiment_id, turn_number) REFERENCES turns (experiment_id, turn_number) ON DELETE CASCADE
);

ALTER TABLE turns ADD COLUMN throttles integer NOT NULL DEFAULT 0;

-- Throttles of every attempt, including attempts that failed and were retried by the state machine
-- (those never wrote a turn, so this can exceed the sum over turns).
ALTER TABLE experiments ADD COLUMN throttle_count integer NOT NULL DEFAULT 0;
