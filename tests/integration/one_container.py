"""Run one experiment through the local state machine in this process and print how it ended as JSON.

A process holds one database connection for its functions, as one warm Lambda container does: the load
test starts several of these at once, the functions connecting as a role whose connection limit is smaller
than their number. The runner's own bookkeeping uses the owner's connection (argv[1]), the functions
``argv[2]``; ``argv[3]`` is the execution input.

A status change the launcher reports itself (no EventBridge locally) may find the database full: it is
reported again at the next poll, as Lambda retries an asynchronous invocation.
"""

import json
import sys
import time

from oriole.errors import DatabaseBusy
from oriole.store import db
from oriole_workstation.results import Results
from oriole_workstation.runner import LocalAws


def main(owner_url: str, functions_url: str, execution_input: str) -> None:
    with LocalAws(owner_url, functions_url=functions_url) as aws, db.connect(owner_url) as conn:
        launcher = aws.launcher(poll_seconds=0.05)
        arn = launcher.start(json.loads(execution_input))
        while True:
            try:
                result = launcher.follow(arn, Results(conn))
                break
            except DatabaseBusy:
                time.sleep(0.2)
        print(
            json.dumps(
                {
                    "executionArn": arn,
                    "status": result.execution["status"],
                    "error": result.execution.get("error"),
                    "result": result.as_json(),
                },
                default=str,
            )
        )


if __name__ == "__main__":
    main(*sys.argv[1:4])
