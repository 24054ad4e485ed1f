"""The agent tasks: one turn of the shared turn loop per invocation, one task per provider
(``oriole.provider_registry``), each its own function with its own role.

Each provider's entry point is ``invoke_<provider>`` here (the handler table names it), made from the registry:
it builds the agent with the provider's adapter module (imported when its task first runs, so a task loads only
its own provider) and the provider's API key, read once per warm container.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable

from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.core.turn_loop import Agent, AgentSetup
from oriole.handlers.observability import count, logger, metrics
from oriole.lifecycle import experiments
from oriole.provider_registry import PROVIDERS, Provider
from oriole.store import shared_store
from oriole.text import JsonObject

Handler = Callable[[JsonObject, LambdaContext], JsonObject]


def _play(event: JsonObject, context: LambdaContext, provider: Provider) -> JsonObject:
    """Play the turn; the Lambda's remaining time bounds it (``get_remaining_time_in_millis``)."""
    logger.append_keys(experiment_id=event.get("experimentId"), turn=event.get("turnNumber"))
    result = experiments.play_turn(
        event,
        shared_store(),
        functools.partial(_agent, provider),
        lambda: context.get_remaining_time_in_millis() / 1000,
    ).as_state()
    logger.debug("turn played", extra=result)
    count("Turns")
    count("Actions", result["actions"])
    count("InputTokens", result["inputTokens"])
    count("OutputTokens", result["outputTokens"])
    return result


def _agent(provider: Provider, setup: AgentSetup) -> Agent:
    made: Agent = importlib.import_module(provider.adapter).agent(setup, api_key(provider.name))
    return made


@functools.cache
def api_key(provider: str) -> str | None:
    """A provider's API key: from the Secrets Manager secret its ``api_key_secret`` variable names when it is set
    (on AWS), else its ``api_key`` environment variable (locally), else none (a server on your own network may
    need none; Bedrock authorizes by role). A key no HTTP header can carry is refused here, naming its source and
    never quoting it."""
    from oriole.providers.transport import check_api_key, environment_api_key

    entry = PROVIDERS[provider]
    variable = entry.api_key_secret
    if entry.api_key is None or variable is None:
        return None
    secret_arn = os.environ.get(variable)
    if secret_arn:
        from aws_lambda_powertools.utilities import parameters

        return check_api_key(parameters.get_secret(secret_arn), f"the secret {secret_arn} ({entry.api_key})")
    return environment_api_key(entry.api_key)


def _entry_point(provider: Provider) -> Handler:
    def invoke(event: JsonObject, context: LambdaContext) -> JsonObject:
        return _play(event, context, provider)

    # A code object of its own, named as its handler: tracebacks, profilers and the tests' recorder of AWS calls
    # (tests/aws_calls.py) see which provider's task ran.
    invoke.__code__ = invoke.__code__.replace(co_name=provider.entry_point, co_qualname=provider.entry_point)
    invoke.__name__ = invoke.__qualname__ = provider.entry_point
    return logger.inject_lambda_context(metrics.log_metrics(invoke))


ENTRY_POINTS: dict[str, Handler] = {provider.entry_point: _entry_point(provider) for provider in PROVIDERS.values()}


def __getattr__(name: str) -> Handler:
    """``invoke_<provider>``: Lambda's runtime, the local runner and the tests find each entry point by name."""
    try:
        return ENTRY_POINTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
