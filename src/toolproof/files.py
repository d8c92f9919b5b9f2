"""Writing outputs so that a failed or killed write never leaves half a file.

A file is written to a temporary file beside it and renamed into place; a folder of files
(a suite that `init` or an importer writes) is written in a temporary folder beside it and
renamed into place at the end. A write that fails, for a full disk or an interruption, leaves
the previous file whole, or nothing at all.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from toolproof.errors import UsageError


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable, where the platform allows it."""
    with suppress(OSError, AttributeError):
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def write_atomic(path: str | Path, data: str | bytes, flag: str) -> Path:
    """Write `data` (text as UTF-8) to `path`, its folder made: into a temporary file in
    the same folder, flushed to disk and renamed over `path`. A link is followed, so the
    file it points to is replaced. On any failure the temporary file is removed and the file
    at `path` is as it was; an OSError is a usage error naming `flag`. Returns the file
    written."""
    target = Path(os.path.realpath(path))
    content = data.encode("utf-8") if isinstance(data, str) else data
    temp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(handle, "wb") as file:
            file.write(content)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
        temp = None
        _sync_folder(target.parent)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None
    finally:
        if temp is not None:
            with suppress(OSError):
                os.unlink(temp)
    return target


def refuse_filled_folder(folder: Path, flag: str) -> Path:
    """The folder `folder` names, resolved (links and `..` followed as the system follows
    them); a usage error unless it is missing or an empty folder."""
    target = Path(os.path.realpath(folder))
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        what = "a folder that is not empty" if target.is_dir() else "a file"
        shown = f"{folder}" if target == Path(folder).absolute() else f"{folder} ({target})"
        raise UsageError(f"{flag} {shown}: {what}; give a new or empty folder")
    return target


@contextmanager
def staged_folder(folder: Path, flag: str) -> Iterator[Path]:
    """A temporary folder beside `folder` to write a whole folder of files in, renamed to
    `folder` when the block ends without an error; on an error or an interruption it is
    removed, and `folder` is as it was. `folder` must be missing or empty (checked on the
    path it resolves to, before anything is written)."""
    target = refuse_filled_folder(folder, flag)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(
            tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        )
    except OSError as exc:
        raise UsageError(f"{flag} {folder}: cannot write there: {exc.strerror or exc}") from None
    try:
        yield staging
        os.chmod(staging, 0o777 & ~_umask())
        refuse_filled_folder(folder, flag)  # filled meanwhile: leave it as it is
        if target.is_dir():
            target.rmdir()
        os.rename(staging, target)
        _sync_folder(target.parent)
    except OSError as exc:
        raise UsageError(f"{flag} {folder}: cannot write there: {exc.strerror or exc}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
