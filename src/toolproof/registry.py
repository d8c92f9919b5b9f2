"""One way to plug in a provider, an agent, a backend kind or a grader: by name, loaded lazily.

A registration is a factory that returns the implementation, plus the optional packages it
needs. The factory runs when its entry is first asked for, so a run pays only for what it
uses, and asking for an entry whose package is not installed is a usage error that says what
to install:

    PROVIDERS: Registry[Provider] = Registry("provider")

    @PROVIDERS.register("local", packages=("llama_cpp",), extra="local")
    def embedded_model() -> Provider: ...

    PROVIDERS.get("local")  # UsageError: ... pip install 'toolproof[local]'

An installed package adds entries through the entry point group `toolproof.plugins`: an entry
point named `ROLE.NAME` (`agent.clerk`, `provider.desk`, `backend.ftp`, `grader.signed`) names
a factory like the ones registered here. Installed packages are read only when a name is
asked for that no built-in has, or the names are listed; a plug-in is imported only then.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from toolproof.errors import ToolproofError, UsageError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")

PLUGIN_GROUP = "toolproof.plugins"
"""The entry point group installed packages register their providers, agents, backend kinds
and graders in."""


@cache
def installed_plugins() -> tuple[EntryPoint, ...]:
    """The entry points of the group, read from the installed packages' metadata once (no
    plug-in is imported to read them)."""
    from importlib.metadata import entry_points  # reads every installed package: on demand

    return tuple(entry_points(group=PLUGIN_GROUP))


def loaded_plugin(point: EntryPoint, role: str) -> Callable[[], Any]:
    """The factory an entry point names, imported now; an import that fails, or a name that
    is not a factory, is a usage error that names the package, the entry point and why."""
    package = f"plug-in package '{point.dist.name}'" if point.dist else "a plug-in package"
    where = f"{package}, entry point '{point.name} = {point.value}' (group {PLUGIN_GROUP})"
    try:
        factory = point.load()
    except Exception as exc:  # whatever the package's import raises: it is the package's fault
        raise UsageError(
            f"{role} '{point.name.partition('.')[2]}' of {where} failed to import: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not callable(factory):
        raise UsageError(f"{where}: names {type(factory).__name__}, not a factory of a {role}")

    def made() -> Any:
        try:
            return factory()
        except ToolproofError:
            raise
        except Exception as exc:
            raise UsageError(
                f"{role} '{point.name.partition('.')[2]}' of {where}: its factory failed: "
                f"{type(exc).__name__}: {exc}"
            ) from None

    return made


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

    def __init__(self, role: str, plugins: str | None = None) -> None:
        """`plugins`: the ROLE part of the entry point names installed packages register
        this role's entries under (`agent` for `agent.clerk`); None takes none."""
        self.role = role
        self.plugins = plugins
        self._entries: dict[str, Registration[T]] = {}
        self._loaded: dict[str, T] = {}

    def _plugins(self) -> dict[str, EntryPoint]:
        """The installed packages' entries of this role by name, those a built-in has left
        out (a built-in name is never taken over)."""
        if self.plugins is None:
            return {}
        prefix = f"{self.plugins}."
        return {
            name: point
            for point in installed_plugins()
            if point.name.startswith(prefix)
            and (name := point.name.removeprefix(prefix))
            and name not in self._entries
        }

    def _entry(self, name: str) -> Registration[T] | None:
        """The registration of `name`: a built-in one, or an installed package's (its
        factory imported now, and kept)."""
        entry = self._entries.get(name)
        if entry is not None:
            return entry
        point = self._plugins().get(name)
        if point is None:
            return None
        factory = loaded_plugin(point, self.role)
        self._entries[name] = Registration(name, factory, (), "", name)
        return self._entries[name]

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
        entry = self._entry(name)
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
        """The names whose packages are all installed, installed plug-ins' included."""
        return [name for name in self if not self._entries[name].missing()]

    def known(self) -> str:
        """The names as a user writes them, for messages that list them (an installed
        plug-in's among them, read without importing it)."""
        shown = [entry.shown for entry in self._entries.values()]
        return ", ".join([*shown, *self._plugins()])

    def registrations(self) -> list[Registration[T]]:
        """Every registration, installed plug-ins' imported and added after the built-ins."""
        return [self._entries[name] for name in self]

    def __contains__(self, name: object) -> bool:
        return name in self._entries or (isinstance(name, str) and name in self._plugins())

    def __iter__(self) -> Iterator[str]:
        """The names in order, installed plug-ins' last: each plug-in is imported, since
        what iterates uses every entry (every grader grades every trial)."""
        for name in self._plugins():
            self._entry(name)
        return iter(list(self._entries))
