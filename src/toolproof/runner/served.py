"""serve-tools: one trial's tools as an MCP server, so any MCP-capable agent is benchmarked
exactly as it runs in production.

`toolproof serve-tools SUITE --task ID` builds one trial of the task, as `toolproof run` would
(its world, the fault profile and drift variant asked for, the trial's seed), and serves the
gateway over MCP (stdio, or streamable HTTP on 127.0.0.1). Every agent-facing tool schema is
one MCP tool (name, description, inputSchema, drifted under --drift); each call goes through
the trial's gateway, so faults apply and the call is recorded.

The conversation runs through MCP too. The user's first message is the prompt `opening` (and
is printed at start). The agent answers the user with the tool `finish` ({"answer": TEXT}):
if the task's scripted user replies (a confirmation, say), the reply comes back
({"done": false, "user": TEXT}) and the conversation goes on; when the user has nothing more
to say the result is {"done": true} and the trial is graded like any trial and written to the
store; a task with a rubric is graded by the judge model (--judge-model, else the suite's
`judge:`) as in `toolproof run`, and without one it is refused before anything is served.
A client that disconnects first (stdio: closes the stream; HTTP: ends its session, or the
server is stopped) leaves the user's last message unanswered: the trial is graded then,
and fails with reason `disconnected`. A server that no client used stores nothing.

Trials go into one run per (suite content, variant, seed, trials per task, agent label): run
the command again for the next trial (--trial defaults to the first one the run lacks), and
`toolproof show RUN` gives pass^k as for any run.

There is no load level: load is trials competing in one process for shared capacity, and a
served trial runs alone (docs/agents.md says more).

All of the `mcp` SDK is imported inside the functions here, so the rest of toolproof does not
need it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from toolproof.agents.base import Agent, TrialContext
from toolproof.agents.registry import AgentChoice
from toolproof.errors import AgentFailure, ToolCrashed, UsageError
from toolproof.gateway import Gateway
from toolproof.records.run import RunConfig
from toolproof.records.trial import TrialResult
from toolproof.runner.build import Wiring, build, gold_replays
from toolproof.runner.config import RunRequest, run_config
from toolproof.runner.plan import PlannedTrial, derive_seed
from toolproof.runner.run import fingerprint, task_rows
from toolproof.runner.trial import run_trial
from toolproof.store.journal import Store
from toolproof.suite.loaded import Suite
from toolproof.tools.base import ToolContext, ToolResult, ToolSchema
from toolproof.transcript import Transcript
from toolproof.version import __version__
from toolproof.world import World

if TYPE_CHECKING:
    from mcp.server import Server

Transport = Literal["stdio", "http"]
OPENING_PROMPT = "opening"
MCP_PATH = "/mcp"


def finish_schema(name: str) -> ToolSchema:
    """The tool an agent answers the user with."""
    return ToolSchema(
        name=name,
        description=(
            "Send your reply to the user. If the user answers, their message comes back "
            '({"done": false, "user": "..."}) and the conversation goes on; when the user '
            'has nothing more to say, the result is {"done": true} and the conversation is over.'
        ),
        parameters={
            "type": "object",
            "properties": {
                "answer": {"type": "string", "description": "Your message to the user."}
            },
            "required": ["answer"],
        },
    )


# ---------------------------------------------------------------- the trial behind the server


class ServedTrial:
    """One trial whose agent is whoever talks to the MCP server.

    The trial itself is `run_trial`, started by the first MCP request; its agent is a relay:
    each user message waits for the client's `finish` answer. Tool calls go to the trial's
    gateway as soon as it exists.
    """

    def __init__(
        self,
        wiring: Wiring,
        planned: PlannedTrial,
        label: str,
        on_result: Callable[[TrialResult], None],
    ) -> None:
        self.wiring, self.planned, self.label = wiring, planned, label
        self.suite = wiring.suite
        self.task = wiring.suite.task(planned.task_id)
        self.on_result = on_result
        self.gateway: Gateway | None = None
        self.started = asyncio.Event()
        self.ready = asyncio.Event()
        self.over = asyncio.Event()
        self.answers: asyncio.Queue[str | None] = asyncio.Queue()
        self.said: asyncio.Queue[str | None] = asyncio.Queue()
        self.turn = asyncio.Lock()
        self.job: asyncio.Task[TrialResult] | None = None
        self.crashed: ToolCrashed | None = None

    @property
    def opening(self) -> str:
        return self.task.spec.user.opening

    def launch(self) -> None:
        """Create the trial's task (in the running loop); it starts at the first request."""
        self.job = asyncio.ensure_future(self._run())

    async def _run(self) -> TrialResult:
        await self.started.wait()
        relay = AgentChoice(self.label, self._relay, f"mcp:{self.label}")
        try:
            result = await run_trial(self.wiring.trial(self.planned, relay))
            self.on_result(result)
            return result
        finally:
            self.over.set()
            self.ready.set()
            self.said.put_nowait(None)

    def _relay(self, context: TrialContext) -> Agent:
        return _Relay(self)

    async def begin(self) -> None:
        """Every MCP request: start the trial if it has not started, wait for its gateway."""
        self.started.set()
        await self.ready.wait()

    async def call(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        await self.begin()
        if self.over.is_set() or self.gateway is None or self.crashed is not None:
            return ToolResult.error(
                "conversation_over", "the conversation is over; no more tool calls"
            )
        try:
            return await self.gateway.call(name, arguments)
        except ToolCrashed as exc:  # the trial ends with it, once the agent is waited on
            self.crashed = exc
            self.answers.put_nowait(None)
            return ToolResult.error("exception", str(exc))

    async def reply(self, answer: str) -> str | None:
        """The agent's answer to the user; the user's next message, or None when done."""
        await self.begin()
        async with self.turn:
            if self.over.is_set():
                return None
            self.answers.put_nowait(answer)
            return await self.said.get()

    def disconnect(self) -> None:
        """The client is gone: an unanswered user message ends the trial; nothing started
        means nothing to grade."""
        if self.job is None or self.job.done():
            return
        if not self.started.is_set():
            self.job.cancel()
        elif not self.over.is_set():
            self.answers.put_nowait(None)

    async def result(self) -> TrialResult | None:
        """The graded trial, once it has ended (None when no client ever used it)."""
        if self.job is None:
            return None
        try:
            return await self.job
        except asyncio.CancelledError:
            return None


class _Relay(Agent):
    """The trial's agent: hands each user message to the MCP client and waits for `finish`."""

    def __init__(self, trial: ServedTrial) -> None:
        self.trial = trial
        self.first = True

    async def reply(self, message: str, tools: Gateway) -> str:
        trial = self.trial
        if self.first:
            self.first = False
            trial.gateway = tools
            trial.ready.set()
        else:
            trial.said.put_nowait(message)
        answer = await trial.answers.get()
        if answer is None and trial.crashed is not None:
            raise trial.crashed
        if answer is None:
            raise AgentFailure(
                "disconnected", "the client left before answering the user's last message"
            )
        return answer


# ---------------------------------------------------------------- the MCP server


def instructions(suite: Suite, finish: str) -> str:
    note = (
        f"The user's first message is the prompt '{OPENING_PROMPT}'. Answer the user with the "
        f"tool '{finish}': when the user replies, their message comes back and the "
        "conversation goes on; when they have nothing more to say, it is over."
    )
    policy = (suite.policy or "").strip()
    return f"{policy}\n\n{note}" if policy else note


def tool_text(content: Any) -> str:
    """A tool result as MCP text content: JSON, or a damaged answer's text as it is."""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def build_server(trial: ServedTrial, schemas: list[ToolSchema], finish: str) -> Server[Any]:
    """The MCP server: one tool per agent-facing schema plus `finish`, and the opening prompt.

    It is the SDK's low-level `Server` (which `MCPServer` is built on): the tools are given
    by the suite's JSON Schemas, not Python signatures, and their arguments reach the gateway
    unvalidated, so a malformed call is the agent's error, recorded, as in any trial.
    """
    import mcp.types as types
    from mcp.server import Server, ServerRequestContext
    from mcp.shared.exceptions import MCPError

    listed = [
        types.Tool(name=s.name, description=s.description, input_schema=s.parameters)
        for s in [*schemas, finish_schema(finish)]
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await trial.begin()
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name == finish:
            answer = (params.arguments or {}).get("answer")
            if not isinstance(answer, str):
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text="finish needs an 'answer' text")],
                    is_error=True,
                )
            said = await trial.reply(answer)
            payload = {"done": True} if said is None else {"done": False, "user": said}
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=json.dumps(payload))]
            )
        result = await trial.call(params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=tool_text(result.content))],
            is_error=result.is_error,
        )

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompt = types.Prompt(
            name=OPENING_PROMPT, description="The user's first message: start with it."
        )
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != OPENING_PROMPT:
            raise MCPError(types.INVALID_PARAMS, f"no prompt '{params.name}'")
        await trial.begin()
        message = types.PromptMessage(
            role="user", content=types.TextContent(type="text", text=trial.opening)
        )
        return types.GetPromptResult(description="The user's first message.", messages=[message])

    return Server(
        "toolproof",
        version=__version__,
        instructions=instructions(trial.suite, finish),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


async def serve_stdio(server: Server[Any], trial: ServedTrial) -> TrialResult | None:
    """Serve on stdin/stdout until the client closes the stream."""
    from mcp.server.stdio import stdio_server

    trial.launch()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
    trial.disconnect()
    return await trial.result()


async def serve_http(
    server: Server[Any], trial: ServedTrial, port: int, say: Callable[[str], None]
) -> TrialResult | None:
    """Serve streamable HTTP on 127.0.0.1 until the trial is over or the server is stopped
    (Ctrl-C, SIGTERM); a client ending its session (DELETE) also ends the trial."""
    import uvicorn

    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host="127.0.0.1")

    async def watched(scope: Any, receive: Any, send: Any) -> None:
        await app(scope, receive, send)
        if scope["type"] == "http" and scope.get("method") == "DELETE":
            trial.disconnect()

    class Quiet(uvicorn.Server):
        """Signals are ours: a stopped server still grades its trial."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    sock = _listen(port)
    config = uvicorn.Config(
        watched, log_level="warning", lifespan="on", timeout_graceful_shutdown=3
    )
    http = Quiet(config)
    trial.launch()
    serving = asyncio.ensure_future(http.serve(sockets=[sock]))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    say(f"MCP endpoint: http://127.0.0.1:{sock.getsockname()[1]}{MCP_PATH}")
    waits = [serving, asyncio.ensure_future(stop.wait()), asyncio.ensure_future(trial.over.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        trial.disconnect()
        result = await trial.result()
        await asyncio.sleep(0.2)
    finally:
        for waiter in waits[1:]:
            waiter.cancel()
        http.should_exit = True
        await serving
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
    return result


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"--port {port}: cannot listen on 127.0.0.1:{port}: {exc}") from None
    sock.listen(128)
    return sock


# ---------------------------------------------------------------- the run a served trial joins


@dataclass
class ServedRun:
    """The store's run for served trials of one suite, variant, seed and agent label."""

    store: Store
    suite: Suite
    config: RunConfig
    label: str
    fresh: bool = False
    judge: str | None = None
    """The judge model's identity, when the task has a rubric."""

    @property
    def identity(self) -> str:
        return f"mcp:{self.label}"

    @property
    def fingerprint(self) -> str:
        judged = [self.judge] if self.judge else []
        return fingerprint(self.suite, self.config, [self.identity, "scripted", *judged])

    def current(self) -> str | None:
        """The run new trials go into, if there is one yet."""
        if self.fresh:
            return None
        return self.store.latest(self.fingerprint, unfinished=True)

    def taken(self, run_id: str | None, task_id: str) -> set[int]:
        if run_id is None:
            return set()
        variant = self.config.variants[0]
        return {
            trial
            for key_variant, model, key_task, trial in self.store.done(run_id)
            if (key_variant, model, key_task) == (variant, "", task_id)
        }

    def choose_trial(self, task_id: str, wanted: int | None) -> int:
        """--trial as given (checked), else the first trial the run lacks."""
        trials = self.config.trials
        run_id = self.current()
        taken = self.taken(run_id, task_id)
        if wanted is None:
            free = [i for i in range(trials) if i not in taken]
            if not free:
                raise UsageError(
                    f"run {run_id} already has all {trials} trials of task '{task_id}': "
                    "start a new run with --fresh"
                )
            return free[0]
        if wanted >= trials:
            raise UsageError(f"--trial {wanted}: the run has {trials} trials per task (0..)")
        if wanted in taken:
            raise UsageError(
                f"run {run_id} already has trial {wanted} of task '{task_id}': omit --trial to "
                "take the next free one, or start a new run with --fresh"
            )
        return wanted

    def write(self, result: TrialResult) -> str:
        """Store a graded trial; the run is created at its first trial and finished at its
        last."""
        run_id = self.current()
        if run_id is None:
            run_id = self.store.create_run(
                suite_name=self.suite.name,
                suite_version=self.suite.file.version,
                suite_hash=self.suite.content_hash,
                fingerprint=self.fingerprint,
                agent=self.label,
                config=self.config,
                tasks=task_rows(self.suite, [self.suite.task(t) for t in self.config.tasks]),
                version=__version__,
            )
            self.fresh = False
        self.store.write(run_id, result)
        if len(self.store.done(run_id)) >= self.config.trials * len(self.config.tasks):
            self.store.finish(run_id)
        return run_id


