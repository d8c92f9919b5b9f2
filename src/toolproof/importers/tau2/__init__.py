"""tau2-bench's airline and retail domains as toolproof suites: their tasks, tau2's own tool
implementations over a JSON world, and the verdict agreement with tau2's evaluator
(`toolproof import tau2`; docs/tau2.md)."""

from toolproof.importers.tau2.data import DOMAINS, REFUSED, Domain, load_domain
from toolproof.importers.tau2.state import invoke
from toolproof.importers.tau2.suite import Imported, import_tau2

__all__ = ["DOMAINS", "REFUSED", "Domain", "Imported", "import_tau2", "invoke", "load_domain"]
