"""Numbers as toolproof shows them: in tables, reports and the sentences of a warning or a
gate condition. One place, so a value reads the same wherever it appears."""

from __future__ import annotations


def fmt(value: float | None, digits: int = 3, signed: bool = False) -> str:
    """A number for tables; '-' when not measured."""
    if value is None:
        return "-"
    return fixed(value, digits, signed)


def fixed(value: float, digits: int = 3, signed: bool = False) -> str:
    """`value` with `digits` decimals, never `-0.000`: a value that rounds to zero (a
    negative zero, or a float's last bit of error such as -1.8e-16) is shown as zero, since
    its sign says nothing."""
    shown = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    if float(shown) == 0:
        return f"{0.0:+.{digits}f}" if signed else f"{0.0:.{digits}f}"
    return shown


def fmt_p(p: float | None) -> str:
    """A p-value for tables: 4 decimals, or '<0.0001'."""
    if p is None:
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def p_phrase(p: float | None) -> str:
    """A p-value in a sentence: 'p = 0.0312', 'p < 0.0001', or 'p not computed'."""
    if p is None:
        return "p not computed"
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.4f}"


def variant_suffix(variant: str) -> str:
    """' [faults:production]' after a name, or nothing for the clean variant."""
    return f" [{variant}]" if variant else ""
