"""The finalizers: close the experiment as succeeded, timed out or failed (each at most once)."""

from aws_lambda_powertools import Logger

from oriole import experiments
from oriole.store import shared_store

logger = Logger(service="oriole")


def _finalize(event: dict, status: str) -> dict:
    result = experiments.finalize(event, shared_store(), status)
    logger.info("experiment finalized", extra=result)
    return result


@logger.inject_lambda_context
def success(event: dict, context) -> dict:
    return _finalize(event, "succeeded")


@logger.inject_lambda_context
def timeout(event: dict, context) -> dict:
    return _finalize(event, "timed_out")


@logger.inject_lambda_context
def failure(event: dict, context) -> dict:
    return _finalize(event, "failed")
