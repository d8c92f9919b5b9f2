"""The loaded suite: its tools (`tools:`) bound to their backends, its tasks, its world, its
runtime."""

from toolproof.spec.task import Task
from toolproof.suite.load import load_suite
from toolproof.suite.loaded import Suite
from toolproof.tools.binding import ToolBinding

__all__ = ["Suite", "Task", "ToolBinding", "load_suite"]
