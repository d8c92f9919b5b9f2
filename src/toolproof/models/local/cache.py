"""KV snapshots of long prompts kept on disk, so that the next run need not evaluate them."""

from __future__ import annotations

import ctypes
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from toolproof.models.local.snapshot import Snapshot, common_prefix

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class DiskCache:
    """KV snapshots of long prompts kept on disk between runs, a few per model file.

    A run's first turn evaluates the suite's whole system prompt (policy and tools: ~4,000
    tokens and ~50 s for the retail suite); the next run on the same machine restores it from
    here instead. Files are keyed by the model file (path, size, modification time) and the
    context size; writes go through a temporary file and a rename, so concurrent runs never
    read half a file. The folder is `$TOOLPROOF_CACHE_DIR`, else `$XDG_CACHE_HOME/toolproof`,
    else `~/.cache/toolproof`; `TOOLPROOF_CACHE_DIR=off` turns it off.
    """

    KEEP = 4

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def for_model(cls, path: str, n_ctx: int) -> DiskCache | None:
        """The cache of a model file at a context size; None when it is turned off."""
        root = os.environ.get("TOOLPROOF_CACHE_DIR", "")
        if root.lower() == "off":
            return None
        if not root:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
            root = os.path.join(base, "toolproof")
        try:
            stat = os.stat(path)
        except OSError:
            return None
        key = f"{os.path.realpath(path)}|{stat.st_size}|{stat.st_mtime_ns}|{n_ctx}"
        return cls(Path(root) / "kv" / hashlib.sha256(key.encode()).hexdigest()[:16])

    def best(self, wanted: npt.NDArray[np.intc], at_least: int) -> Snapshot | None:
        """The saved snapshot sharing the longest prefix with `wanted`, if it shares at least
        `at_least` tokens; unreadable files are skipped."""
        import numpy as np

        found: tuple[int, Path] | None = None
        for file in sorted(self.folder.glob("*.kv")):
            try:
                with file.open("rb") as handle:
                    count = int(np.frombuffer(handle.read(4), dtype=np.int32)[0])
                    tokens = np.frombuffer(handle.read(4 * count), dtype=np.intc)
            except (OSError, ValueError, IndexError):
                continue
            shared = common_prefix(tokens, wanted)
            if shared >= at_least and (found is None or shared > found[0]):
                found = (shared, file)
        if found is None:
            return None
        try:
            data = found[1].read_bytes()
            os.utime(found[1])
        except OSError:
            return None
        count = int(np.frombuffer(data[:4], dtype=np.int32)[0])
        tokens = np.frombuffer(data[4 : 4 + 4 * count], dtype=np.intc).copy()
        state = (ctypes.c_uint8 * (len(data) - 4 - 4 * count)).from_buffer_copy(data, 4 + 4 * count)
        return Snapshot(tokens, state)

    def save(self, snap: Snapshot) -> None:
        """Keep a snapshot (best effort: a full disk or a read-only home costs only speed)."""
        import numpy as np

        tokens = np.asarray(snap.tokens, dtype=np.intc)
        name = hashlib.sha256(tokens.tobytes()).hexdigest()[:24] + ".kv"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            target = self.folder / name
            if target.exists():
                os.utime(target)
                return
            temp = target.with_suffix(f".{os.getpid()}.tmp")
            with temp.open("wb") as handle:
                handle.write(np.asarray([len(tokens)], dtype=np.int32).tobytes())
                handle.write(tokens.tobytes())
                handle.write(bytes(snap.state))
            os.replace(temp, target)
            saved = sorted(self.folder.glob("*.kv"), key=lambda f: f.stat().st_mtime)
            for old in saved[: max(0, len(saved) - self.KEEP)]:
                old.unlink(missing_ok=True)
        except OSError:
            return
