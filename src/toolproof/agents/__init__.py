"""Agents: the interface, the built-in model loop, and the baselines."""

from toolproof.agents.base import Agent, AgentFactory, TrialContext
from toolproof.agents.baselines import NullAgent, OracleAgent
from toolproof.agents.loop import LoopAgent

__all__ = ["Agent", "AgentFactory", "LoopAgent", "NullAgent", "OracleAgent", "TrialContext"]
