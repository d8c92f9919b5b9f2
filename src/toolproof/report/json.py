"""The run summary as a JSON file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(summary: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n", encoding="utf-8")
