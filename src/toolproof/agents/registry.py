"""Agents by name, as the command line gives them: oracle, the adversarial baselines,
scripted:FILE, external agents, or models.

Every name is an entry of `AGENTS`; an entry whose name ends in `:` takes what follows it
(`scripted:FILE`, `python:MODULE:FUNCTION`, `http://URL`). An agent is one implementation
plus one registration here."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolproof.agents.base import Agent, AgentFactory, TrialContext
from toolproof.agents.baselines import ADVERSARIES, OracleAgent, RetryingOracle
from toolproof.agents.loop import LoopAgent
from toolproof.config import load_config
from toolproof.errors import UsageError
from toolproof.models.base import ModelClient
from toolproof.models.pricing import PriceTable
from toolproof.models.registry import build_client, choose_model
from toolproof.models.scripted import ScriptedModel, load_script
from toolproof.registry import Registry
from toolproof.spec.overrides import ModelOverrides
from toolproof.spec.task import Task
from toolproof.suite.loaded import Suite
from toolproof.transcript import Transcript
from toolproof.users.llm import LLMUser
from toolproof.users.scripted import Desk, ScriptedUsers, User, UserFactory


@dataclass(frozen=True)
class AgentChoice:
    """A resolved agent: how to build one per trial, its trials' model, and its identity."""

    label: str
    factory: AgentFactory
    identity: str
    model: str = ""


Resolve = Callable[[str], AgentChoice]
"""Turns a whole --agent value into the agent it names."""

AGENTS: Registry[Resolve] = Registry("agent", plugins="agent")


def fixed(factory: AgentFactory) -> Callable[[], Resolve]:
    """The registration of a built-in agent without settings: its name is its identity."""

    def load() -> Resolve:
        return lambda spec: AgentChoice(spec, factory, spec)

    return load


AGENTS.register("oracle")(fixed(OracleAgent))
AGENTS.register("retrying-oracle")(fixed(RetryingOracle))
for _name, _adversary in ADVERSARIES.items():
    AGENTS.register(_name)(fixed(_adversary))


@AGENTS.register("scripted:", shown="scripted:FILE")
def scripted() -> Resolve:
    return scripted_agent


@AGENTS.register("python:", shown="python:MODULE:FUNCTION")
def python_function() -> Resolve:
    from toolproof.agents.external import python_agent

    return python_agent


@AGENTS.register("https:", shown="https://URL")
@AGENTS.register("http:", shown="http://URL")
def http_service() -> Resolve:
    from toolproof.agents.external import http_agent

    return http_agent


def resolve_agent(spec: str) -> AgentChoice:
    """Turn an --agent value into a factory; unknown names are usage errors."""
    head, colon, _ = spec.partition(":")
    name = spec if spec in AGENTS else head + colon
    if name not in AGENTS:
        raise UsageError(
            f"--agent {spec!r}: unknown agent; use one of {AGENTS.known()} "
            "(or --model provider/name)"
        )
    return AGENTS.get(name)(spec)


def scripted_agent(spec: str) -> AgentChoice:
    """`scripted:FILE`: the built-in loop over a model that replays the file's turns."""
    path = Path(spec.removeprefix("scripted:"))
    if not path.is_file():
        raise UsageError(f"--agent {spec}: script file not found")
    script = load_script(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]

    def make(context: TrialContext) -> Agent:
        model = ScriptedModel(script.turns_for(context.task.id), script.latency_s)
        return LoopAgent(model, context)

    return AgentChoice(spec, make, f"scripted:{digest}")


def model_agent(name: str, identity: str, client: ModelClient) -> AgentChoice:
    """The built-in loop over one model client, shared by all of that model's trials."""

    def loop(context: TrialContext) -> Agent:
        return LoopAgent(client, context)

    return AgentChoice(name, loop, identity, model=name)


def resolve_agents(
    agent: str | None,
    models: list[str],
    suite: Suite,
    overrides: ModelOverrides,
    concurrency: int | None = None,
) -> list[AgentChoice]:
    """The agents of a run: one per model, or one baseline or script. `concurrency` is the
    most trials the run has at once (where each model's limit of calls in flight starts)."""
    if not models:
        choice = resolve_agent(agent or "oracle")
        if agent is not None and agent.startswith("scripted:"):
            load_script(agent.removeprefix("scripted:"), {task.id for task in suite.tasks})
        return [choice]
    python = agent is not None and agent.startswith("python:")
    if agent not in (None, "model") and not python:
        raise UsageError(
            f"--agent {agent} and --model cannot be combined: pick one "
            "(only a python: agent takes --model, through the model bridge)"
        )
    if len(set(models)) != len(models):
        raise UsageError("--model: each model once")
    if python:
        from toolproof.agents.external import bridged_python_agents

        clients = [(name, *model_client(name, suite, overrides, concurrency)) for name in models]
        return bridged_python_agents(str(agent), clients)
    out = []
    for name in models:
        identity, client = model_client(name, suite, overrides, concurrency)
        out.append(model_agent(name, identity, client))
    return out


def model_client(
    name: str, suite: Suite, overrides: ModelOverrides, concurrency: int | None = None
) -> tuple[str, ModelClient]:
    """(identity, client) for a model, with settings from config, suite and the run's
    overrides."""
    config = load_config()
    prices = PriceTable({**config.prices, **suite.file.prices})
    choice = choose_model(name, config, suite.file.models, overrides)
    return choice.identity, build_client(choice, config, prices, concurrency)


def desk(suite: Suite) -> Desk:
    """What a suite's scripted users know of its tools."""
    return Desk(
        writes=frozenset(name for name, b in suite.tools.items() if b.write),
        reads=frozenset(name for name, b in suite.tools.items() if not b.write),
        parameters={name: b.schema.parameters for name, b in suite.tools.items()},
        descriptions={name: b.schema.description for name, b in suite.tools.items()},
    )


def resolve_user(
    name: str | None, suite: Suite, overrides: ModelOverrides, concurrency: int | None = None
) -> tuple[str, UserFactory]:
    """The user side of a run: scripted turns, or a model simulating every task's user
    (the run's model overrides apply to it too)."""
    if name is None:
        return "scripted", ScriptedUsers(desk(suite))
    identity, client = model_client(name, suite, overrides, concurrency)

    def simulated(task: Task, transcript: Transcript, seed: int) -> User:
        return LLMUser(client, task.spec.user, task.spec.story, transcript, seed)

    return identity, simulated
