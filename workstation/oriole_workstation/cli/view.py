"""``oriole view``: serve the local web application over the results (``oriole_workstation.viewer``)."""

from __future__ import annotations

import ipaddress
from typing import Annotated

import typer

from oriole.errors import OrioleError
from oriole_workstation.cli.common import AwsDatabase, err, out

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class MissingViewer(OrioleError):
    """``oriole view`` needs the ``view`` extra (Flask)."""


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def view(
    host: Annotated[
        str, typer.Option(help="The address to listen on; anything but loopback shows your results to the network.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port to listen on (0: any free one).", min=0, max=65535)] = 8642,
    aws: AwsDatabase = False,
) -> None:
    """Browse every sweep and experiment in your browser.

    Lists filtered, sorted and searched; a running sweep's progress, live; each experiment's replay beside its
    transcript, with its provenance; the report of any scope (its leaderboard, figures and tables) linked down to
    each experiment.

    Serves http://127.0.0.1:8642/ until Ctrl-C. It reads through the read-only role (oriole_reader), so nothing it
    shows can change a result; --aws reads the deployed database through the port forward (DATABASE_URL as the
    reader).
    """
    try:
        from werkzeug.serving import make_server

        from oriole_workstation.viewer.app import create_app
    except ImportError:
        raise MissingViewer("oriole view needs Flask: pip install 'oriole[view]'") from None
    from oriole_workstation.database import prepare, results_url
    from oriole_workstation.viewer.reader import Reader

    url = results_url(aws)
    if not aws:
        prepare(url).conn.close()  # the local database, migrated; the deployed one is migrated on deploy
    reader = Reader(url)
    reader.open()
    try:
        server = make_server(host, port, create_app(reader, (*LOOPBACK, host)), threaded=True)
    except OSError as error:
        raise OrioleError(
            f"cannot listen on {host}:{port} ({error.strerror or error}): choose another --port"
        ) from None
    shown = f"[{host}]" if ":" in host else host
    out.print(f"oriole view: http://{shown}:{server.server_port}/ (Ctrl-C stops it)", markup=False, highlight=False)
    if not _loopback(host):
        err.print(f"warning: listening on {host}: anyone who reaches it can read your results", markup=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        reader.close()
