"""The file formats of a suite: `suite.yaml` and task files, as pydantic models.

`toolproof schema` prints the JSON Schema of these models for editor completion.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from toolproof.spec.base import Numbers, Strict
from toolproof.spec.conditions import DriftTransform, FaultsSpec, LoadSpec, ScoreSpec
from toolproof.spec.gate import GateSpec
from toolproof.spec.limits import (
    MAX_CONCURRENCY,
    MAX_SECONDS,
    MAX_SEED,
    MAX_STEPS,
    MAX_TRIALS,
)
from toolproof.spec.placeholders import Scope

TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")

Template = tuple[str, Any, Scope]
"""A configured value that may hold placeholders: (its field, its value, when it expands)."""


# ---------------------------------------------------------------- suite.yaml


class PythonBackend(Strict):
    """Tools written as Python functions decorated with `@toolproof.tool`."""

    type: Literal["python"]
    module: str = Field(description="Python file, relative to the suite folder.")
    timeout_s: float = Field(
        30.0,
        gt=0,
        le=MAX_SECONDS,
        description="Seconds one tool call may take (a tool's own @tool(timeout_s=...) wins); "
        "a call still running then ends its trial as failed, blamed on the environment.",
    )

    def templates(self) -> list[Template]:
        return []


class MCPBackend(Strict):
    """An MCP server: a command spoken to over stdio, or a streamable HTTP endpoint."""

    type: Literal["mcp"]
    command: list[str] | None = Field(
        None,
        min_length=1,
        description="Program and arguments of a stdio server; 'python' is toolproof's Python.",
    )
    url: str | None = Field(None, description="Streamable HTTP endpoint, like http://host/mcp.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP headers (url only); ${ENV} is expanded."
    )
    env: list[str] | None = Field(
        None, description="Environment variables passed on to a stdio server (an allow-list)."
    )
    set_env: dict[str, str] = Field(
        default_factory=dict, description="Environment variables set for a stdio server."
    )
    cwd: str | None = Field(None, description="Working folder of a stdio server.")
    per_trial: bool = Field(
        False, description="A fresh server for every trial (stdio only), in its trial_dir."
    )
    bind: dict[str, Any] = Field(
        default_factory=dict,
        description="Arguments toolproof fills in on every call, hidden from the agent.",
    )
    start_timeout_s: float = Field(60.0, gt=0)
    call_timeout_s: float = Field(120.0, gt=0)

    @model_validator(mode="after")
    def _one_transport(self) -> MCPBackend:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        if self.url is not None and (self.env is not None or self.set_env or self.cwd):
            raise ValueError("env, set_env and cwd are for stdio servers (command)")
        if self.command is not None and self.headers:
            raise ValueError("headers are for HTTP servers (url)")
        if self.per_trial and self.command is None:
            raise ValueError("per_trial needs a stdio server (command)")
        return self

    def templates(self) -> list[Template]:
        """A server per trial expands its launch with the trial's values; `bind` is filled
        in for every call, inside a trial."""
        launch: Scope = "trial" if self.per_trial else "run"
        return [
            ("command", self.command, launch),
            ("cwd", self.cwd, launch),
            ("set_env", self.set_env, launch),
            ("url", self.url, "run"),
            ("headers", self.headers, "run"),
            ("bind", self.bind, "trial"),
        ]


class OpenAPIBackend(Strict):
    """An HTTP service described by an OpenAPI 3 document: each operation is a tool."""

    type: Literal["openapi"]
    spec: str = Field(description="OpenAPI document: a file of the suite, or an http(s) URL.")
    base_url: str | None = Field(None, description="Defaults to the document's first server.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="Sent with every call (auth); ${ENV} is expanded."
    )
    timeout_s: float = Field(30.0, gt=0)

    def templates(self) -> list[Template]:
        """Headers may name the calling trial's values (a tenant: `{trial_id}`)."""
        return [
            ("spec", self.spec, "run"),
            ("base_url", self.base_url, "run"),
            ("headers", self.headers, "trial"),
        ]


Backend = Annotated[PythonBackend | MCPBackend | OpenAPIBackend, Field(discriminator="type")]


