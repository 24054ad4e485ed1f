"""CheckProgress: decide after each turn whether to finish, continue, or continue as a new execution."""

from aws_lambda_powertools import Logger

from oriole import db, experiments
from oriole.store import Store

logger = Logger(service="oriole")


@logger.inject_lambda_context
def handler(event: dict, context) -> dict:
    return experiments.check_progress(event, Store(db.connection()))