async def serve(
    suite: Suite,
    *,
    task_id: str,
    trial: int | None = None,
    trials: int | None = None,
    faults: str | None = None,
    drift: str | None = None,
    seed: int | None = None,
    time_scale: float = 1.0,
    transport: Transport = "stdio",
    port: int = 8765,
    label: str = "mcp",
    finish: str = "finish",
    judge_model: str | None = None,
    store: Store,
    fresh: bool = False,
    say: Callable[[str], None] = lambda _: None,
) -> tuple[TrialResult | None, str | None]:
    """Serve one trial until it ends; (its graded result, the run it was stored in). A task
    with a rubric and no judge model is a usage error before anything is served."""
    try:
        import mcp.server  # noqa: F401
    except ImportError:
        raise UsageError("serve-tools needs the MCP SDK: pip install 'mcp>=2.3,<3'") from None
    task = suite.task(task_id)
    request = RunRequest(
        agent=f"mcp:{label}",
        trials=trials,
        seed=seed,
        faults=faults,
        drift=drift,
        time_scale=time_scale,
        judge_model=judge_model,
    )
    config = run_config(suite, request, served=task)
    wiring = await build(suite, config, expected=await gold_replays(suite, [task]))
    judge = wiring.judge.identity if wiring.judge else None
    run = ServedRun(store, suite, config, label, fresh, judge)
    index = run.choose_trial(task.id, trial)
    variant = config.variants[0]
    spec = PlannedTrial(
        task_id=task.id,
        trial=index,
        seed=derive_seed(config.seed, variant, task.id, index),
        variant=variant,
    )
    schemas = Gateway(
        suite.tools,
        ToolContext(World(suite.start_state(task)), spec.seed),
        Transcript(),
        wiring.variants[variant].conditions(task, spec.seed),
    ).schemas
    if any(s.name == finish for s in schemas):
        raise UsageError(f"the suite has a tool named '{finish}': choose --finish-tool NAME")
    stored: list[str] = []

    def record(result: TrialResult) -> None:
        stored.append(run.write(result))

    served = ServedTrial(wiring, spec, label, record)
    server = build_server(served, schemas, finish)
    where = f" ({variant})" if variant else ""
    say(
        f"serving task '{task.id}' of suite '{suite.name}', trial {index}{where}: "
        f"{len(schemas)} tools and '{finish}' over {transport}"
    )
    say(f"the user says: {served.opening}")
    if transport == "stdio":
        result = await serve_stdio(server, served)
    else:
        result = await serve_http(server, served, port, say)
    return result, stored[0] if stored else None