class HookSpec(Strict):
    """A step run for every trial: a Python function or a command."""

    python: str | None = Field(None, description="'file.py:function'.")
    command: list[str] | None = Field(None, min_length=1)
    timeout_s: float = Field(60.0, gt=0)

    @model_validator(mode="after")
    def _one_kind(self) -> HookSpec:
        if (self.python is None) == (self.command is None):
            raise ValueError("give exactly one of 'python' or 'command'")
        return self


class Hooks(Strict):
    """Per-trial steps around the conversation, each in the trial's fresh trial_dir."""

    setup: HookSpec | None = Field(None, description="Before the trial (build its state).")
    teardown: HookSpec | None = Field(None, description="After the trial and its checks.")


class ServiceSpec(Strict):
    """A local service started on 127.0.0.1 before the run and stopped after it."""

    command: list[str] = Field(min_length=1, description="'{port}' is the service's port.")
    cwd: str | None = Field(None, description="Working folder, relative to the suite.")
    port: int | None = Field(None, ge=1, le=65535, description="Default: a free port.")
    ready: str | None = Field(
        None, description="URL or path polled until it answers; default: the port accepts."
    )
    env: list[str] | None = Field(None, description="Environment variables passed on.")
    set_env: dict[str, str] = Field(default_factory=dict)
    start_timeout_s: float = Field(30.0, gt=0)

    def templates(self) -> list[tuple[str, Any]]:
        """A service starts first, so it knows only `{suite_dir}`, `{python}`, `{port}`."""
        return [
            ("command", self.command),
            ("cwd", self.cwd),
            ("ready", self.ready),
            ("set_env", self.set_env),
        ]


class ToolEntry(Strict):
    """One tool of the spectra: where it comes from, how critical and how common it is."""

    backend: str | None = Field(None, description="Backend name; optional with one backend.")
    tier: Literal[1, 2, 3] = Field(
        description="1: the tools that carry most calls; 2: regular; 3: rare but critical."
    )
    weight: float | None = Field(None, ge=0, description="Share of production calls.")
    write: bool | None = Field(None, description="Overrides the tool's own read/write kind.")
    description: str | None = Field(None, description="Overrides what the model is told.")
    parameters: dict[str, Any] | None = Field(
        None, description="JSON Schema of the arguments; overrides the derived one."
    )


class WorldSpec(Strict):
    """The suite's initial state: data files merged in order, then an optional factory."""

    data: list[str] = Field(
        default_factory=list,
        description="JSON/YAML files or folders; each file becomes a top-level key (its stem).",
    )
    factory: str | None = Field(
        None, description="'file.py:function' returning a dict merged over the data."
    )


class Defaults(Strict):
    """Run settings a command line may override."""

    trials: int = Field(5, ge=1, le=MAX_TRIALS)
    k: list[int] = Field(default_factory=lambda: [1, 5])
    seed: int = Field(0, ge=0, le=MAX_SEED)
    max_steps: int = Field(30, ge=1, le=MAX_STEPS, description="Model calls allowed per trial.")
    concurrency: int = Field(8, ge=1, le=MAX_CONCURRENCY)

    @field_validator("k")
    @classmethod
    def _positive_k(cls, value: list[int]) -> list[int]:
        if not value or any(not 1 <= k <= MAX_TRIALS for k in value):
            raise ValueError(f"k values must be whole numbers from 1 to {MAX_TRIALS:,}")
        return sorted(set(value))


class ModelSettings(Numbers):
    """Per-model request settings, from the suite or the command line."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = None
    max_tokens: int | None = None
    tool_choice: str | None = Field(None, description="auto, required or none")
    parallel_tool_calls: bool | None = None
    seed: int | None = Field(
        None,
        description="A fixed sampling seed for every call; by default each trial's calls "
        "get a seed derived from the trial's seed, where the provider accepts one.",
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Provider parameters passed through as they are."
    )


class Price(Strict):
    """USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached: float | None = Field(None, ge=0, description="Cached input; defaults to input.")


