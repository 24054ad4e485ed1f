"""The ``oriole`` console script. The command line itself (typer, rich) and the local runner (moto, pgserver,
pillow) come with the ``local`` extra, which a plain ``pip install oriole`` leaves out: without it the script says so
in one line, naming the extra, instead of dying in an import traceback. Any other missing module is a real fault and
is raised as it is."""

from __future__ import annotations

import sys

LOCAL_EXTRA = frozenset({"typer", "rich", "moto", "pgserver", "PIL"})  # import names of pyproject.toml's `local`
MISSING_EXTRA = (
    "oriole: the command line needs the 'local' extra ({module} is not installed): pip install 'oriole[local]'"
)


def main() -> None:
    try:
        from oriole_workstation.cli import main as cli
    except ModuleNotFoundError as error:
        module = (error.name or "").partition(".")[0]
        if module not in LOCAL_EXTRA:
            raise
        print(MISSING_EXTRA.format(module=module), file=sys.stderr)
        sys.exit(2)
    cli()
