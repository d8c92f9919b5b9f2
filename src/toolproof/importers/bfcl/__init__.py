"""BFCL v4's multi-turn categories as toolproof suites: the entries, their executable
backends, and their ground truth (`toolproof import bfcl`; docs/bfcl.md)."""

from toolproof.importers.bfcl.data import CATEGORIES, Call, Entry, load_entries, parse_call
from toolproof.importers.bfcl.state import decode, encode, invoke
from toolproof.importers.bfcl.suite import Imported, import_bfcl

__all__ = [
    "CATEGORIES",
    "Call",
    "Entry",
    "Imported",
    "decode",
    "encode",
    "import_bfcl",
    "invoke",
    "load_entries",
    "parse_call",
]
