"""Running trials: planning, one trial, the local executor, whole runs."""

from toolproof.runner.plan import TrialSpec, derive_seed, plan
from toolproof.runner.run import RunReport, RunRequest, RunStart, run_suite
from toolproof.runner.trial import Trial, run_trial

__all__ = [
    "RunReport",
    "RunRequest",
    "RunStart",
    "Trial",
    "TrialSpec",
    "derive_seed",
    "plan",
    "run_suite",
    "run_trial",
]
