"""The agent tasks: one turn of the shared turn loop per invocation, one per provider.

Provider clients are built once per warm container; the local runner replaces ``bedrock_client`` with
a client of its own (the user's credentials, or a stubbed client in tests).
"""

import functools
import os

from oriole import experiments
from oriole.handlers.observability import count, logger, metrics
from oriole.store import StoredMaze, shared_store
from oriole.turn_state import LoadedTurn


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


@functools.cache
def ollama_api_key() -> str | None:
    """The Ollama API key: from Secrets Manager when ``OLLAMA_API_KEY_SECRET_ARN`` is set, else the
    ``OLLAMA_API_KEY`` environment variable, else none (a local Ollama needs no key)."""
    secret_arn = os.environ.get("OLLAMA_API_KEY_SECRET_ARN")
    if secret_arn:
        from aws_lambda_powertools.utilities import parameters

        return parameters.get_secret(secret_arn)
    return os.environ.get("OLLAMA_API_KEY") or None


@functools.cache
def bedrock_client(timeout_seconds: float):
    from oriole.providers.bedrock import runtime_client

    return runtime_client(timeout_seconds)


def ollama_agent(loaded: LoadedTurn, maze: StoredMaze) -> experiments.Agent:
    from oriole.providers.ollama import OllamaAgent

    return OllamaAgent.from_config(loaded.experiment["model_name"], loaded.config, ollama_api_key())


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
