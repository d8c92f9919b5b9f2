"""How a turn samples: llama-cpp-python's sampling parameters, and the samplers built from them.

`sampling_parameters` gives what `create_completion` takes; `build_samplers` builds from the
same parameters the penalty and draw samplers that `create_completion` would, for the
generation under a grammar that `grammar.complete_lazily` runs itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolproof.models.base import ModelSettings

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp._internals import LlamaSampler

# llama-cpp-python's sampling parameters by name, as `create_completion` takes them.
Sampling = dict[str, Any]

DEFAULT_TEMPERATURE = 0.8
DEFAULT_REPEAT_PENALTY = 1.1

# The sampling parameters `build_samplers` applies as llama-cpp-python's create_completion
# would; with any other, a call goes through create_completion.
LAZY_SAMPLING = {
    "temperature",
    "seed",
    "repeat_penalty",
    "frequency_penalty",
    "presence_penalty",
    "top_k",
    "top_p",
    "min_p",
    "typical_p",
}


def sampling_parameters(settings: ModelSettings, seed: int) -> Sampling:
    """The parameters of a turn: the settings' temperature, a repeat penalty, `seed`, and
    `settings.extra` as it is (so it can override any of them)."""
    temperature = DEFAULT_TEMPERATURE if settings.temperature is None else settings.temperature
    return {
        "temperature": temperature,
        "repeat_penalty": DEFAULT_REPEAT_PENALTY,
        "seed": seed,
        **settings.extra,
    }


def build_samplers(llama: Llama, sampling: Sampling) -> tuple[LlamaSampler, LlamaSampler]:
    """The repetition penalties and the draw (greedy at temperature 0, else top-k, typical,
    top-p, min-p, temperature and a seeded draw), with create_completion's defaults. The
    caller closes both."""
    import llama_cpp
    from llama_cpp import _internals as internals

    temperature = float(sampling.get("temperature", DEFAULT_TEMPERATURE))
    penalties = internals.LlamaSampler()  # type: ignore[no-untyped-call]
    penalties.add_penalties(
        n_vocab=llama.n_vocab(),
        penalty_last_n=llama.last_n_tokens_size,
        penalty_repeat=float(sampling.get("repeat_penalty", 1.0)),
        penalty_freq=float(sampling.get("frequency_penalty", 0.0)),
        penalty_present=float(sampling.get("presence_penalty", 0.0)),
    )
    draw = internals.LlamaSampler()  # type: ignore[no-untyped-call]
    seed = int(sampling.get("seed", llama_cpp.LLAMA_DEFAULT_SEED))
    if temperature == 0:
        draw.add_greedy()  # type: ignore[no-untyped-call]
    elif temperature < 0:
        draw.add_dist(seed)
    else:
        draw.add_top_k(int(sampling.get("top_k", 40)))
        draw.add_typical(float(sampling.get("typical_p", 1.0)), 1)
        draw.add_top_p(float(sampling.get("top_p", 0.95)), 1)
        draw.add_min_p(float(sampling.get("min_p", 0.05)), 1)
        draw.add_temp(temperature)
        draw.add_dist(seed)
    return penalties, draw
