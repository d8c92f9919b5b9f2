"""Thresholds on a run's metrics: `--fail-under pass^5=0.85` is the first CI gate."""

from __future__ import annotations

import re
from typing import Any

from toolproof.errors import UsageError

_THRESHOLD = re.compile(r"^\s*([A-Za-z_@^0-9]+)\s*=\s*([0-9]*\.?[0-9]+)\s*$")
_K = re.compile(r"^(?:pass@|pass\^|reliability_tax@)(\d+)")
_KNOWN = re.compile(r"^(pass@\d+|pass\^\d+(_strict)?|reliability_tax@\d+)$")


def parse_threshold(text: str) -> tuple[str, float]:
    """'pass^5=0.85' -> ('pass^5', 0.85)."""
    match = _THRESHOLD.match(text)
    if not match:
        raise UsageError(f"--fail-under {text!r}: expected METRIC=VALUE, for example pass^5=0.85")
    if not _KNOWN.match(match.group(1)):
        raise UsageError(
            f"--fail-under {match.group(1)}: unknown metric; use pass@K, pass^K, pass^K_strict "
            "or reliability_tax@K"
        )
    return match.group(1), float(match.group(2))


def ks_needed(thresholds: list[tuple[str, float]]) -> list[int]:
    """The k values the thresholds name, so the run computes them."""
    return [int(m.group(1)) for name, _ in thresholds if (m := _K.match(name))]


def failures(summary: dict[str, Any], thresholds: list[tuple[str, float]]) -> list[str]:
    """One line per threshold that does not hold, for every model of the run."""
    if not summary["models"]:
        raise UsageError("--fail-under: the run has no finished trial, so nothing to check")
    out = []
    several = len(summary["models"]) > 1
    for entry in summary["models"]:
        metrics = entry["metrics"]
        prefix = f"{entry['model']}: " if several else ""
        for name, floor in thresholds:
            if name not in metrics:
                known = ", ".join(metrics)
                raise UsageError(f"--fail-under {name}: no such metric in this run (have: {known})")
            if metrics[name] < floor:
                out.append(f"{prefix}{name} = {metrics[name]:.3f} is below {floor}")
    return out
