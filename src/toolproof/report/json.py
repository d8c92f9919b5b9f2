"""Results as JSON files: the run summary, the gate's result, a comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolproof.errors import UsageError


def write_json(data: dict[str, Any], path: Path, flag: str = "--json") -> None:
    """Write a JSON file (its folder made); an unwritable path is a usage error naming `flag`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None
