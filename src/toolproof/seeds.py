"""Seeds: one per trial, and from it one independent stream per source of randomness.

A trial's seed derives from (suite seed, variant, task id, trial index) by hashing
(`toolproof.runner.plan.derive_seed`); it does not depend on the model, so every model of a
run meets the same trial. Each source of randomness then draws from its own stream of that
seed, so adding a fault rule never changes what the simulated user says:

- `faults`: the fault injector (which calls fail, latencies, damaged payloads);
- `model`: the model's sampling seed, one per model turn, where the provider accepts one
  (OpenAI and compatible servers: `seed`; the embedded model: llama.cpp's sampler), unless
  the model's settings fix a seed;
- `user`: the simulated user's model, one per turn, likewise; and the words a persona or
  a stretched conversation chooses for the scripted user (`stream_rng`);
- `tools`: `ToolContext.seed`, for Python tools that draw random values;
- `judge`: the judge model grading a rubric, one per call (a criterion's controls, asked once
  for every trial, draw from a seed fixed by their task and criterion instead).

Hooks and checks get the trial's own seed (`{seed}`, `TOOLPROOF_SEED`).
"""

from __future__ import annotations

import hashlib
import random

STREAMS = ("faults", "model", "user", "tools", "judge")


def stream_seed(trial_seed: int, stream: str, index: int = 0) -> int:
    """A 31-bit seed for `stream` (and its `index`-th draw: a model turn) of a trial."""
    if stream not in STREAMS:
        raise ValueError(f"unknown seed stream {stream!r}; streams: {', '.join(STREAMS)}")
    key = f"{stream}:{trial_seed}:{index}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") >> 1


def stream_rng(trial_seed: int, stream: str) -> random.Random:
    """A random generator of its own for `stream` of a trial."""
    if stream not in STREAMS:
        raise ValueError(f"unknown seed stream {stream!r}; streams: {', '.join(STREAMS)}")
    return random.Random(f"{stream}:{trial_seed}")
