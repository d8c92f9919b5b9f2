"""The model bridge: a Python agent's own OpenAI and Anthropic SDK calls, made part of its trial.

Teams write agents with the official SDKs (or frameworks built on them). While such an agent
runs in a trial, every call its code makes through `openai` (Chat Completions, Responses;
sync and async clients) or `anthropic` (Messages; sync and async) is either answered by the
run's model (`--model`, any provider toolproof has: the same agent measured on another model
without a change) or, with no `--model`, sent where the agent sends it. Either way it is a
model call of the trial like the built-in loop's: tokens, cost, latency, `max_steps`, the
trial's seed, retries and rate limits of the run's provider, OTel spans, `toolproof show`.
"""

from toolproof.agents.bridge.core import Bridge, active, bridging
from toolproof.agents.bridge.patch import install

__all__ = ["Bridge", "active", "bridging", "install"]
