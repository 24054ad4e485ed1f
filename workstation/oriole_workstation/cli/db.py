"""``oriole db``: where the experiments database is, psql on it, migrations."""

from __future__ import annotations

import os
import shutil
import sys

import typer

from oriole_workstation.cli.common import Commands, out

app = Commands(help="The experiments database.", no_args_is_help=True)


@app.command("url")
def db_url() -> None:
    """A connection URL for psql.

    For example: psql "$(oriole db url)".
    """
    from oriole_workstation.database import local_url

    print(local_url())


@app.command("psql", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def db_psql(ctx: typer.Context) -> None:
    """Open psql on the experiments database.

    Extra arguments go to psql, for example: oriole db psql -c "SELECT ...".

    Uses the psql on PATH, else the one that ships inside the embedded server's package.
    """
    from oriole_workstation.database import local_url

    url = local_url()
    psql = shutil.which("psql")
    if psql is None:
        from pgserver._commands import POSTGRES_BIN_PATH

        psql = str(POSTGRES_BIN_PATH / "psql")
    sys.stdout.flush()
    os.execv(psql, [psql, url, *ctx.args])


@app.command("stop")
def db_stop() -> None:
    """Stop the embedded database server.

    The next command that needs the database starts it again; its data stays.
    """
    from oriole_workstation.database import stop_embedded

    out.print(
        "stopped the embedded database server" if stop_embedded() else "the embedded database server was not running",
        markup=False,
        highlight=False,
    )


@app.command("migrate")
def db_migrate() -> None:
    """Apply pending migrations and load the maze set."""
    from oriole_workstation.database import local_url, prepare

    prepare(local_url())
    out.print("database is up to date")
