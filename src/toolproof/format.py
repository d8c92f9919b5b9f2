"""Numbers as toolproof shows them: in tables, reports and the sentences of a warning or a
gate condition. One place, so a value reads the same wherever it appears. And text that
toolproof did not write, made inert before it reaches a terminal (`inert`)."""

from __future__ import annotations

import re

_CONTROL = r"\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
UNSAFE = re.compile(f"[{_CONTROL}]+")
"""Runs of what a terminal acts on rather than shows: C0 and C1 control characters (ESC
starts every escape sequence; CSI and OSC have one-character C1 forms) and the Unicode bidi
overrides and isolates, which reorder what follows. Newline and tab are left out: layout."""
UNSAFE_IN_LINE = re.compile(rf"[\t\n{_CONTROL}]+")
"""`UNSAFE`, newline and tab too: for text that must stay on one line."""


def inert(text: str, *, layout: bool = True) -> str:
    """`text` with every control character and bidi override shown rather than obeyed: ESC
    as `\\x1b`, BEL as `\\x07`, CSI (U+009B) as `\\x9b`, U+202E as `\\u202e`. What an
    escape sequence says after its ESC is plain text, so once the ESC is shown the sequence
    is too: it cannot clear the screen, set the clipboard or the window title, or hide a
    link. Letters of any script pass unchanged. `layout`: keep newline and tab (a message
    of several lines); without it they are shown too. The result is printable, so `inert`
    of it is itself."""
    pattern = UNSAFE if layout else UNSAFE_IN_LINE
    return pattern.sub(shown, text)


def shown(match: re.Match[str]) -> str:
    """The visible form of a run of characters a terminal would obey."""
    return "".join(
        f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" for c in match.group()
    )


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
