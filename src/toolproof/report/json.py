"""Writing what a command produces to a file: JSON, and the text of the other formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolproof.files import write_atomic


def write_text(path: str | Path, text: str, flag: str) -> None:
    """Write a file (its folder made) whole or not at all: into a temporary file beside it,
    renamed into place (`write_atomic`); an unwritable path is a usage error naming `flag`."""
    write_atomic(path, text, flag)


def write_json(data: dict[str, Any], path: str | Path, flag: str = "--json") -> None:
    """Write JSON data (the run summary, the gate's result, a comparison), indented."""
    write_text(path, json.dumps(data, indent=2) + "\n", flag)
