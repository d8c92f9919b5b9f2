"""Suite and task file formats, and loading them with located errors."""

from toolproof.spec.loader import load_suite
from toolproof.spec.models import Expectations, SuiteFile, TaskSpec
from toolproof.spec.suite import Suite, Task, ToolBinding

__all__ = ["Expectations", "Suite", "SuiteFile", "Task", "TaskSpec", "ToolBinding", "load_suite"]
