"""The dashboard's HTTP server: read-only GET routes over a `Dashboard`, standard library only.

Pages: `/` (runs), `/trends`, `/runs/ID/report`, `/report?run=A&run=B` (one report of
several runs). JSON: `/api/runs`, `/api/trends`, `/api/runs/ID` (the run's summary, as
`toolproof show --json` writes it). Assets: `/static/*`. The query parameters of the pages
and their JSON are the same (suite, model, tag, from, to, limit; k for trends).

Bound to a loopback address, the server answers only requests that name a loopback host,
so a web page cannot reach it by pointing its own domain name at 127.0.0.1.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import socketserver
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import orjson
from sqlalchemy.exc import SQLAlchemyError

from toolproof.errors import StoreError, ToolproofError, UsageError
from toolproof.report.html.render import inline_script
from toolproof.summaries import stored_summary
from toolproof.view.data import Dashboard, RunFilter
from toolproof.view.pages import error_page, runs_page, trends_page

PAGE_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
"""The pages' Content-Security-Policy: only the dashboard's own files load and run."""

_STATIC = {
    "chart.umd.min.js": ("toolproof.report.html", "static", "text/javascript"),
    "report.css": ("toolproof.report.html", "template", "text/css"),
    "view.js": ("toolproof.view", "static", "text/javascript"),
    "view.css": ("toolproof.view", "static", "text/css"),
}
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses: only this machine can connect."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class Response:
    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class DashboardServer(ThreadingHTTPServer):
    """A threading HTTP server holding the dashboard; bind errors are usage errors."""

    daemon_threads = True

    def __init__(self, dashboard: Dashboard, host: str, port: int) -> None:
        self.dashboard = dashboard
        self.host = host
        self.loopback = is_loopback(host)
        self.store_label = dashboard.store.shown
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._assets: dict[str, bytes] = {}
        try:
            super().__init__((host.strip("[]"), port), _Handler)
        except OSError as exc:
            raise _bind_error(exc, host, port) from None

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks up the host's name, which can stall without DNS
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.host, self.server_address[1]

    @property
    def url(self) -> str:
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{host}:{self.server_port}/"

    def asset(self, name: str) -> bytes:
        if name not in self._assets:
            package, folder, _ = _STATIC[name]
            text = resources.files(package).joinpath(folder, name).read_text(encoding="utf-8")
            self._assets[name] = (inline_script(text) if name.endswith(".js") else text).encode()
        return self._assets[name]


def _bind_error(exc: OSError, host: str, port: int) -> UsageError:
    if exc.errno == errno.EADDRINUSE:
        return UsageError(f"port {port} on {host} is in use: choose another with --port")
    if isinstance(exc, socket.gaierror):
        return UsageError(f"--host {host}: cannot listen there ({exc.strerror})")
    return UsageError(f"cannot listen on {host} port {port}: {exc.strerror or exc}")


class _Handler(BaseHTTPRequestHandler):
    server: DashboardServer
    server_version = "toolproof-view"

    def do_GET(self) -> None:
        self._answer(self._response(), head=False)

    def do_HEAD(self) -> None:
        self._answer(self._response(), head=True)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows where the dashboard is, not every request."""

    def _response(self) -> Response:
        url = urlsplit(self.path)
        api = url.path.startswith("/api/")
        if not self._host_allowed():
            return self._error(400, "unexpected Host header: open the address the server printed")
        try:
            return self._route(url.path, parse_qs(url.query))
        except StoreError as exc:
            return self._error(404, str(exc), api)
        except ToolproofError as exc:
            return self._error(400, str(exc), api)
        except SQLAlchemyError as exc:
            return self._error(503, f"the store cannot be read: {exc.__class__.__name__}", api)

    def _route(self, path: str, query: dict[str, list[str]]) -> Response:
        dashboard = self.server.dashboard
        parts = [unquote(p) for p in path.strip("/").split("/")] if path != "/" else []
        match parts:
            case []:
                return self._page(runs_page(dashboard.runs(RunFilter.parse(query)), self._store))
            case ["trends"]:
                data = dashboard.trends(RunFilter.parse(query), _k(query))
                return self._page(trends_page(data, self._store))
            case ["runs", run_id, "report"]:
                return self._report(dashboard.report([run_id]))
            case ["report"]:
                return self._report(dashboard.report(query.get("run", [])))
            case ["api", "runs"]:
                return _json(dashboard.runs(RunFilter.parse(query)))
            case ["api", "trends"]:
                return _json(dashboard.trends(RunFilter.parse(query), _k(query)))
            case ["api", "runs", run_id]:
                return _json(stored_summary(dashboard.store, run_id).as_json())
            case ["static", name] if name in _STATIC:
                return Response(
                    200,
                    f"{_STATIC[name][2]}; charset=utf-8",
                    self.server.asset(name),
                    {"Cache-Control": "max-age=300"},
                )
        return self._error(404, f"no page at {path}", parts[:1] == ["api"])

    @property
    def _store(self) -> str:
        return self.server.store_label

    def _page(self, text: str, status: int = 200) -> Response:
        return Response(
            status,
            "text/html; charset=utf-8",
            text.encode("utf-8"),
            {"Content-Security-Policy": PAGE_POLICY},
        )

    def _report(self, body: bytes) -> Response:
        # the report carries its own policy (its inline scripts by hash) in a meta element
        framing = {"Content-Security-Policy": "frame-ancestors 'none'"}
        return Response(200, "text/html; charset=utf-8", body, framing)

    def _error(self, status: int, message: str, api: bool = False) -> Response:
        if api:
            return _json({"error": message}, status)
        return self._page(error_page(status, message, self._store), status)

    def _host_allowed(self) -> bool:
        if not self.server.loopback:
            return True
        host = self.headers.get("Host")
        if host is None:
            return True
        name = host[1:].partition("]")[0] if host.startswith("[") else host.rpartition(":")[0]
        return (name or host).lower() in _LOOPBACK_NAMES | {self.server.host.lower()}

    def _answer(self, response: Response, *, head: bool) -> None:
        self.send_response(response.status)
        headers = {
            "Content-Type": response.content_type,
            "Content-Length": str(len(response.body)),
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            **response.headers,
        }
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(response.body)


def _json(value: Any, status: int = 200) -> Response:
    body = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    return Response(status, "application/json", body)


def _k(query: dict[str, list[str]]) -> int | None:
    text = (query.get("k") or [""])[-1].strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"k={text!r}: give a positive whole number")
    return int(text)
