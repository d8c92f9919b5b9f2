"""Numbers as tables and reports show them."""

from __future__ import annotations


def fmt(value: float | None, digits: int = 3, signed: bool = False) -> str:
    """A number for tables; '-' when not measured."""
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_p(p: float | None) -> str:
    """A p-value for tables: 4 decimals, or '<0.0001'."""
    if p is None:
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def variant_suffix(variant: str) -> str:
    """' [faults:production]' after a name, or nothing for the clean variant."""
    return f" [{variant}]" if variant else ""
