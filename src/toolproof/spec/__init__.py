"""The file formats of a suite (suite.yaml, task files) and reading them with located errors.

A leaf: nothing here imports the runtime, gateway, models, runner, store or CI code. A suite
is loaded (its tools discovered, its live systems started) by `toolproof.suite.load_suite`.
"""

from toolproof.spec.models import Expectations, SuiteFile, TaskSpec
from toolproof.spec.read import read_suite
from toolproof.spec.source import SuiteSource, Task

__all__ = ["Expectations", "SuiteFile", "SuiteSource", "Task", "TaskSpec", "read_suite"]
