"""Bring-your-own agents: a Python function (`python:`) or an HTTP service (`http://`).

Teams often ship their own agent, not a bare model: a framework, a router, a prompt chain.
These adapters put such an agent in a trial exactly where the built-in loop would be, so it
meets the same tools, faults, drift and graders. Both kinds see one conversation format:

    {"role": "user", "content": "Where is order B?"}
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "get_order",
                                                         "arguments": {"order_id": "B"}}]}
    {"role": "tool", "tool_call_id": "c1", "name": "get_order", "content": {...},
     "is_error": false}
    {"role": "assistant", "content": "Order B has shipped."}

`python:MODULE:FUNCTION` or `python:path/to/file.py:FUNCTION` names an async function
`agent(conversation, tools) -> str` (see `Conversation` and `ToolHandle`); an exception it
raises fails the trial with reason `agent_error` and a one-line traceback summary, and so
does any BaseException (sys.exit, KeyboardInterrupt, a CancelledError of its own), a refused
os._exit, and a turn past its deadline (`--agent-timeout`, see `within_turn`). The model
calls its code makes through the `openai` and `anthropic` SDKs pass the model bridge
(`agents/bridge`): recorded as the trial's, and answered by the run's model when one is given.

`http://HOST/PATH` (or https) names a service that answers one POST per agent turn with
either tool calls or the reply to the user (the protocol is in docs/agents.md). Timeouts,
connection errors, 429 and 5xx are retried a few times, then the trial is an `infra_error`;
an answer that breaks the protocol fails the trial with reason `agent_protocol_error`;
`max_steps` bounds the POSTs of a trial.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import itertools
import json
import os
import sys
import time
import traceback
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import httpx2

from toolproof.agents import bridge, frameworks
from toolproof.agents.base import Agent, TrialContext
from toolproof.agents.registry import AgentChoice
from toolproof.errors import AgentFailure, InfraError, UsageError
from toolproof.gateway import Gateway
from toolproof.models.base import ModelClient, ToolCall, Usage
from toolproof.models.pricing import PriceTable
from toolproof.redact import redacted
from toolproof.tools import guard
from toolproof.tools.base import ToolResult, ToolSchema
from toolproof.tools.guard import (
    ProcessExit,
    Refused,
    TurnOverran,
    exits_refused,
    pressed,
    raised_inside,
    within_turn,
)
from toolproof.transcript import ModelCallEvent

if TYPE_CHECKING:
    from agents import FunctionTool
    from langchain_core.tools import StructuredTool
    from pydantic_ai import Tool as PydanticAITool

Json = Any
"""A JSON value: dict, list, str, int, float, bool or None."""


# ---------------------------------------------------------------- the shared message format


def schema_dict(schema: ToolSchema) -> dict[str, Any]:
    """A tool as bring-your-own agents see it: name, description, JSON Schema parameters."""
    return {
        "name": schema.name,
        "description": schema.description,
        "parameters": schema.parameters,
    }


def openai_tool(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool dict in the OpenAI Chat Completions `tools` format."""
    return {"type": "function", "function": dict(schema)}


def tool_message(call_id: str, name: str, result: ToolResult) -> dict[str, Any]:
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "name": name,
        "content": result.content,
        "is_error": result.is_error,
    }


# ---------------------------------------------------------------- python: agents


@dataclass
class Conversation:
    """What a Python agent sees of its trial when a user message arrives.

    `messages` is the whole conversation so far in the shared format (user and assistant
    messages, and the tool calls and results of earlier turns); the latest user message is
    last. `state` is a dict the agent may keep anything in: the same dict comes back on every
    turn of the trial, and a new trial starts with an empty one.
    """

    trial: str
    policy: str
    messages: list[dict[str, Any]]
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def latest(self) -> str:
        """The user message to answer now."""
        return self.user_messages[-1] if self.user_messages else ""

    @property
    def user_messages(self) -> list[str]:
        """Everything the user has said, in order."""
        return [str(m["content"]) for m in self.messages if m["role"] == "user"]