class ModelEntry(ModelSettings):
    """How to reach and call one model: settings plus endpoint details."""

    base_url: str | None = Field(None, description="For openai-compatible servers.")
    headers: dict[str, str] = Field(default_factory=dict)
    api_key_env: str | None = Field(None, description="Environment variable holding the key.")
    prompted: bool = Field(
        False, description="Describe tools in the prompt, parse calls from text."
    )
    max_concurrency: int | None = Field(
        None,
        ge=1,
        description="Starting limit of calls in flight (default: the run's concurrency).",
    )
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="Seconds one request may take (default 120); then it is retried as a "
        "timeout, and the trial is infra_error once the retries are spent.",
    )
    n_threads: int | None = Field(
        None, ge=1, description="CPU threads for a local model (default: 2, at most the CPUs)."
    )
    n_ctx: int | None = Field(
        None, ge=256, description="Context window in tokens of a local model (default 8192)."
    )

    @field_validator("base_url")
    @classmethod
    def _an_http_url(cls, value: str | None) -> str | None:
        problem = None if value is None else url_problem(value)
        if problem:
            raise ValueError(f"{value!r} {problem}")
        return value


def url_problem(url: str) -> str | None:
    """What keeps `url` from being a base URL a client can call, or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError as exc:
        return f"is not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in url:
        return "is not a URL: give http:// or https:// and a host, as in http://127.0.0.1:8000/v1"
    return None


# ---------------------------------------------------------------- policy rules


class ConfirmBeforeWrite(Strict):
    """Every call of a write tool follows the agent's request for confirmation and the
    user's yes."""

    rule: Literal["confirm_before_write"]


class IdentifyBeforeAccess(Strict):
    """No tool reaches into an account before the user has been identified."""

    rule: Literal["identify_before_access"]
    identify: list[str] = Field(
        min_length=1,
        description="Read tools whose successful call identifies the user (find_customer).",
    )
    access: list[str] = Field(
        min_length=1,
        description="Tools that reach into an account: none may be called before the user "
        "is identified.",
    )
    user_given: bool = Field(
        True,
        description="An identifying call counts only when one of its argument values is "
        "something the user said before it (the email they gave), not a value the agent "
        "found or made up.",
    )


class NoOtherCustomerData(Strict):
    """The agent never tells the user data of a record that is not the user's own."""

    rule: Literal["no_other_customer_data"]
    identify: list[str] = Field(
        min_length=1,
        description="Read tools that identify the user: the gold actions' calls of them name "
        "the user's own account (unless the task says whose it is: user.owns).",
    )
    owner: str = Field(
        "customer_id", description="The field that names a record's owner in tool results."
    )
    fields: list[str] | None = Field(
        None,
        description="Only these fields of another's record are theirs; default: every field "
        "(contact details, orders with their status, dates, totals and items, tier, ...).",
    )
    public: list[str] = Field(
        default_factory=list,
        description="Fields that are no one's data even in another's record (a product name).",
    )
    user_given: bool = Field(
        True,
        description="Without a world to derive the user's account from: an identifying call "
        "names it only on a value the user said.",
    )


class RequiredRead(Strict):
    """A read that must succeed before a write, on the same record."""

    write: str = Field(description="The write tool.")
    read: str = Field(description="The read tool that must succeed before each call of it.")
    match: dict[str, str] = Field(
        default_factory=dict,
        description="Write argument -> the read's argument or result field that must hold "
        "the same value ({order_id: order_no}); empty: any successful call of the read.",
    )


class ReadBeforeWrite(Strict):
    """Writes the policy allows only after a check: the read must come first."""

    rule: Literal["read_before_write"]
    require: list[RequiredRead] = Field(min_length=1)


class RefuseWithReason(Strict):
    """A refusal says why; a request a system refused is answered with the reason."""

    rule: Literal["refuse_with_reason"]
    errors: list[str] = Field(
        default_factory=list,
        description="Tool error kinds by which a system refuses a request (not_eligible, "
        "invalid_state): the agent's next message must say why.",
    )
    reasons: list[str] | None = Field(
        None,
        description="Words or phrases that state a reason; default: because, since, "
        "policy, only, eligible, window, already, ... (docs/suite-format.md).",
    )


