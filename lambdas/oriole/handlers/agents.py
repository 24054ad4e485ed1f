"""The agent tasks: one turn of the shared turn loop per invocation, one per provider."""

from aws_lambda_powertools import Logger

from oriole import db, experiments
from oriole.errors import ProviderNotImplemented
from oriole.store import Store

logger = Logger(service="oriole")


def _play(event: dict, factory: experiments.AgentFactory) -> dict:
    logger.append_keys(experiment_id=event.get("experimentId"), turn=event.get("turnNumber"))
    result = experiments.play_turn(event, Store(db.connection()), factory)
    logger.debug("turn played", extra=result)
    return result


def _not_implemented(provider: str) -> experiments.AgentFactory:
    def factory(row: dict, maze) -> experiments.Agent:
        raise ProviderNotImplemented(
            f"experiment {row['id']}: the {provider} agent is not available in this version of oriole; "
            "start the experiment with llmProvider 'baseline' (random, wall-follower, explorer, oracle)"
        )
    return factory


@logger.inject_lambda_context
def invoke_baseline(event: dict, context) -> dict:
    return _play(event, experiments.baseline_agent)


@logger.inject_lambda_context
def invoke_bedrock(event: dict, context) -> dict:
    return _play(event, _not_implemented("bedrock"))


@logger.inject_lambda_context
def invoke_ollama(event: dict, context) -> dict:
    return _play(event, _not_implemented("ollama"))
