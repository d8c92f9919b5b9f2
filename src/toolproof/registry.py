"""One way to plug in a provider, an agent, a backend kind or a grader: by name, loaded lazily.

A registration is a factory that returns the implementation, plus the optional packages it
needs. The factory runs when its entry is first asked for, so a run pays only for what it
uses, and asking for an entry whose package is not installed is a usage error that says what
to install:

    PROVIDERS: Registry[Provider] = Registry("provider")

    @PROVIDERS.register("local", packages=("llama_cpp",), extra="local")
    def embedded_model() -> Provider: ...

    PROVIDERS.get("local")  # UsageError: ... pip install 'toolproof[local]'
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from toolproof.errors import UsageError

T = TypeVar("T")


@dataclass(frozen=True)
class Registration(Generic[T]):
    """One entry: its name, its factory, and what it needs installed."""

    name: str
    load: Callable[[], T]
    packages: tuple[str, ...]
    """Top-level modules the implementation imports that toolproof does not require."""
    extra: str
    """The `toolproof[...]` extra that installs them."""
    shown: str
    """How the name is written where the known names are listed (`scripted:FILE`)."""

    def missing(self) -> list[str]:
        """The packages that are not installed (found without importing them)."""
        return [name for name in self.packages if importlib.util.find_spec(name) is None]


class Registry(Generic[T]):
    """The named implementations of one role, in the order they were registered."""

    def __init__(self, role: str) -> None:
        self.role = role
        self._entries: dict[str, Registration[T]] = {}
        self._loaded: dict[str, T] = {}

    def register(
        self,
        name: str,
        *,
        packages: tuple[str, ...] = (),
        extra: str | None = None,
        shown: str | None = None,
    ) -> Callable[[Callable[[], T]], Callable[[], T]]:
        """Register the decorated factory under `name`; a name is registered once, and the
        optional packages it needs come with the extra that installs them."""

        def add(load: Callable[[], T]) -> Callable[[], T]:
            if name in self._entries:
                raise ValueError(f"{self.role} {name!r} is already registered")
            if packages and not extra:
                raise ValueError(f"{self.role} {name!r}: name the extra that installs {packages}")
            self._entries[name] = Registration(name, load, packages, extra or "", shown or name)
            return load

        return add

    def unregister(self, name: str) -> None:
        """Take an entry out again (a plug-in that is replaced, or one a test added)."""
        del self._entries[name]
        self._loaded.pop(name, None)

    def get(self, name: str, *, where: str = "") -> T:
        """The implementation registered as `name`, made by its factory on first use.
        `where` says what asked for it (`model local/smollm2`), to begin an error with."""
        if name in self._loaded:
            return self._loaded[name]
        entry = self._entries.get(name)
        at = f"{where}: " if where else ""
        if entry is None:
            raise UsageError(f"{at}unknown {self.role} {name!r}; use one of {self.known()}")
        missing = entry.missing()
        if missing:
            raise UsageError(
                f"{at}{self.role} '{name}' needs {', '.join(missing)}, which is not installed: "
                f"pip install 'toolproof[{entry.extra}]'"
            )
        self._loaded[name] = entry.load()
        return self._loaded[name]

    def installed(self) -> list[str]:
        """The names whose packages are all installed."""
        return [name for name, entry in self._entries.items() if not entry.missing()]

    def known(self) -> str:
        """The names as a user writes them, for messages that list them."""
        return ", ".join(entry.shown for entry in self._entries.values())

    def registrations(self) -> list[Registration[T]]:
        return list(self._entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))
