"""tau2-bench's airline, retail and telecom domains as toolproof suites: their tasks, tau2's
own tool implementations over a JSON world (the user's phone too, for telecom), and the
verdict agreement with tau2's evaluator (`toolproof import tau2`; docs/tau2.md)."""

from toolproof.importers.tau2.data import DOMAINS, REFUSED, Domain, load_domain
from toolproof.importers.tau2.state import asserted, invoke, invoke_user
from toolproof.importers.tau2.suite import Imported, import_tau2

__all__ = [
    "DOMAINS",
    "REFUSED",
    "Domain",
    "Imported",
    "asserted",
    "import_tau2",
    "invoke",
    "invoke_user",
    "load_domain",
]
