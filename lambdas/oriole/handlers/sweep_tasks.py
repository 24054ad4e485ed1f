"""The sweep state machine's tasks: thin entry points over ``oriole.lifecycle.sweep_tasks``, which get the Step
Functions calls (start an execution, its status, the failed ones) from here."""

import boto3
from aws_lambda_powertools.utilities import parameters
from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole import catalog
from oriole.environment import Environment
from oriole.errors import SweepFileError
from oriole.handlers import aws
from oriole.handlers.executions import execution_status, start_named
from oriole.handlers.observability import logger
from oriole.lifecycle import sweep_tasks
from oriole.lifecycle.task_io import (
    RepetitionCheck,
    RepetitionChecked,
    RepetitionRequest,
    RepetitionStarted,
    SweepPlanned,
    SweepRequest,
    SweepSummary,
    SweepSummaryRequest,
    task,
)
from oriole.store import shared_store


def known_prompts() -> dict[str, str]:
    """The prompt versions in Parameter Store and their texts, fresh (one may have been put just before the
    sweep)."""
    return {
        name.rsplit("/", 1)[-1]: text
        for name, text in parameters.get_parameters(catalog.PROMPTS_PATH, recursive=False, force_fetch=True).items()
    }


def known_prices() -> dict[str, str]:
    """The pricing entries in Parameter Store (``/oriole/pricing/<model>``, by full name), fresh."""
    return {
        f"{catalog.PRICING_PATH}/{name}": text
        for name, text in parameters.get_parameters(catalog.PRICING_PATH, recursive=False, force_fetch=True).items()
    }


def failed_executions(state_machine_arn: str, prefix: str) -> set[str]:
    """The names starting with ``prefix`` among the state machine's failed executions."""
    pages = (
        boto3.client("stepfunctions")
        .get_paginator("list_executions")
        .paginate(stateMachineArn=state_machine_arn, statusFilter="FAILED")
    )
    return {e["name"] for page in pages for e in page["executions"] if e["name"].startswith(prefix)}


def cost_cap() -> str | None:
    """The deployment's maxCostUsd (its parameter's text), fresh; None when the parameter does not exist."""
    name = catalog.BY_KEY["maxCostUsd"].name
    found = aws.ssm().get_parameters(Names=[name])["Parameters"]
    return found[0]["Value"] if found else None


def account_concurrency() -> int | None:
    """How many functions the account's Lambda runs at once, beside the reserved (GetAccountSettings)."""
    limit = aws.awslambda().get_account_settings()["AccountLimit"]
    return limit.get("UnreservedConcurrentExecutions", limit.get("ConcurrentExecutions"))


DEPLOYMENT = sweep_tasks.Deployment(
    known_prompts,
    known_prices,
    cost_cap,
    spend_limit_required=Environment.read().spend_limit_required,
    concurrency=account_concurrency,
)


@logger.inject_lambda_context
@task(SweepRequest, SweepPlanned, "sweep input", SweepFileError)
def plan(run: SweepRequest, context: LambdaContext) -> SweepPlanned:
    result = sweep_tasks.plan_run(run, shared_store(context), DEPLOYMENT)
    logger.info(
        "sweep planned",
        extra={"sweep": run.id, "planned": result.planned, "already_done": result.already_done, "caps": result.caps},
    )
    return result


@logger.inject_lambda_context
@task(RepetitionRequest, RepetitionStarted, "sweep item")
def start_repetition(request: RepetitionRequest, context: LambdaContext) -> RepetitionStarted:
    return sweep_tasks.start_repetition(request, shared_store(context), start_named)


@logger.inject_lambda_context
@task(RepetitionCheck, RepetitionChecked, "sweep check")
def check_repetition(request: RepetitionCheck, context: LambdaContext) -> RepetitionChecked:
    return sweep_tasks.check_repetition(request, shared_store(context), execution_status)


@logger.inject_lambda_context
@task(SweepSummaryRequest, SweepSummary, "sweep summary")
def summarize(request: SweepSummaryRequest, context: LambdaContext) -> SweepSummary:
    result = sweep_tasks.summarize(request, shared_store(context), failed_executions)
    logger.info("sweep summarized", extra=result.as_state())
    return result
