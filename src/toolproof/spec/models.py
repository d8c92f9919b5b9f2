"""The file formats of a suite under one name: `toolproof.spec.models` re-exports the models
of `suite.yaml` and task files from the modules that define them, so code that imports
them from here keeps working.

Where each lives: `suite.py` (`SuiteFile`), `task.py`, `user.py`, `expectations.py`,
`backends.py`, `policy.py`, `model_settings.py`.
"""

from __future__ import annotations

from toolproof.spec.backends import (
    Backend,
    Hooks,
    HookSpec,
    MCPBackend,
    OpenAPIBackend,
    PythonBackend,
    ServiceSpec,
    Template,
)
from toolproof.spec.expectations import (
    CRITERION_NAME,
    OUTCOME_LABEL,
    Action,
    CallSpec,
    CheckSpec,
    Controls,
    Criterion,
    Expectations,
    Fact,
    FactEntry,
    FactSource,
    Refusal,
    StateCheck,
)
from toolproof.spec.model_settings import (
    ModelEntry,
    ModelSettings,
    Price,
    url_problem,
)
from toolproof.spec.policy import (
    ConfirmBeforeWrite,
    IdentifyBeforeAccess,
    NoOtherCustomerData,
    PolicyRuleEntry,
    PolicyRuleSpec,
    ReadBeforeWrite,
    RefuseWithReason,
    RequiredRead,
)
from toolproof.spec.suite import (
    Defaults,
    SuiteFile,
    ToolEntry,
    WorldSpec,
)
from toolproof.spec.task import (
    TASK_ID,
    TaskSpec,
)
from toolproof.spec.user import (
    BUILTIN_PERSONAS,
    PERSONA_NAME,
    SHORTCUTS,
    Match,
    PersonaSpec,
    UserReply,
    UserSpec,
    UserTurn,
    When,
)

__all__ = [
    "BUILTIN_PERSONAS",
    "CRITERION_NAME",
    "OUTCOME_LABEL",
    "PERSONA_NAME",
    "SHORTCUTS",
    "TASK_ID",
    "Action",
    "Backend",
    "CallSpec",
    "CheckSpec",
    "ConfirmBeforeWrite",
    "Controls",
    "Criterion",
    "Defaults",
    "Expectations",
    "Fact",
    "FactEntry",
    "FactSource",
    "HookSpec",
    "Hooks",
    "IdentifyBeforeAccess",
    "MCPBackend",
    "Match",
    "ModelEntry",
    "ModelSettings",
    "NoOtherCustomerData",
    "OpenAPIBackend",
    "PersonaSpec",
    "PolicyRuleEntry",
    "PolicyRuleSpec",
    "Price",
    "PythonBackend",
    "ReadBeforeWrite",
    "Refusal",
    "RefuseWithReason",
    "RequiredRead",
    "ServiceSpec",
    "StateCheck",
    "SuiteFile",
    "TaskSpec",
    "Template",
    "ToolEntry",
    "UserReply",
    "UserSpec",
    "UserTurn",
    "When",
    "WorldSpec",
    "url_problem",
]