class ToolHandle:
    """The trial's tools as a Python agent calls them: through the gateway, so faults, drift
    and load apply and every call is recorded; `schemas` are the (possibly drifted) tools."""

    def __init__(
        self, gateway: Gateway, history: list[dict[str, Any]], ids: Iterator[int] | None = None
    ) -> None:
        self._gateway = gateway
        self._history = history
        self._ids = ids or itertools.count(1)

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """`{"name", "description", "parameters"}` for each tool; parameters is JSON Schema."""
        return [schema_dict(s) for s in self._gateway.schemas]

    @property
    def openai_tools(self) -> list[dict[str, Any]]:
        """The same tools as OpenAI `tools` entries: `{"type": "function", "function": ...}`."""
        return [openai_tool(s) for s in self.schemas]

    @property
    def responses_tools(self) -> list[dict[str, Any]]:
        """The same tools as OpenAI Responses API entries: `{"type": "function", "name", ...}`."""
        return [{"type": "function", **s} for s in self.schemas]

    @property
    def anthropic_tools(self) -> list[dict[str, Any]]:
        """The same tools as Anthropic `tools` entries: `{"name", "description",
        "input_schema"}`."""
        return [
            {"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
            for s in self.schemas
        ]

    def openai_agents(self) -> list[FunctionTool]:
        """The tools as OpenAI Agents SDK `FunctionTool`s: `Agent(tools=tools.openai_agents())`."""
        return frameworks.openai_agents_tools(self.schemas, self.call)

    def langchain(self) -> list[StructuredTool]:
        """The tools as LangChain `StructuredTool`s (for LangGraph's `ToolNode`)."""
        return frameworks.langchain_tools(self.schemas, self.call)

    def pydantic_ai(self) -> list[PydanticAITool[Any]]:
        """The tools as Pydantic AI `Tool`s: `Agent(model, tools=tools.pydantic_ai())`."""
        return frameworks.pydantic_ai_tools(self.schemas, self.call)

    async def call(self, name: str, arguments: dict[str, Any] | str | None = None) -> Json:
        """Call a tool; returns its result JSON. A failed call returns `{"error": ...}` as a
        model would see it (never raises for it); arguments may also be raw JSON text."""
        call_id = f"call_{next(self._ids)}"
        self._history.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}],
            }
        )
        result = await self._gateway.call(name, arguments, call_id)
        self._history.append(tool_message(call_id, name, result))
        return result.content


PythonAgentFunction = Callable[[Conversation, ToolHandle], Awaitable[str]]
"""`async def agent(conversation: Conversation, tools: ToolHandle) -> str`."""


class PythonAgent(Agent):
    """A team's own agent function, called once per user message; its SDK model calls go
    through the trial's bridge (to `model` when the run gives one)."""

    def __init__(
        self,
        function: PythonAgentFunction,
        context: TrialContext,
        model: ModelClient | None = None,
    ) -> None:
        self.function = function
        self.timeout_s = context.turn_timeout_s
        code = getattr(function, "__code__", None)
        self.folder = Path(code.co_filename).parent if code is not None else None
        self.history: list[dict[str, Any]] = []
        self.ids = itertools.count(1)
        self.conversation = Conversation(
            trial=uuid.uuid4().hex, policy=context.suite.policy or "", messages=[]
        )
        self.bridge = bridge.Bridge(
            transcript=context.transcript,
            seed=context.seed,
            max_steps=context.max_steps,
            model=model,
            prices=PriceTable(context.suite.file.prices),
        )

    async def reply(self, message: str, tools: Gateway) -> str:
        self.history.append({"role": "user", "content": message})
        self.conversation.messages = list(self.history)
        handle = ToolHandle(tools, self.history, self.ids)
        try:
            with bridge.bridging(self.bridge):
                answer = await within_turn(self.function(self.conversation, handle), self.timeout_s)
        except (AgentFailure, InfraError):
            raise
        except BaseException as exc:
            if self.bridge.failure is not None:
                raise self.bridge.failure from None
            raise self._failure(exc) from None
        if self.bridge.failure is not None:  # the agent's code caught it: the trial ends anyway
            raise self.bridge.failure
        if not isinstance(answer, str):
            raise AgentFailure(
                "agent_error", f"the agent returned {type(answer).__name__}, not the reply text"
            )
        self.history.append({"role": "assistant", "content": answer})
        return answer

    def _failure(self, exc: BaseException) -> AgentFailure:
        """What ended the turn, as the trial's `agent_error`; Ctrl-C and a cancelled run go
        on up (re-raised)."""
        if isinstance(exc, TurnOverran):
            return AgentFailure(
                "agent_error",
                f"the agent's turn did not end within {self.timeout_s:g} s (--agent-timeout)",
            )
        if pressed(exc) or (
            isinstance(exc, KeyboardInterrupt)
            and not (self.folder and raised_inside(exc, self.folder))
        ):
            raise exc
        if isinstance(exc, ProcessExit):
            return AgentFailure("agent_error", f"the agent called os._exit({exc.code!r})")
        if isinstance(exc, Refused):
            return AgentFailure("agent_error", f"the agent called {exc.what}, refused")
        if isinstance(exc, SystemExit):
            return AgentFailure("agent_error", f"the agent called sys.exit({exc.code!r})")
        return AgentFailure("agent_error", error_summary(exc))


