"""The agent tasks: one turn of the shared turn loop per invocation, one per provider.

Provider clients are built once per warm container; the local runner replaces ``bedrock_client`` with
a client of its own (the user's credentials, or a stubbed client in tests).
"""

import functools
import os

from oriole.handlers.observability import count, logger, metrics
from oriole.lifecycle import deployment, experiments
from oriole.store import shared_store
from oriole.store.mazes import StoredMaze
from oriole.store.turn_state import LoadedTurn


def _play(event: dict, context, factory: experiments.AgentFactory) -> dict:
    """Play the turn; the Lambda's remaining time bounds it (``get_remaining_time_in_millis``)."""
    logger.append_keys(experiment_id=event.get("experimentId"), turn=event.get("turnNumber"))
    result = experiments.play_turn(event, shared_store(), factory,
                                   lambda: context.get_remaining_time_in_millis() / 1000).as_state()
    logger.debug("turn played", extra=result)
    count("Turns")
    count("Actions", result["actions"])
    count("InputTokens", result["inputTokens"])
    count("OutputTokens", result["outputTokens"])
    return result


def _api_key(name: str) -> str | None:
    """A provider's API key: from the Secrets Manager secret named by ``<name>_SECRET_ARN`` when it is set (on
    AWS), else the ``<name>`` environment variable (locally), else none (a server on your own network may
    need none). A key no HTTP header can carry is refused here, naming its source and never quoting it."""
    from oriole.providers.transport import check_api_key, environment_api_key

    secret_arn = os.environ.get(f"{name}_SECRET_ARN")
    if secret_arn:
        from aws_lambda_powertools.utilities import parameters

        return check_api_key(parameters.get_secret(secret_arn), f"the secret {secret_arn} ({name})")
    return environment_api_key(name)


@functools.cache
def ollama_api_key() -> str | None:
    return _api_key(deployment.OLLAMA_API_KEY)


@functools.cache
def openai_api_key() -> str | None:
    return _api_key(deployment.OPENAI_API_KEY)


@functools.cache
def bedrock_client(timeout_seconds: float):
    from oriole.providers.bedrock import runtime_client

    return runtime_client(timeout_seconds)


def ollama_agent(loaded: LoadedTurn, maze: StoredMaze) -> experiments.Agent:
    from oriole.providers.ollama import OllamaAgent

    return OllamaAgent.from_config(loaded.experiment["model_name"], loaded.config, ollama_api_key())


def openai_agent(loaded: LoadedTurn, maze: StoredMaze) -> experiments.Agent:
    from oriole.providers.openai import OpenAIAgent

    return OpenAIAgent.from_config(loaded.experiment["model_name"], loaded.config, openai_api_key())


def bedrock_agent(loaded: LoadedTurn, maze: StoredMaze) -> experiments.Agent:
    from oriole.providers.bedrock import BedrockAgent

    client = bedrock_client(float(loaded.config["requestTimeoutSeconds"]))
    return BedrockAgent.from_config(loaded.experiment["model_name"], loaded.config, client)


@logger.inject_lambda_context
@metrics.log_metrics
def invoke_baseline(event: dict, context) -> dict:
    return _play(event, context, experiments.baseline_agent)


@logger.inject_lambda_context
@metrics.log_metrics
def invoke_bedrock(event: dict, context) -> dict:
    return _play(event, context, bedrock_agent)


@logger.inject_lambda_context
@metrics.log_metrics
def invoke_ollama(event: dict, context) -> dict:
    return _play(event, context, ollama_agent)


@logger.inject_lambda_context
@metrics.log_metrics
def invoke_openai(event: dict, context) -> dict:
    return _play(event, context, openai_agent)
