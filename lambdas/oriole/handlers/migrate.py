"""The migration trigger: run on every deploy that changes the code, from inside the VPC, so a fresh
deployment has the schema, the maze set and the catalog's configuration keys before the first execution.

It connects as the owner, on a connection of its own that waits for a database still starting or resuming
(``db.connect_patiently``: the trigger of a first deploy runs right after the database was created), for as long
as its invocation has left but ``MIGRATING_SECONDS`` (the trigger waits for the whole invocation and more). After
the migrations it gives the roles they create (``oriole_app`` for the functions, ``oriole_reader`` for
researchers' SQL) their logins, with the passwords of the Secrets Manager secrets CDK generated for them
(``ROLE_SECRETS``: role -> secret ARN); each deploy sets them again, so a rotated secret takes
effect on the next deploy.
"""

from aws_lambda_powertools.utilities import parameters
from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.environment import Environment
from oriole.handlers.observability import logger
from oriole.store import Store, db
from oriole.text import JsonObject

MIGRATING_SECONDS = 60  # kept back from the invocation for the migrations and the maze set


@logger.inject_lambda_context
def handler(event: JsonObject, context: LambdaContext) -> JsonObject:
    budget = context.get_remaining_time_in_millis() / 1000 - MIGRATING_SECONDS
    with db.connect_patiently(budget) as conn:  # a first deploy may find the database still starting
        store = Store(conn)
        prepared = store.prepare()
        roles = Environment.read().role_secrets
        for role, secret_arn in roles.items():
            password = parameters.get_secret(secret_arn, transform="json", force_fetch=True)["password"]
            store.enable_login(role, password)
    result = {**prepared, "logins": sorted(roles)}
    logger.info("database migrated", extra=result)
    return result
