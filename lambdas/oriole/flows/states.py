"""The pieces of States Language both generated parts of the flows use: a Lambda task's resource and the retriers
the experiment flow's tasks and the sweep's share (``experiment_flow`` generates the experiment flow's provider
branches, ``sweep_flow`` the whole sweep flow)."""

from __future__ import annotations

from oriole.text import JsonObject

LAMBDA_INVOKE = "arn:aws:states:::lambda:invoke"


def retrier(errors: list[str], interval: int, attempts: int, max_delay: int | None = None) -> JsonObject:
    """A Retry entry: exponential backoff (rate 2) with full jitter."""
    entry = {"ErrorEquals": errors, "IntervalSeconds": interval, "MaxAttempts": attempts, "BackoffRate": 2.0}
    if max_delay is not None:
        entry["MaxDelaySeconds"] = max_delay
    return {**entry, "JitterStrategy": "FULL"}


# Lambda throttling the invocation (the account's concurrency is spent: a new account's is often 10): retried for
# minutes, seconds apart at first, so that a sweep at its caps waits for a slot instead of ending experiments as
# errors. It comes first: Step Functions uses the first retrier that names an error.
LAMBDA_THROTTLED = retrier(["Lambda.TooManyRequestsException"], interval=3, attempts=10, max_delay=60)
# Lambda's own transient errors; a function that timed out or lost its connection, or found the database full
# (DatabaseBusy) or away past its connect budget (a paused database resumes within it: oriole.store.db); Step
# Functions throttling a start (StartExecutionThrottled) or Parameter Store a read (ParameterStoreThrottled); a
# model throttled past the adapter's own retries; a model server away or too slow.
LAMBDA_ERRORS = retrier(
    [
        "Lambda.ClientExecutionTimeoutException",
        "Lambda.ServiceException",
        "Lambda.AWSLambdaException",
        "Lambda.SdkClientException",
    ],
    interval=1,
    attempts=3,
)
DATABASE_ERRORS = retrier(["Lambda.Unknown", "OperationalError", "DatabaseBusy"], interval=2, attempts=3)
START_THROTTLED = retrier(["StartExecutionThrottled"], interval=2, attempts=4, max_delay=30)
PARAMETER_STORE_THROTTLED = retrier(["ParameterStoreThrottled"], interval=2, attempts=4, max_delay=30)
MODEL_THROTTLED = retrier(["ModelThrottled"], interval=2, attempts=6, max_delay=60)
MODEL_UNAVAILABLE = retrier(["ModelUnavailable", "ModelTimeout"], interval=1, attempts=2)
# Every task reads the database: each retries Lambda's throttling, its transient errors and the database's alike.
TASK_RETRY = [LAMBDA_THROTTLED, LAMBDA_ERRORS, DATABASE_ERRORS]
