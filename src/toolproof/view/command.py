"""`toolproof view`: serve the dashboard over a results store until Ctrl-C."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from toolproof.store.queries import open_existing
from toolproof.view.data import Dashboard
from toolproof.view.server import DashboardServer


def view(
    store: Annotated[
        str | None, typer.Option("--store", help="SQLAlchemy URL or SQLite file [./toolproof.db].")
    ] = None,
    host: Annotated[
        str,
        typer.Option(help="Address to listen on; the default lets only this machine connect."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8765,
) -> None:
    """Serve a local dashboard: the runs (filterable), their HTML reports, and each metric's
    trend across a suite's runs, one line per model."""
    server = DashboardServer(Dashboard(open_existing(store)), host, port)
    out = Console(soft_wrap=True, highlight=False)
    if not server.loopback:
        Console(stderr=True, soft_wrap=True, highlight=False).print(
            f"warning: listening on {host}: anyone who can reach this machine on port "
            f"{server.server_port} can read every run in the store (there is no login)",
            style="yellow",
            markup=False,
        )
    out.print(
        f"toolproof view of {server.store_label} at {server.url} (Ctrl-C stops it)", markup=False
    )
    out.file.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
