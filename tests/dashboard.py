"""A store filled by real runs and the dashboard served over it: shared by the tests of the
dashboard and of the store's queries."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers import completion, openai_server
from support import MINI_FILES, edit, write_files

from toolproof.runner.run import RunRequest, run_suite
from toolproof.spec.overrides import ModelOverrides
from toolproof.store import Store
from toolproof.suite import load_suite
from toolproof.view import Dashboard, DashboardServer

SCRIPT_LABEL = "<script>alert(1)</script>"
DATA_BLOCK = re.compile(r'<script type="application/json" id="tp-data">(.*?)</script>', re.S)


@dataclass(frozen=True)
class ViewRuns:
    """A store's runs, oldest first: suite mini (oracle, two models, null, an agent whose
    label carries a <script> element, oracle again), then suite shop (oracle)."""

    url: str
    oracle: str
    models: str
    null: str
    scripted: str
    oracle_again: str
    shop: str
    scripted_label: str

    @property
    def mini(self) -> list[str]:
        return [self.oracle, self.models, self.null, self.scripted, self.oracle_again]


def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """alpha looks order B up and says it shipped (passes 'status'); beta never helps."""
    if body["model"] == "alpha" and body["messages"][-1]["role"] != "tool":
        return 200, completion(tool_calls=[{"name": "get_order", "arguments": {"order_id": "B"}}])
    return 200, completion("Order B has shipped." if body["model"] == "alpha" else "No idea.")


def fill_store(url: str, root: Path) -> ViewRuns:
    """Real runs of the mini suite and of a copy named shop, recorded at `url`."""
    mini = load_suite(write_files(root / "mini", MINI_FILES))
    shop_yaml = edit(MINI_FILES["suite.yaml"], "name: mini", "name: shop")
    shop_files = {**MINI_FILES, "suite.yaml": edit(shop_yaml, "tags: [cancel]", "tags: [refund]")}
    shop = load_suite(write_files(root / "shop", shop_files))
    folder = root / "<script>alert(1)<"  # the script file's path is its agent label
    folder.mkdir()
    (folder / "script>").write_text("default:\n  - text: Done.\n", encoding="utf-8")
    scripted = f"scripted:{folder}/script>"
    store = Store(url)

    def run(suite: Any, request: RunRequest) -> str:
        return asyncio.run(run_suite(suite, request, store, fresh=True)).run_id

    oracle = run(mini, RunRequest(agent="oracle"))
    with openai_server(answer) as (base_url, _):
        models = ["openai-compatible/alpha", "openai-compatible/beta"]
        overrides = ModelOverrides(base_url=base_url)
        two = run(mini, RunRequest(models=models, model_flags=overrides))
    null = run(mini, RunRequest(agent="null"))
    script = run(mini, RunRequest(agent=scripted))
    again = run(mini, RunRequest(agent="oracle"))
    shop_run = run(shop, RunRequest(agent="oracle"))
    store.engine.dispose()
    return ViewRuns(url, oracle, two, null, script, again, shop_run, scripted)


@contextmanager
def serving(url: str) -> Iterator[str]:
    """The dashboard of the store at `url` on a free port of 127.0.0.1; yields its address."""
    server = DashboardServer(Dashboard(Store(url)), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        server.dashboard.store.engine.dispose()


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.body)


def get(url: str, host: str | None = None) -> Reply:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return Reply(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as error:
        return Reply(error.code, dict(error.headers), error.read())
