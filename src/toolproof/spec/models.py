"""The file formats of a suite: `suite.yaml` and task files, as pydantic models.

`toolproof schema` prints the JSON Schema of these models for editor completion.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from toolproof.spec.base import Strict
from toolproof.spec.conditions import DriftTransform, FaultsSpec, LoadSpec, ScoreSpec
from toolproof.spec.gate import GateSpec
from toolproof.spec.placeholders import Scope

TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")

Template = tuple[str, Any, Scope]
"""A configured value that may hold placeholders: (its field, its value, when it expands)."""


# ---------------------------------------------------------------- suite.yaml


class PythonBackend(Strict):
    """Tools written as Python functions decorated with `@toolproof.tool`."""

    type: Literal["python"]
    module: str = Field(description="Python file, relative to the suite folder.")

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

    trials: int = Field(5, ge=1)
    k: list[int] = Field(default_factory=lambda: [1, 5])
    seed: int = 0
    max_steps: int = Field(30, ge=1, description="Model calls allowed per trial.")
    concurrency: int = Field(8, ge=1)

    @field_validator("k")
    @classmethod
    def _positive_k(cls, value: list[int]) -> list[int]:
        if not value or any(k < 1 for k in value):
            raise ValueError("k values must be positive integers")
        return sorted(set(value))


class ModelSettings(BaseModel):
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


PolicyRule = Literal["confirm_before_write"]


class SuiteFile(Strict):
    """`suite.yaml`."""

    name: str
    version: str = "1"
    description: str = ""
    policy: str | None = Field(None, description="Markdown file: the agent's system prompt.")
    policy_rules: list[PolicyRule] = Field(
        default_factory=list, description="Checks applied to every task's transcript."
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
    persona: str = ""
    instructions: str = ""
    turns: list[UserTurn] = Field(default_factory=list)
    replies: list[UserReply] = Field(default_factory=list)


class CallSpec(Strict):
    """A tool call pattern: the tool and a subset of its arguments."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


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
    max_tool_calls: int | None = Field(None, ge=0)
    max_turns: int | None = Field(None, ge=1)
    check: list[CheckSpec] = Field(
        default_factory=list, description="Final-state checks against the real systems."
    )

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


SuiteFile.model_rebuild()
