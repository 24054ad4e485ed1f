"""The migration trigger: run on every deploy that changes the code, from inside the VPC, so a fresh
deployment has the schema, the maze set and the catalog's configuration keys before the first execution."""


from oriole import catalog, db, mazeset
from oriole.handlers.observability import logger
from oriole.store import Store


@logger.inject_lambda_context
def handler(event: dict, context) -> dict:
    store = Store(db.connection())
    applied = store.apply_migrations()
    new_mazes = store.load_mazes(mazeset.maze_set())
    store.load_catalog(catalog.CATALOG)
    logger.info("database migrated", extra={"applied": applied, "new_mazes": new_mazes})
    return {"applied": applied, "newMazes": new_mazes}
