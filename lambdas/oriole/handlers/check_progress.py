"""CheckProgress: decide after each turn whether to finish, continue, or continue as a new execution."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.handlers.observability import logger
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import ProgressDecision, ProgressRequest, task
from oriole.store import shared_store


@logger.inject_lambda_context
@task(ProgressRequest, ProgressDecision, "CheckProgress input")
def handler(request: ProgressRequest, context: LambdaContext) -> ProgressDecision:
    return experiments.check_progress(request, shared_store(context))