def error_summary(exc: BaseException, frames: int = 3) -> str:
    """`ValueError: boom (traceback: agent.py:12 in agent > agent.py:4 in helper)`: the
    exception and its innermost frames outside this module, on one line."""
    ours = {os.path.abspath(__file__), os.path.abspath(guard.__file__)}
    frames_seen = traceback.extract_tb(exc.__traceback__)
    stack = [f for f in frames_seen if os.path.abspath(f.filename) not in ours]
    where = " > ".join(f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in stack[-frames:])
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    text = " ".join(text.split())
    return f"{text} (traceback: {where})" if where else text


def load_function(target: str, name: str) -> tuple[PythonAgentFunction, str]:
    """The agent function and a digest of its source file; problems are usage errors."""
    module = _load_module(target)
    function = getattr(module, name, None)
    if function is None:
        raise UsageError(f"--agent python:{target}:{name}: {target} has no '{name}'")
    if not inspect.iscoroutinefunction(function):
        raise UsageError(
            f"--agent python:{target}:{name}: '{name}' must be an async function "
            "(async def agent(conversation, tools) -> str)"
        )
    source = getattr(module, "__file__", None)
    data = Path(source).read_bytes() if source and Path(source).is_file() else target.encode()
    digest = hashlib.sha256(data).hexdigest()[:16]
    agent: PythonAgentFunction = function
    return agent, digest


