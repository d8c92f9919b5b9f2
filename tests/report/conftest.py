"""Fixtures for the HTML report tests: a real store made by real trials, and a PNG reader
(the headless Chromium to open the report in is the `chromium` fixture of tests/conftest.py).

The store holds three runs of a small suite with a fault profile, a drift variant and a load
level: the retrying oracle under `--profile full`, the null agent, and a scripted agent whose
messages and tool arguments carry HTML/JS injection payloads.
"""

from __future__ import annotations

import asyncio
import json
import struct
import textwrap
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import MINI_TOOLS

from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite

# Payloads: each one, if it ever ran, would leave a mark in the DOM that --dump-dom shows.
SCRIPT_PAYLOAD = (
    "<script>window.__pwned=1;document.documentElement.setAttribute('data-pwned','script')</script>"
)
IMG_PAYLOAD = (
    '</script><img src=x onerror="window.__pwned=2;'
    "document.documentElement.setAttribute('data-pwned','img')\">"
)
REASON_PAYLOAD = (
    "</script><svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\">"
)

TOOLS = MINI_TOOLS

SUITE = """
name: shop
version: "3"
policy: policy.md
policy_rules: [confirm_before_write]
world:
  data: [orders.yaml]
backends:
  shop: {type: python, module: tools.py}
tools:
  get_order: {tier: 1, weight: 0.7}
  cancel_order: {tier: 3, weight: 0.3}
faults:
  profiles:
    production:
      - {kind: rate_limit, tools: [get_order], rate: 0.4, retry_after_s: 0.1}
      - {kind: server_error, rate: 0.2}
drift:
  v2-api:
    - {op: rename_tool, tool: get_order, to: fetch_order}
load:
  levels: [1, 3]
tasks:
  - id: cancel
    tags: [cancel, write]
    user:
      opening: "Please call off order A"
      replies:
        - {when: asks_confirmation, say: "Yes, go ahead."}
    expect:
      actions:
        - {tool: get_order, args: {order_id: A}}
        - {tool: cancel_order, args: {order_id: A}}
      must_say: ["cancelled"]
  - id: status
    tags: [lookup]
    user: {opening: "Where is order B?"}
    expect:
      actions: [{tool: get_order, args: {order_id: B}}]
      calls: [{tool: get_order, args: {order_id: B}}]
      must_say: [shipped]
  - id: status-c
    tags: [lookup]
    user: {opening: "And order C?"}
    expect:
      actions: [{tool: get_order, args: {order_id: C}}]
      must_say: [pending]
defaults: {trials: 4, k: [1, 2, 4], concurrency: 4, seed: 3}
"""

# JSON strings are YAML strings: the payloads go in exactly as written
SCRIPT = f"""
latency_s: 0.0
default:
  - tool_calls: [{{name: get_order, raw_arguments: "{{not json"}}]
    usage: {{input_tokens: 1000, output_tokens: 20}}
  - tool_calls: [{{name: get_order, arguments: {{order_id: {json.dumps(IMG_PAYLOAD)}}}}}]
    usage: {{input_tokens: 1100, output_tokens: 20}}
  - text: {json.dumps("Done. " + SCRIPT_PAYLOAD + " " + IMG_PAYLOAD)}
    usage: {{input_tokens: 1200, output_tokens: 30}}
"""

FILES = {
    "suite.yaml": SUITE,
    "orders.yaml": "A: {status: pending}\nB: {status: shipped}\nC: {status: pending}\n",
    "policy.md": "You are a support agent. Confirm before any change.\n",
    "tools.py": TOOLS,
}


@dataclass(frozen=True)
class ReportStore:
    """The store and its runs: the retrying oracle (full profile), null, and the script;
    and the payloads the scripted agent's messages and a failure reason carry."""

    url: str
    oracle: str
    null: str
    scripted: str
    payloads: tuple[str, ...] = (SCRIPT_PAYLOAD, IMG_PAYLOAD, REASON_PAYLOAD)

    @property
    def runs(self) -> list[str]:
        return [self.oracle, self.null, self.scripted]


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def report_store(tmp_path_factory: pytest.TempPathFactory) -> ReportStore:
    """Real trials of the shop suite, recorded in a SQLite store."""
    root = tmp_path_factory.mktemp("report-store")
    suite = load_suite(_write(root / "shop", FILES))
    script = root / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    url = f"sqlite:///{root / 'results.db'}"
    store = Store(url)
    full = RunRequest(agent="retrying-oracle", profile="full", time_scale=0.001)
    oracle = asyncio.run(run_suite(suite, full, store)).run_id
    null = asyncio.run(run_suite(suite, RunRequest(agent="null"), store)).run_id
    scripted_request = RunRequest(agent=f"scripted:{script}", faults="production", time_scale=0.001)
    scripted = asyncio.run(run_suite(suite, scripted_request, store)).run_id
    # a failure reason carrying markup too (as a re-grade would store it)
    row_id, result = next(store.results(null))
    store.replace(row_id, result.model_copy(update={"reason": f"must_say: {REASON_PAYLOAD}"}))
    return ReportStore(url=url, oracle=oracle, null=null, scripted=scripted)


# ---------------------------------------------------------------- PNG


@pytest.fixture(scope="session")
def png() -> Callable[[Path], Image]:
    """The PNG reader below, as a fixture (test modules do not import conftest by name)."""
    return read_png


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    pixels: bytes  # rows of width * channels bytes, unfiltered

    def pixel(self, x: int, y: int) -> tuple[int, ...]:
        start = (y * self.width + x) * self.channels
        return tuple(self.pixels[start : start + self.channels])


def read_png(path: Path) -> Image:
    """Decode an 8-bit RGB or RGBA PNG (what Chromium writes) with zlib: no imaging library."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    pos, idat = 8, []
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, "unexpected PNG format"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    assert len(raw) == height * (stride + 1), "PNG data has the wrong size"
    out = bytearray(height * stride)
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out[y * stride : (y + 1) * stride] = line
        prev = line
    return Image(width, height, channels, bytes(out))
