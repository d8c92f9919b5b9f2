"""Reading a file a user hands toolproof (a suite's files, results to import, a trace): only
a regular file, and at most `max_file_bytes()` of it. A link to /dev/zero would otherwise
grow memory without end, a FIFO would block the command forever, a symlink loop would raise.

The limit is TOOLPROOF_MAX_FILE_MB megabytes (default 64), for every file alike.
"""

from __future__ import annotations

import errno
import os
import stat
import zlib
from pathlib import Path

from toolproof.errors import UsageError

MAX_FILE_ENV = "TOOLPROOF_MAX_FILE_MB"
DEFAULT_MAX_FILE_MB = 64


class FileProblem(Exception):
    """Why a file cannot be read, in a few words (`file not found`, `a symlink loop`)."""


def max_file_bytes() -> int:
    """The most bytes toolproof reads of one file (decompressed, for a .gz)."""
    text = os.environ.get(MAX_FILE_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_FILE_MB * 2**20
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = -1.0
    if not 0 < megabytes <= 2**20:  # nan fails this too
        raise UsageError(
            f"{MAX_FILE_ENV}={text}: give the largest file toolproof may read, in megabytes "
            "(a number above 0, at most 1048576)"
        )
    return int(megabytes * 2**20)


def read_file(path: Path) -> bytes:
    """The bytes of a regular file no larger than the limit; else FileProblem. Opened
    without blocking, so a FIFO is refused instead of waited on."""
    limit = max_file_bytes()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise FileProblem(failure(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileProblem(f"not a regular file ({kind(info.st_mode)}); give a file")
        if info.st_size > limit:
            raise FileProblem(too_large(limit))
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(limit + 1)  # a file of /proc says it is empty
    except OSError as exc:
        raise FileProblem(failure(exc)) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileProblem(too_large(limit))
    return data


def gunzip(data: bytes) -> bytes:
    """A .gz file's content, refused once it grows past the limit (a small file can unpack
    to gigabytes); a damaged one raises zlib.error or EOFError."""
    limit = max_file_bytes()
    inflater = zlib.decompressobj(wbits=31)
    out = inflater.decompress(data, limit + 1)
    if len(out) > limit:
        raise FileProblem(too_large(limit, "unpacked"))
    if not inflater.eof:
        raise EOFError("the compressed data ends early")
    return out


def too_large(limit: int, what: str = "") -> str:
    size = f"{limit / 2**20:g} MB"
    return f"larger {what + ' ' if what else ''}than {size}; raise {MAX_FILE_ENV} to read it"


def kind(mode: int) -> str:
    """What a path that is not a regular file is, in words."""
    kinds = {
        stat.S_ISDIR: "a folder",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISCHR: "a device",
        stat.S_ISBLK: "a device",
        stat.S_ISSOCK: "a socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a plain file")


def failure(exc: OSError) -> str:
    """An OSError as the few words a located line ends with."""
    if exc.errno == errno.ENOENT:
        return "file not found"
    if exc.errno == errno.ELOOP:
        return "a symlink loop"
    if exc.errno == errno.ENXIO:
        return "not a regular file (a socket); give a file"
    return f"cannot read: {exc.strerror or exc}"


def resolved(path: Path) -> Path | None:
    """The real path (symlinks followed), or None for a symlink loop."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # RuntimeError before Python 3.13
        return None
