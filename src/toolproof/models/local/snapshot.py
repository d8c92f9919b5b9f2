"""A conversation's KV state, and how much of a new prompt it covers."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


@dataclass
class Snapshot:
    """The KV cache of sequence 0 after evaluating `tokens`, as llama.cpp serialises it."""

    tokens: npt.NDArray[np.intc]
    state: ctypes.Array[ctypes.c_uint8]


def common_prefix(a: npt.NDArray[np.intc], b: npt.NDArray[np.intc]) -> int:
    """How many tokens `a` and `b` share from the start."""
    import numpy as np

    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def is_prefix(a: npt.NDArray[np.intc], b: npt.NDArray[np.intc]) -> bool:
    """Whether `b` starts with all of `a`."""
    return len(a) <= len(b) and common_prefix(a, b) == len(a)