PolicyRuleSpec = Annotated[
    ConfirmBeforeWrite
    | IdentifyBeforeAccess
    | NoOtherCustomerData
    | ReadBeforeWrite
    | RefuseWithReason,
    Field(discriminator="rule"),
]

POLICY_RULES: tuple[str, ...] = (
    "confirm_before_write",
    "identify_before_access",
    "no_other_customer_data",
    "read_before_write",
    "refuse_with_reason",
)


def _rule_entry(value: Any) -> Any:
    """A rule given by its name alone (`- confirm_before_write`) is that rule with its
    defaults; an unknown name says which rules exist."""
    name = (
        value if isinstance(value, str) else value.get("rule") if isinstance(value, dict) else None
    )
    if isinstance(name, str) and name not in POLICY_RULES:
        raise ValueError(f"unknown policy rule '{name}'; rules: {', '.join(POLICY_RULES)}")
    return {"rule": value} if isinstance(value, str) else value


PolicyRuleEntry = Annotated[PolicyRuleSpec, BeforeValidator(_rule_entry)]

BUILTIN_PERSONAS = (
    "cooperative",
    "corrector",
    "ambiguous",
    "contradictory",
    "topic-switcher",
    "terse",
    "impatient",
)
"""The personas toolproof plays without being told how (toolproof.users.personas)."""

PERSONA_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


class PersonaSpec(Strict):
    """A suite's own persona: built-ins applied in order, and its own words for the scripted
    user (`prefix`, `turns`) and for a simulated user (`prompt`)."""

    description: str = ""
    use: list[str] = Field(
        default_factory=list, description="Built-in personas applied in order, e.g. [terse]."
    )
    prompt: str = Field("", description="Said to a simulated user about its manner.")
    prefix: str = Field("", description="Said before the task's opening, in the same message.")
    turns: list[UserTurn] = Field(
        default_factory=list, description="Said after the opening, before the task's own turns."
    )

    @field_validator("use")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [name for name in value if name not in BUILTIN_PERSONAS]
        if unknown:
            raise ValueError(
                f"unknown built-in persona {unknown[0]!r}; built-ins: {', '.join(BUILTIN_PERSONAS)}"
            )
        return value


class SuiteFile(Strict):
    """`suite.yaml`."""

    name: str
    version: str = "1"
    description: str = ""
    policy: str | None = Field(None, description="Markdown file: the agent's system prompt.")
    allow_outside: list[str] = Field(
        default_factory=list,
        description="Folders outside the suite folder that its files (policy, data, tasks, "
        "Python modules, OpenAPI documents) may come from; relative to the suite folder.",
    )
    policy_rules: list[PolicyRuleEntry] = Field(
        default_factory=list,
        description="Rules checked on every task's transcript: a rule's name, or its name "
        "under `rule:` with its settings.",
    )
    world: WorldSpec = Field(default_factory=WorldSpec)
    services: dict[str, ServiceSpec] = Field(
        default_factory=dict, description="Local services started before the run."
    )
    backends: dict[str, Backend]
    hooks: Hooks = Field(default_factory=Hooks)
    tools: dict[str, ToolEntry]
    tasks: list[str | TaskSpec] = Field(
        description="Task files (globs allowed) or inline tasks, in order."
    )
    defaults: Defaults = Field(default_factory=Defaults)
    models: dict[str, ModelEntry] = Field(
        default_factory=dict, description="Per-model settings, keyed by provider/model."
    )
    prices: dict[str, Price] = Field(
        default_factory=dict, description="USD per million tokens; overrides bundled prices."
    )
    faults: FaultsSpec = Field(default_factory=FaultsSpec)
    drift: dict[str, list[DriftTransform]] = Field(
        default_factory=dict, description="Schema drift variants by name."
    )
    load: LoadSpec | None = None
    score: ScoreSpec = Field(default_factory=ScoreSpec)
    gate: GateSpec | None = Field(
        None, description="What a run must show before its model may ship (toolproof gate)."
    )
    judge: str | None = Field(
        None, description="provider/model grading rubric criteria (run --judge-model wins)."
    )

    @field_validator("policy_rules")
    @classmethod
    def _rules_once(cls, rules: list[PolicyRuleSpec]) -> list[PolicyRuleSpec]:
        names = [rule.rule for rule in rules]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"policy rule '{twice[0]}' is given twice; give it once")
        return rules

    def rule_names(self) -> list[str]:
        """The names of the suite's policy rules, in order."""
        return [rule.rule for rule in self.policy_rules]

    personas: dict[str, PersonaSpec] = Field(
        default_factory=dict, description="The suite's own personas (run --persona NAME)."
    )

    @field_validator("personas")
    @classmethod
    def _persona_names(cls, value: dict[str, PersonaSpec]) -> dict[str, PersonaSpec]:
        for name in value:
            if name in BUILTIN_PERSONAS:
                raise ValueError(f"persona {name!r} is a built-in; give yours another name")
            if not PERSONA_NAME.match(name):
                raise ValueError(
                    f"persona name {name!r}: lower-case letters, digits, '-' and '_', "
                    "starting with a letter"
                )
        return value


