"""Shared test fixtures: a small real suite written to a temporary folder, and a headless
Chromium."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import CHROMIUM, Chromium, install_chromium
from support import MINI_FILES, write_files

from toolproof.suite import Suite, load_suite

# The embedded model's disk cache of long prompts stays out of the tests (and of the home
# folder); tests/models/test_local.py turns it on where it is the subject.
os.environ["TOOLPROOF_CACHE_DIR"] = "off"

# lanes: a test not marked slow starts no process and loads no embedded model (tests/lanes.py);
# pytester: tests/test_lanes.py runs a pytest session of its own to show it.
pytest_plugins = ["lanes", "pytester"]


@pytest.fixture
def mini_dir(tmp_path: Path) -> Path:
    return write_files(tmp_path / "mini", MINI_FILES)


@pytest.fixture
def mini(mini_dir: Path) -> Suite:
    return load_suite(mini_dir)


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    install_chromium()
    yield Chromium(CHROMIUM, tmp_path_factory.mktemp("chromium-profile"))
