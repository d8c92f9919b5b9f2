"""OpenTelemetry in and out: a run's trials exported as GenAI spans, production traces read
back as transcripts (for drafting tasks from incidents and for monitoring)."""

from __future__ import annotations

from toolproof.telemetry.export import OtelOptions, TraceExport, check_options, open_export

__all__ = ["OtelOptions", "TraceExport", "check_options", "open_export"]
