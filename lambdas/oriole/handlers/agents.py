"""The agent tasks: one turn of the shared turn loop per invocation, one task per provider
(``oriole.provider_registry``), each its own function with its own role.

Each provider's entry point is written out here as ``invoke_<provider>`` (the handler table names it;
``tests/unit/test_provider_registry.py`` holds this module to the registry): it builds the agent with the
provider's adapter (``oriole.providers.contract.load_adapter``, imported when its task first runs, so a task loads
only its own provider) and the provider's API key, read once per warm container.
"""

from __future__ import annotations

import functools

from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.core.turn_loop import Agent, AgentSetup
from oriole.environment import Environment
from oriole.handlers.observability import count, logger, metrics
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import TurnRequest, TurnResult, task
from oriole.provider_registry import PROVIDERS
from oriole.providers.contract import load_adapter
from oriole.store import shared_store


@logger.inject_lambda_context
@metrics.log_metrics
@task(TurnRequest, TurnResult, "agent task input")
def invoke_bedrock(request: TurnRequest, context: LambdaContext) -> TurnResult:
    return _play(request, context, "bedrock")


@logger.inject_lambda_context
@metrics.log_metrics
@task(TurnRequest, TurnResult, "agent task input")
def invoke_ollama(request: TurnRequest, context: LambdaContext) -> TurnResult:
    return _play(request, context, "ollama")


@logger.inject_lambda_context
@metrics.log_metrics
@task(TurnRequest, TurnResult, "agent task input")
def invoke_openai(request: TurnRequest, context: LambdaContext) -> TurnResult:
    return _play(request, context, "openai")


@logger.inject_lambda_context
@metrics.log_metrics
@task(TurnRequest, TurnResult, "agent task input")
def invoke_baseline(request: TurnRequest, context: LambdaContext) -> TurnResult:
    return _play(request, context, "baseline")


@logger.inject_lambda_context
@metrics.log_metrics
@task(TurnRequest, TurnResult, "agent task input")
def invoke_replay(request: TurnRequest, context: LambdaContext) -> TurnResult:
    return _play(request, context, "replay")


def _play(request: TurnRequest, context: LambdaContext, provider: str) -> TurnResult:
    """Play the turn; the Lambda's remaining time bounds it (``get_remaining_time_in_millis``)."""
    logger.append_keys(experiment_id=request.experimentId, turn=request.turnNumber)
    result = experiments.play_turn(
        request,
        shared_store(context),
        functools.partial(_agent, provider),
        lambda: context.get_remaining_time_in_millis() / 1000,
    )
    logger.debug("turn played", extra=result.as_state())
    count("Turns")
    count("Actions", result.actions)
    count("InputTokens", result.input_tokens)
    count("OutputTokens", result.output_tokens)
    return result


def _agent(provider: str, setup: AgentSetup) -> Agent:
    return load_adapter(provider).agent(setup, api_key(provider))


@functools.cache
def api_key(provider: str) -> str | None:
    """A provider's API key: from the Secrets Manager secret its ``api_key_secret`` variable names when it is set
    (on AWS), else its ``api_key`` environment variable (locally), else none (a server on your own network may
    need none; Bedrock authorizes by role). A key no HTTP header can carry is refused here, naming its source and
    never quoting it."""
    from oriole.providers.transport import check_api_key, environment_api_key

    entry = PROVIDERS[provider]
    if entry.api_key is None:
        return None
    secret_arn = Environment.read().api_key_secret(provider)
    if secret_arn:
        from aws_lambda_powertools.utilities import parameters

        return check_api_key(parameters.get_secret(secret_arn), f"the secret {secret_arn} ({entry.api_key})")
    return environment_api_key(provider)
