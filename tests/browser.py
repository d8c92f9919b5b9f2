"""A headless Chromium for the tests that open pages in a real browser (the HTML report,
the dashboard). It is Debian's package, installed with apt-get on first use when missing;
the tests that need it skip when that cannot be done."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
]


def install_chromium() -> None:
    """Debian's chromium, when this machine can install packages (root with apt-get)."""
    if CHROMIUM.exists():
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip("chromium is missing and cannot be installed here (needs root and apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            pytest.skip(f"could not install chromium: {done.stderr.strip()[-300:]}")
    if not CHROMIUM.exists():
        pytest.skip("chromium installed, but /usr/bin/chromium is missing")


@dataclass(frozen=True)
class Chromium:
    """Headless Chromium with a throwaway profile."""

    binary: Path
    profile: Path

    def run(self, url: str, *extra: str, timeout: float = 90) -> str:
        command = [
            str(self.binary),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={self.profile}",
            *extra,
            url,
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise AssertionError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
        return done.stdout

    def dump_dom(self, url: str, wait_ms: int = 5000) -> str:
        """The DOM after load and `wait_ms` of virtual time (async work included)."""
        return self.run(url, f"--virtual-time-budget={wait_ms}", "--dump-dom")

    def screenshot(self, url: str, path: Path, width: int, height: int, scale: float) -> None:
        self.run(
            url,
            "--virtual-time-budget=3000",
            f"--window-size={width},{height}",
            f"--force-device-scale-factor={scale}",
            f"--screenshot={path}",
        )
