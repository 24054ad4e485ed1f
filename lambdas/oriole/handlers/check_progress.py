"""CheckProgress: decide after each turn whether to finish, continue, or continue as a new execution."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.handlers.observability import logger
from oriole.lifecycle import experiments
from oriole.store import shared_store
from oriole.text import JsonObject


@logger.inject_lambda_context
def handler(event: JsonObject, context: LambdaContext) -> JsonObject:
    return experiments.check_progress(event, shared_store(context)).as_state()
