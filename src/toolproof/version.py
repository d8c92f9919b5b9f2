"""toolproof's version: what a run, a report and a manifest record as the version that made it."""

__version__ = "0.1.0"