# ---------------------------------------------------------------- tasks

SHORTCUTS = ("always", "asks_confirmation", "asks_question")


class Match(Strict):
    """A condition on the agent's last reply (case-insensitive)."""

    contains: list[str] | None = None
    regex: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Match:
        if (self.contains is None) == (self.regex is None):
            raise ValueError("give exactly one of 'contains' or 'regex'")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"bad regex: {exc}") from None
        return self


def _condition(value: Any) -> Any:
    if isinstance(value, str):
        if value not in SHORTCUTS:
            raise ValueError(
                f"unknown condition {value!r}; use one of {', '.join(SHORTCUTS)}, "
                "{contains: [...]} or {regex: ...}"
            )
        return value
    if isinstance(value, dict):
        return Match.model_validate(value)
    return value


When = Annotated[str | Match, BeforeValidator(_condition)]


class UserTurn(Strict):
    """A scripted user turn, said in order once its condition holds."""

    say: str
    when: When = "always"


class UserReply(Strict):
    """A reactive reply, said whenever its condition holds and no scripted turn is due."""

    say: str
    when: When
    times: int = Field(1, ge=1)


class UserSpec(Strict):
    """The user side of a task."""

    opening: str
    owns: list[str | int] = Field(
        default_factory=list,
        description="The user's own account: owner ids or identifiers (an email) of the "
        "records that are theirs. Default: the accounts the gold actions' identifying calls "
        "name (no_other_customer_data).",
    )
    persona: str = ""
    instructions: str = ""
    turns: list[UserTurn] = Field(default_factory=list)
    replies: list[UserReply] = Field(default_factory=list)


