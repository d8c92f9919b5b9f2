"""Writing what a command produces to a file: JSON, and the text of the other formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolproof.errors import UsageError


def write_text(path: str | Path, text: str, flag: str) -> None:
    """Write a file (its folder made); an unwritable path is a usage error naming `flag`."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None


def write_json(data: dict[str, Any], path: str | Path, flag: str = "--json") -> None:
    """Write JSON data (the run summary, the gate's result, a comparison), indented."""
    write_text(path, json.dumps(data, indent=2) + "\n", flag)
