"""``oriole view``: serve the local web application over the results (``oriole_workstation.viewer``)."""

from __future__ import annotations

import ipaddress
import socket
from typing import Annotated

import typer

from oriole.errors import OrioleError
from oriole_workstation.cli.common import AwsDatabase, err, out
from oriole_workstation.display import terminal_safe

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class MissingViewer(OrioleError):
    """``oriole view`` needs the ``view`` extra (Flask)."""


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port``, or an error that says why not and what to do (werkzeug, binding
    it itself, prints the reason and exits with status 1)."""
    from werkzeug.serving import get_sockaddr, select_address_family

    family = select_address_family(host, port)
    try:
        return socket.create_server(get_sockaddr(host, port, family), family=family)
    except (OSError, UnicodeError) as error:
        said = getattr(error, "strerror", None) or error
        raise OrioleError(
            f"cannot listen on {terminal_safe(host)}:{port} ({said}): choose another --host or --port"
        ) from None


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
        listening = _listen(host, port)
    except OrioleError:
        reader.close()
        raise
    with listening:  # the server listens on its own copy of the socket
        server = make_server(host, port, create_app(reader, (*LOOPBACK, host)), threaded=True, fd=listening.fileno())
    shown = f"[{host}]" if ":" in host else host
    out.print(f"oriole view: http://{shown}:{server.port}/ (Ctrl-C stops it)", markup=False, highlight=False)
    if not _loopback(host):
        err.print(f"warning: listening on {host}: anyone who reaches it can read your results", markup=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        reader.close()