def _load_module(target: str) -> ModuleType:
    if target.endswith(".py") or "/" in target or os.sep in target:
        path = Path(target).resolve()
        if not path.is_file():
            raise UsageError(f"--agent python:{target}: no such file")
        folder = str(path.parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        key = "toolproof_agent_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(key, path)
        if spec is None or spec.loader is None:
            raise UsageError(f"--agent python:{target}: cannot load it as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        try:
            with exits_refused():
                spec.loader.exec_module(module)
        except BaseException as exc:
            sys.modules.pop(key, None)
            raise UsageError(f"--agent python:{target}: {_import_failure(exc)}") from None
        return module
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        with exits_refused():
            return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and target.startswith(exc.name):
            raise UsageError(
                f"--agent python:{target}: no module '{exc.name}' here or on the Python path"
            ) from None
        raise UsageError(f"--agent python:{target}: {error_summary(exc)}") from None
    except BaseException as exc:
        sys.modules.pop(target, None)
        raise UsageError(f"--agent python:{target}: {_import_failure(exc)}") from None


def _import_failure(exc: BaseException) -> str:
    """Why a module could not be loaded: an exception, or an attempt to end the process
    while it loaded (Ctrl-C goes on up)."""
    if isinstance(exc, KeyboardInterrupt) and pressed(exc):
        raise exc
    if isinstance(exc, SystemExit | ProcessExit):
        how = "sys.exit" if isinstance(exc, SystemExit) else "os._exit"
        return f"it calls {how}({exc.code!r}) when imported; an agent module must not exit"
    if isinstance(exc, Refused):
        return f"it calls {exc.what} when imported"
    return error_summary(exc)


def python_agent(spec: str) -> AgentChoice:
    """`python:MODULE:FUNCTION` or `python:path/to/file.py:FUNCTION`: its SDK calls go where
    its code sends them, recorded."""
    [choice] = bridged_python_agents(spec, [])
    return choice


def bridged_python_agents(
    spec: str, models: list[tuple[str, str, ModelClient]]
) -> list[AgentChoice]:
    """The agent at `spec` once per model of the run, given as (name, identity, client):
    its SDK calls answered by that model. No models: the agent alone, its calls unrouted."""
    target, sep, name = spec.removeprefix("python:").rpartition(":")
    if not sep or not target or not name.isidentifier():
        raise UsageError(
            f"--agent {spec}: expected python:MODULE:FUNCTION or python:path/to/file.py:FUNCTION"
        )
    function, digest = load_function(target, name)
    bridge.install()
    identity = f"python:{digest}:{name}"
    if not models:
        return [AgentChoice(spec, lambda context: PythonAgent(function, context), identity)]

    def choice(model: str, model_identity: str, client: ModelClient) -> AgentChoice:
        def make(context: TrialContext) -> Agent:
            return PythonAgent(function, context, client)

        return AgentChoice(spec, make, f"{identity}@{model_identity}", model=model)

    return [choice(*model) for model in models]


# ---------------------------------------------------------------- http: agents


TIMEOUT_ENV = "TOOLPROOF_AGENT_TIMEOUT"


@dataclass(frozen=True)
class HttpSettings:
    """How the harness talks to an HTTP agent: each POST may take `timeout_s` (default 120,
    or $TOOLPROOF_AGENT_TIMEOUT); `attempts` tries in all, waiting `backoff_s` doubling."""

    timeout_s: float = 120.0
    attempts: int = 3
    backoff_s: float = 0.5
    max_wait_s: float = 10.0

    @classmethod
    def from_env(cls) -> HttpSettings:
        raw = os.environ.get(TIMEOUT_ENV, "").strip()
        if not raw:
            return cls()
        try:
            timeout = float(raw)
        except ValueError:
            timeout = 0.0
        if not timeout > 0:
            raise UsageError(f"{TIMEOUT_ENV}={raw!r}: expected seconds, a positive number")
        return cls(timeout_s=timeout)


class ProtocolError(Exception):
    """The agent's answer does not follow the protocol."""


@dataclass(frozen=True)
class Answer:
    """One parsed answer: the reply text, or tool calls; plus what the agent reported."""

    reply: str | None
    calls: list[ToolCall]
    echoed: list[dict[str, Any]]
    usage: Usage
    cost_usd: float | None


class HttpAgent(Agent):
    """An agent behind an HTTP endpoint, driven turn by turn through the JSON protocol."""

    def __init__(self, url: str, context: TrialContext, settings: HttpSettings) -> None:
        self.url = url
        self.shown = redacted(url)
        """The URL as transcripts and messages show it: without its password."""
        self.context = context
        self.settings = settings
        self.trial = uuid.uuid4().hex
        self.history: list[dict[str, Any]] = []
        self.steps = 0
        self._ids = itertools.count(1)

    async def reply(self, message: str, tools: Gateway) -> str:
        self.history.append({"role": "user", "content": message})
        schemas = [schema_dict(s) for s in tools.schemas]
        transcript = self.context.transcript
        while True:
            if self.steps >= self.context.max_steps:
                raise AgentFailure("max_steps", f"cut after {self.steps} agent turns (max_steps)")
            self.steps += 1
            started = transcript.now()
            clock = time.perf_counter()
            body = {
                "trial": self.trial,
                "policy": self.context.suite.policy or "",
                "messages": self.history,
                "tools": schemas,
            }
            data = await self._post(body)
            try:
                answer = self._parse(data)
            except ProtocolError as exc:
                raise AgentFailure("agent_protocol_error", f"{self.shown}: {exc}") from None
            transcript.add(
                ModelCallEvent(
                    t=started,
                    model=self.shown,
                    content=answer.reply or "",
                    tool_calls=answer.calls,
                    usage=answer.usage,
                    latency_s=round(time.perf_counter() - clock, 6),
                    cost_usd=answer.cost_usd,
                    stop_reason="reply" if answer.reply is not None else "tool_calls",
                )
            )
            if answer.reply is not None:
                self.history.append({"role": "assistant", "content": answer.reply})
                return answer.reply
            self.history.append({"role": "assistant", "content": "", "tool_calls": answer.echoed})
            results = await asyncio.gather(*(_call(c, tools) for c in answer.calls))
            for call, result in zip(answer.calls, results, strict=True):
                self.history.append(tool_message(call.id, call.name, result))

    async def _post(self, body: dict[str, Any]) -> Json:
        """POST with bounded retries; what still fails is an infra error."""
        settings = self.settings
        problem = ""
        for attempt in range(settings.attempts):
            wait = min(settings.max_wait_s, settings.backoff_s * 2**attempt)
            try:
                async with httpx2.AsyncClient(timeout=settings.timeout_s) as client:
                    response = await client.post(self.url, json=body)
            except httpx2.TimeoutException:
                problem = f"no answer within {settings.timeout_s:g}s"
            except httpx2.TransportError as exc:
                problem = f"cannot connect: {exc or type(exc).__name__}"
            else:
                status = response.status_code
                if status < 300:
                    try:
                        return response.json()
                    except ValueError:
                        raise AgentFailure(
                            "agent_protocol_error",
                            f"{self.shown}: the answer is not JSON: {_snippet(response.text)}",
                        ) from None
                if status not in (408, 429) and status < 500:
                    raise AgentFailure(
                        "agent_protocol_error",
                        f"{self.shown}: HTTP {status}: {_snippet(response.text)}",
                    )
                problem = f"HTTP {status}: {_snippet(response.text)}"
                wait = max(wait, min(settings.max_wait_s, _retry_after(response)))
            if attempt + 1 < settings.attempts:
                await asyncio.sleep(wait)
        raise InfraError(
            redacted(f"agent at {self.shown}: {problem} (after {settings.attempts} attempts)")
        )

    def _parse(self, data: Json) -> Answer:
        if not isinstance(data, dict):
            raise ProtocolError(f"expected a JSON object, got {_snippet(json.dumps(data))}")
        reply, calls = data.get("reply"), data.get("tool_calls")
        if reply is not None and calls is not None:
            raise ProtocolError("give either 'reply' or 'tool_calls', not both")
        usage, cost = _usage(data)
        if reply is not None:
            if not isinstance(reply, str):
                raise ProtocolError(f"'reply' must be a string, got {type(reply).__name__}")
            return Answer(reply, [], [], usage, cost)
        if calls is None:
            raise ProtocolError(
                f"expected {{'reply': ...}} or {{'tool_calls': [...]}}, got keys {sorted(data)}"
            )
        if not isinstance(calls, list) or not calls:
            raise ProtocolError("'tool_calls' must be a non-empty list")
        parsed, echoed = [], []
        for i, raw in enumerate(calls):
            if not isinstance(raw, dict):
                raise ProtocolError(f"tool_calls[{i}] must be an object")
            name, arguments = raw.get("name"), raw.get("arguments", {})
            call_id = raw.get("id") or f"call_{self.steps}_{next(self._ids)}"
            if not isinstance(name, str) or not name:
                raise ProtocolError(f"tool_calls[{i}] needs a 'name' string")
            if not isinstance(call_id, str):
                raise ProtocolError(f"tool_calls[{i}].id must be a string")
            if arguments is None:
                arguments = {}
            if isinstance(arguments, dict):
                parsed.append(ToolCall(id=call_id, name=name, arguments=arguments))
            elif isinstance(arguments, str):
                parsed.append(ToolCall(id=call_id, name=name, raw_arguments=arguments))
            else:
                raise ProtocolError(f"tool_calls[{i}].arguments must be an object or JSON text")
            echoed.append({"id": call_id, "name": name, "arguments": arguments})
        return Answer(None, parsed, echoed, usage, cost)


async def _call(call: ToolCall, tools: Gateway) -> ToolResult:
    arguments = call.arguments if call.arguments is not None else call.raw_arguments
    return await tools.call(call.name, arguments, call.id)


def _usage(data: dict[str, Any]) -> tuple[Usage, float | None]:
    """Optional `usage: {input_tokens, output_tokens}` and `cost_usd` the agent reports."""
    raw, cost = data.get("usage"), data.get("cost_usd")
    usage = Usage()
    if isinstance(raw, dict):
        tokens = {
            key: value
            for key in ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens")
            if isinstance(value := raw.get(key), int) and not isinstance(value, bool)
        }
        usage = Usage(**tokens)
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return usage, float(cost)
    return usage, None


def _retry_after(response: httpx2.Response) -> float:
    try:
        return float(response.headers.get("retry-after", "0"))
    except ValueError:
        return 0.0


def _snippet(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def http_agent(url: str, settings: HttpSettings | None = None) -> AgentChoice:
    """`http://HOST/PATH` or `https://HOST/PATH`: one agent per trial, all at this URL."""
    chosen = settings or HttpSettings.from_env()
    parsed = httpx2.URL(url)
    if not parsed.host:
        raise UsageError(f"--agent {url}: not a URL with a host")

    def make(context: TrialContext) -> Agent:
        return HttpAgent(url, context, chosen)

    return AgentChoice(redacted(url), make, f"http:{url}")