class CallSpec(Strict):
    """A tool call pattern: the tool and a subset of its arguments."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Refusal(Strict):
    """What a task whose answer is "no" requires beyond its other expectations."""

    reads: list[CallSpec] | None = Field(
        None,
        description="The reads that establish why (ownership, status, a window), each "
        "required to succeed before the agent declines. Default: for each write the task "
        "forbids, the gold actions that read what the suite's read_before_write rule requires "
        "before that write; without such a rule, every gold action.",
    )
    reasons: list[str] | None = Field(
        None,
        description="Words or phrases that state the reason; default: the task's must_say "
        "facts and the reason words of refuse_with_reason.",
    )


class Action(Strict):
    """A gold action: a complete tool call replayed to build the expected final state."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class StateCheck(Strict):
    """An assertion on the final world at a path like `orders/W1001/status`."""

    path: str
    equals: Any = None
    not_equals: Any = None
    one_of: list[Any] | None = None
    contains: Any = None
    exists: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_check(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = [
                k for k in ("equals", "not_equals", "one_of", "contains", "exists") if k in data
            ]
            if len(given) != 1:
                raise ValueError("give exactly one of equals, not_equals, one_of, contains, exists")
        return data

    @property
    def check(self) -> str:
        for name in ("equals", "not_equals", "one_of", "contains", "exists"):
            if name in self.model_fields_set:
                return name
        raise AssertionError("validated to have one check")


class CheckSpec(Strict):
    """A final-state check against a real system, run after the conversation."""

    name: str | None = Field(None, description="How the check is reported.")
    python: str | None = Field(None, description="'file.py:function'.")
    args: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments.")
    command: list[str] | None = Field(None, min_length=1)
    cwd: str | None = Field(None, description="Working folder of a command (default trial_dir).")
    expect_exit: int = Field(0, description="The exit status a command must end with.")
    stdout: str | None = Field(None, description="A command's output must equal this (trimmed).")
    stdout_contains: str | None = None
    timeout_s: float = Field(60.0, gt=0)

    @model_validator(mode="after")
    def _one_kind(self) -> CheckSpec:
        if (self.python is None) == (self.command is None):
            raise ValueError("give exactly one of 'python' or 'command'")
        command_only = self.model_fields_set & {"cwd", "expect_exit", "stdout", "stdout_contains"}
        if self.python is not None and command_only:
            raise ValueError(f"{', '.join(sorted(command_only))}: only for command checks")
        if self.command is not None and self.args:
            raise ValueError("args are for python checks")
        return self

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        return self.python or " ".join(self.command or [])


FactSource = Literal["tools", "user", "none"]


class Fact(Strict):
    """A fact the user must hear, and where the agent must have learnt it first."""

    fact: str | list[str] = Field(description="What to say; a list gives alternatives.")
    source: FactSource = Field(
        "tools",
        description="tools: it counts only once a tool result has shown it; user: it is the "
        "user's own words, repeated on purpose; none: it needs no source (policy, arithmetic).",
    )

    found_as: list[str] = Field(
        default_factory=list,
        description="Forms a tool result may show the fact in besides those it is said in: "
        "a system's status code (SHPD) or date format (20261120).",
    )
    field: list[str] | None = Field(
        None,
        description="The fields of tool results the fact answers (status, delivered_on): a "
        "message that states the fact and also another value of them does not commit to it. "
        "Default: the fields tool results showed the fact under, and the parameters whose "
        "allowed values include it.",
        min_length=1,
    )

    @property
    def options(self) -> list[str]:
        """The alternatives, any one of which states the fact."""
        return list(self.fact) if isinstance(self.fact, list) else [self.fact]

    @property
    def sources(self) -> list[str]:
        """The forms a tool result may show the fact in."""
        return [*self.options, *self.found_as]

    @field_validator("fact")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list) and not value:
            raise ValueError("give at least one way to say the fact")
        return value

    @field_validator("field", mode="before")
    @classmethod
    def _fields(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _found_in_tools(self) -> Fact:
        if self.found_as and self.source != "tools":
            raise ValueError("found_as is for facts a tool result shows (source: tools)")
        return self


def _fact_form(value: Any) -> str:
    if isinstance(value, dict | Fact):
        return "Fact"
    return "list" if isinstance(value, list) else "str"


FactEntry = Annotated[
    Annotated[str, Tag("str")] | Annotated[list[str], Tag("list")] | Annotated[Fact, Tag("Fact")],
    Discriminator(_fact_form),
]
"""A must_say entry: a fact, its alternatives, or the full form (so a mapping's problems are
reported as the mapping's, not as "not a string")."""


class Controls(Strict):
    """Two agent replies whose verdict on a criterion is known: the judge must grade both
    right before its verdicts on the criterion count (docs/suite-format.md, Rubrics)."""

    passes: str = Field(description="A reply that plainly does what the criterion asks.")
    fails: str = Field(description="A reply that plainly does not.")

    @field_validator("passes", "fails")
    @classmethod
    def _said(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("give the agent's reply in words")
        return value

    @model_validator(mode="after")
    def _different(self) -> Controls:
        if self.passes.strip() == self.fails.strip():
            raise ValueError("'passes' and 'fails' are the same reply: give two different ones")
        return self


class Criterion(Strict):
    """One thing a good answer does, as the judge model reads it (docs/graders.md)."""

    does: str = Field(min_length=1, description="What a good answer does, in plain words.")
    weight: float = Field(1.0, gt=0, description="Its share of the rubric's score.")
    required: bool = Field(
        False, description="The rubric fails when this criterion fails, whatever its score."
    )
    controls: Controls | None = Field(
        None,
        description="The replies the judge must grade right first; by default derived from `does`.",
    )


CRITERION_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
OUTCOME_LABEL = "outcome"
"""What human labels call a trial's own outcome: no rubric criterion may take the name."""


class Expectations(Strict):
    """What must hold at the end of a trial. Every given expectation must hold to pass."""

    actions: list[Action] | None = Field(
        None, description="Gold actions; the final world must hash equal to their replay."
    )
    state: list[StateCheck] = Field(default_factory=list)
    calls: list[CallSpec] = Field(default_factory=list, description="Required calls.")
    ordered_calls: bool = Field(False, description="Required calls must happen in this order.")
    forbidden_calls: list[CallSpec] = Field(default_factory=list)
    must_say: list[FactEntry] = Field(
        default_factory=list,
        description="Facts to tell the user; a list gives alternatives. A fact counts once a "
        "tool result has shown it, unless it says otherwise ({fact: ..., source: user|none}).",
    )
    must_not_say: list[str] = Field(default_factory=list)
    reads: list[CallSpec] | None = Field(
        None,
        description="The calls that produce the answer, each required to succeed. By default, "
        "for a task whose gold actions write nothing, those actions with their required "
        "arguments.",
    )
    allow_writes: list[CallSpec] = Field(
        default_factory=list,
        description="Write calls the task allows besides its gold actions (tool and the "
        "arguments that matter): any other write attempt, succeeded or refused, fails it.",
    )
    refusal: bool | Refusal | None = Field(
        None,
        description="The task's answer is a refusal: the reads that establish the reason must "
        "succeed first, and a message must decline with a reason. Default: a task whose gold "
        "actions write nothing and that forbids a write call; false: never.",
    )
    max_tool_calls: int | None = Field(None, ge=0)
    max_turns: int | None = Field(None, ge=1)
    check: list[CheckSpec] = Field(
        default_factory=list, description="Final-state checks against the real systems."
    )
    rubric: dict[str, str | Criterion] = Field(
        default_factory=dict,
        description="Criteria a judge model grades (name: what a good answer does, or "
        "{does, weight, required, controls}); needs run --judge-model or the suite's judge.",
    )
    rubric_pass: float = Field(
        1.0,
        gt=0,
        le=1,
        description="The weighted share of rubric criteria that must pass (default: all).",
    )

    @field_validator("rubric")
    @classmethod
    def _criterion_names(cls, value: dict[str, str | Criterion]) -> dict[str, str | Criterion]:
        for name, criterion in value.items():
            if not CRITERION_NAME.match(name) or name == OUTCOME_LABEL:
                raise ValueError(
                    f"criterion name {name!r}: use a letter then letters, digits, _ or - "
                    f"(and not {OUTCOME_LABEL!r}, which labels mean the trial's outcome)"
                )
            if isinstance(criterion, str) and not criterion.strip():
                raise ValueError(f"criterion {name!r}: say what a good answer does")
        return value

    def criteria(self) -> dict[str, Criterion]:
        """The rubric, every criterion in its full form."""
        return {
            name: c if isinstance(c, Criterion) else Criterion(does=c)
            for name, c in self.rubric.items()
        }

    def is_empty(self) -> bool:
        return (
            self.actions is None
            and not self.check
            and not self.state
            and not self.calls
            and not self.forbidden_calls
            and not self.must_say
            and not self.must_not_say
            and not self.reads
            and not self.rubric
            and not self.refusal
        )

    def facts(self) -> list[Fact]:
        """`must_say`, every entry in its full form."""
        return [f if isinstance(f, Fact) else Fact(fact=f) for f in self.must_say]


class TaskSpec(Strict):
    """One user story as a multi-step scenario."""

    id: str
    story: str = ""
    version: str = "1"
    tags: list[str] = Field(default_factory=list)
    initial_state: dict[str, Any] = Field(
        default_factory=dict, description="JSON merge patch applied to the suite's world."
    )
    user: UserSpec
    expect: Expectations

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not TASK_ID.match(value):
            raise ValueError("task ids are letters, digits and _ . : - (no spaces)")
        return value


PersonaSpec.model_rebuild()
SuiteFile.model_rebuild()
