"""Running trials: a run's configuration, building its trials, planning, one trial, the
executors, whole runs."""

from toolproof.runner.config import RunRequest
from toolproof.runner.plan import PlannedTrial, derive_seed, plan
from toolproof.runner.run import RunReport, RunStart, run_suite
from toolproof.runner.trial import Trial, run_trial
from toolproof.spec.overrides import ModelOverrides

__all__ = [
    "ModelOverrides",
    "PlannedTrial",
    "RunReport",
    "RunRequest",
    "RunStart",
    "Trial",
    "derive_seed",
    "plan",
    "run_suite",
    "run_trial",
]
