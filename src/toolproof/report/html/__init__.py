"""The HTML report: one self-contained file about one or more stored runs."""

from toolproof.report.html.render import ReportStats, passk_curve, render_report, write_report

__all__ = ["ReportStats", "passk_curve", "render_report", "write_report"]
