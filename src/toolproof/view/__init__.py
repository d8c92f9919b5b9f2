"""The local dashboard over a results store: `toolproof view`."""

from toolproof.view.data import Dashboard, RunFilter
from toolproof.view.server import DashboardServer

__all__ = ["Dashboard", "DashboardServer", "RunFilter"]
