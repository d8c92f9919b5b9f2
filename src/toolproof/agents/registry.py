"""Agents by name, as the command line gives them: oracle, null, scripted:FILE."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from toolproof.agents.base import Agent, AgentFactory, TrialContext
from toolproof.agents.baselines import NullAgent, OracleAgent
from toolproof.agents.loop import LoopAgent
from toolproof.errors import UsageError
from toolproof.models.scripted import ScriptedModel, load_script

KNOWN = "oracle, null, scripted:FILE"


@dataclass(frozen=True)
class AgentChoice:
    """A resolved --agent: how to build one per trial, and what identifies it in a run."""

    label: str
    factory: AgentFactory
    identity: str


def resolve_agent(spec: str) -> AgentChoice:
    """Turn an --agent value into a factory; unknown names are usage errors."""
    if spec == "oracle":
        return AgentChoice("oracle", OracleAgent, "oracle")
    if spec == "null":
        return AgentChoice("null", NullAgent, "null")
    if spec.startswith("scripted:"):
        path = Path(spec.removeprefix("scripted:"))
        if not path.is_file():
            raise UsageError(f"--agent {spec}: script file not found")
        script = load_script(path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]

        def scripted(context: TrialContext) -> Agent:
            model = ScriptedModel(script.turns_for(context.task.id), script.latency_s)
            return LoopAgent(model, context)

        return AgentChoice(spec, scripted, f"scripted:{digest}")
    raise UsageError(f"--agent {spec!r}: unknown agent; use one of {KNOWN}")
