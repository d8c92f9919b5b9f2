"""Everything live: services, MCP connections, HTTP channels, the host loop, per-trial
environments, hooks and checks, and the discovery of a suite's tools (`discover`).

`toolproof.tools` never imports this package: a tool of a real system is handed the way to
reach it (an MCP call function, an HTTP sender) when discovery builds it.
"""

from toolproof.runtime.core import Runtime, services_on_demand
from toolproof.runtime.discovery import Discovered, discover
from toolproof.runtime.trial import TrialEnvironment

__all__ = ["Discovered", "Runtime", "TrialEnvironment", "discover", "services_on_demand"]
