"""The systems a suite's tools come from, in `suite.yaml`: backends (Python functions, MCP
servers, OpenAPI services), the local services started before a run, and the hooks run
around each trial."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag, model_validator

from toolproof.spec.base import Strict
from toolproof.spec.limits import MAX_SECONDS
from toolproof.spec.placeholders import Scope

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
    isolation: Literal["in_process", "process"] = Field(
        "in_process",
        description="'process': each call runs in a worker process of its own, killed at its "
        "timeout; its changes to the world come back as JSON (for tools not to be trusted "
        "in-process).",
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
    start_timeout_s: float = Field(60.0, gt=0, le=MAX_SECONDS)
    call_timeout_s: float = Field(120.0, gt=0, le=MAX_SECONDS)

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
    timeout_s: float = Field(30.0, gt=0, le=MAX_SECONDS)

    def templates(self) -> list[Template]:
        """Headers may name the calling trial's values (a tenant: `{trial_id}`)."""
        return [
            ("spec", self.spec, "run"),
            ("base_url", self.base_url, "run"),
            ("headers", self.headers, "trial"),
        ]


BUILT_IN_KINDS = ("python", "mcp", "openapi")


class PluginBackend(Strict):
    """A backend of a kind an installed package adds (docs/architecture.md, "Writing a
    plug-in package"): `type:` names the kind, and its other fields are the kind's to read
    (`model_extra`). A `type:` no kind has is a located problem when the suite loads."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str = Field(
        min_length=1,
        description="The kind an installed package adds.",
        json_schema_extra={"not": {"enum": list(BUILT_IN_KINDS)}},
    )

    def templates(self) -> list[Template]:
        return []


def backend_kind(data: Any) -> str | None:
    """Which model reads a backend: its built-in kind's, else the plug-in's."""
    kind = data.get("type") if isinstance(data, dict) else getattr(data, "type", None)
    if not isinstance(kind, str):
        return None
    return kind if kind in BUILT_IN_KINDS else "plugin"


Backend = Annotated[
    Annotated[PythonBackend, Tag("python")]
    | Annotated[MCPBackend, Tag("mcp")]
    | Annotated[OpenAPIBackend, Tag("openapi")]
    | Annotated[PluginBackend, Tag("plugin")],
    Discriminator(
        backend_kind,
        custom_error_type="backend_type",
        custom_error_message="give a 'type': python, mcp, openapi or a plug-in's kind",
    ),
]


class HookSpec(Strict):
    """A step run for every trial: a Python function or a command."""

    python: str | None = Field(None, description="'file.py:function'.")
    command: list[str] | None = Field(None, min_length=1)
    timeout_s: float = Field(60.0, gt=0, le=MAX_SECONDS)

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
    start_timeout_s: float = Field(30.0, gt=0, le=MAX_SECONDS)

    def templates(self) -> list[tuple[str, Any]]:
        """A service starts first, so it knows only `{suite_dir}`, `{python}`, `{port}`."""
        return [
            ("command", self.command),
            ("cwd", self.cwd),
            ("ready", self.ready),
            ("set_env", self.set_env),
        ]
