"""`toolproof.spec.models` keeps every name it had before the file formats were split into
modules by what they describe: code importing from it keeps working, and gets the very
classes the rest of toolproof uses."""

from __future__ import annotations

import importlib

import toolproof.spec.models as models

OLD_NAMES = {
    "backends": "Backend HookSpec Hooks MCPBackend OpenAPIBackend PythonBackend ServiceSpec"
    " Template",
    "expectations": "Action CRITERION_NAME CallSpec CheckSpec Controls Criterion Expectations"
    " Fact FactEntry FactSource OUTCOME_LABEL Refusal StateCheck",
    "model_settings": "ModelEntry ModelSettings Price url_problem",
    "policy": "ConfirmBeforeWrite IdentifyBeforeAccess NoOtherCustomerData"
    " PolicyRuleEntry PolicyRuleSpec ReadBeforeWrite RefuseWithReason RequiredRead",
    "suite": "Defaults SuiteFile ToolEntry WorldSpec",
    "task": "TASK_ID TaskSpec",
    "user": "BUILTIN_PERSONAS Match PERSONA_NAME PersonaSpec SHORTCUTS UserReply UserSpec"
    " UserTurn When",
}
"""Every public name `toolproof.spec.models` defined before the split, by its home now."""


def test_every_old_name_is_the_object_of_its_new_home() -> None:
    for home, names in OLD_NAMES.items():
        module = importlib.import_module(f"toolproof.spec.{home}")
        for name in names.split():
            assert getattr(models, name) is getattr(module, name), (home, name)


def test_the_old_module_exports_exactly_the_old_names() -> None:
    old = sorted(name for names in OLD_NAMES.values() for name in names.split())
    assert sorted(models.__all__) == old
    assert len(old) == 48


def test_a_suite_file_validated_through_the_old_module_is_the_suite_model() -> None:
    suite = models.SuiteFile.model_validate(
        {
            "name": "s",
            "backends": {"t": {"type": "python", "module": "tools.py"}},
            "tools": {"get_order": {"tier": 1}},
            "tasks": [{"id": "a", "user": {"opening": "hi"}, "expect": {"must_say": ["x"]}}],
        }
    )
    assert isinstance(suite.tasks[0], models.TaskSpec)
    assert suite.tools["get_order"].tier == 1
    assert isinstance(suite.backends["t"], models.PythonBackend)
