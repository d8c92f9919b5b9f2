"""The Ray executor: trials fan out to async actors on a Ray cluster.

Each actor loads the suite once (from its folder where the worker sees the same content, else
from a copy the driver ships), builds its own model clients and runs many trials at once. The
driver plans every trial with the seeds `toolproof run` always derives, decides how many are in
flight, and alone writes the store: a Ray run stores what a local run of the same command
stores. The trials of a load variant all go to one actor, because the shared capacity they
contend for is what the variant measures.
"""

from __future__ import annotations

import asyncio
import io
import math
import os
import socket
import tarfile
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolproof.config import config_path, load_config
from toolproof.errors import ToolproofError, UsageError
from toolproof.models.http import close_shared
from toolproof.models.registry import key_variables
from toolproof.records.run import RunConfig
from toolproof.records.trial import TrialResult
from toolproof.runner.build import RunOne, Wiring, build
from toolproof.runner.gold import GoldReplay
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.variants import Variant
from toolproof.suite.loaded import Suite

EXTRA_HINT = "install it with: pip install 'toolproof[ray]'"
SKIPPED = {"__pycache__", ".git", ".venv", "node_modules"}
MAX_SHIPPED = 64 * 1024 * 1024
CLOSE_S = 10.0


@dataclass(frozen=True)
class ActorSetup:
    """What every actor is built from. Model settings arrive unredacted and credentials as
    the driver's own values: they live in the actors' memory only, never in the store."""

    suite_path: str
    suite_hash: str
    suite_archive: bytes
    config: RunConfig
    expected: dict[str, GoldReplay]
    secrets: dict[str, str]
    config_file: bytes | None
    slots: int


class TrialActor:
    """One Ray worker process: the suite loaded once, many trials in flight on its loop."""

    def __init__(self, setup: ActorSetup) -> None:
        self.setup = setup
        self.run_one: RunOne | None = None
        self.suite: Suite | None = None
        self.unpacked: tempfile.TemporaryDirectory[str] | None = None

    async def start(self) -> str:
        """Load the suite and build the run's trials (`runner.build`, as the driver does);
        returns the suite's content hash so the driver can refuse a worker that sees a
        different suite."""
        setup = self.setup
        os.environ.update(setup.secrets)
        if setup.config_file is not None:
            self.unpacked = tempfile.TemporaryDirectory(prefix="toolproof-actor-")
            path = Path(self.unpacked.name) / "toolproof.yaml"
            path.write_bytes(setup.config_file)
            os.environ["TOOLPROOF_CONFIG"] = str(path)
        suite = self.suite = self._load()
        wiring = await build(suite, setup.config, slots=setup.slots, expected=setup.expected)
        self.run_one = wiring.runner()
        return suite.content_hash

    def _load(self) -> Suite:
        """The suite from its own folder when this machine has the same content there, else
        from the driver's copy (a cluster's workers rarely share the driver's disk)."""
        from toolproof.suite import load_suite

        folder = Path(self.setup.suite_path)
        if folder.is_dir():
            suite = load_suite(folder)
            if suite.content_hash == self.setup.suite_hash:
                return suite
            close_suite(suite)
        if self.unpacked is None:
            self.unpacked = tempfile.TemporaryDirectory(prefix="toolproof-actor-")
        with tarfile.open(fileobj=io.BytesIO(self.setup.suite_archive)) as archive:
            archive.extractall(self.unpacked.name, filter="data")
        return load_suite(Path(self.unpacked.name) / folder.name)

    async def run(self, spec: PlannedTrial) -> TrialResult:
        assert self.run_one is not None, "start() builds the trials first"
        return await self.run_one(spec)

    async def close(self) -> None:
        await close_shared()
        if self.suite is not None:
            close_suite(self.suite)


def close_suite(suite: Suite) -> None:
    if suite.runtime is not None:
        suite.runtime.close()


class ActorPool:
    """The driver's side: which actor takes the next trial (the one with fewest in flight;
    a load variant's always the first), and the call itself."""

    def __init__(self, ray: Any, actors: list[Any]) -> None:
        self.ray = ray
        self.actors = actors
        self.in_flight = [0] * len(actors)

    async def run(self, spec: PlannedTrial) -> TrialResult:
        index = 0 if Variant.parse(spec.variant).load else self.in_flight.index(min(self.in_flight))
        self.in_flight[index] += 1
        try:
            result: TrialResult = await answer(self.ray, self.actors[index].run.remote(spec))
        finally:
            self.in_flight[index] -= 1
        return result


async def answer(ray: Any, call: Any) -> Any:
    """An actor call's value; a user error raised in the actor is raised here as itself, so
    it prints as one line like any other."""
    try:
        return await call
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, ToolproofError):
            raise exc.cause from None
        raise


@asynccontextmanager
async def ray_trials(wiring: Wiring, address: str | None) -> AsyncIterator[RunOne]:
    """Start the actors (connecting to the cluster, or starting a local one), yield the call
    that runs one trial on them, and stop them when the run ends. Each actor builds the run
    from its config and the driver's gold replays."""
    suite, config = wiring.suite, wiring.config
    ray = import_ray()
    started = connect(ray, address)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        count = max(1, min(config.concurrency, cpus))
        loads = [Variant.parse(v).load or 0 for v in config.variants]
        peak = max([config.concurrency, *loads])
        setup = ActorSetup(
            suite_path=str(suite.root),
            suite_hash=suite.content_hash,
            suite_archive=archive(suite.root),
            config=config,
            expected=wiring.expected,
            secrets=credentials(suite),
            config_file=config_file(),
            slots=peak if any(loads) else math.ceil(config.concurrency / count),
        )
        remote = ray.remote(num_cpus=1, max_concurrency=peak + 1)(TrialActor)
        actors = [remote.remote(setup) for _ in range(count)]
        try:
            hashes = await asyncio.gather(*(answer(ray, a.start.remote()) for a in actors))
            if set(hashes) != {suite.content_hash}:
                raise UsageError(
                    f"a Ray worker loaded suite '{suite.name}' with different content than "
                    "this machine; give the workers the same suite folder"
                )
            yield ActorPool(ray, actors).run
        finally:
            await stop(ray, actors)
    finally:
        if started:
            ray.shutdown()


async def stop(ray: Any, actors: list[Any]) -> None:
    """Let each actor close its connections and the suite's live parts, then end it; an actor
    that does not answer in time is ended anyway."""
    closing = asyncio.gather(*(actor.close.remote() for actor in actors), return_exceptions=True)
    with suppress(TimeoutError):
        await asyncio.wait_for(closing, CLOSE_S)
    for actor in actors:
        ray.kill(actor)


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(
            f"--executor ray needs Ray, which is not installed: {EXTRA_HINT}"
        ) from None
    return ray


def connect(ray: Any, address: str | None) -> bool:
    """Join the cluster at `address` (or start a local one); True when this call started
    Ray and so must stop it. An address that does not answer is a usage error at once,
    before Ray's own minutes of retries."""
    if ray.is_initialized():
        return False
    quiet = {"logging_level": "ERROR", "log_to_driver": False}
    if address is None:
        ray.init(include_dashboard=False, **quiet)
        return True
    if address != "auto":
        reachable(address)
    try:
        ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UsageError(
            f"--ray-address {address}: cannot join the Ray cluster: {exc} (a cluster with "
            "token authentication also needs RAY_AUTH_MODE=token and its token)"
        ) from None
    return True


def reachable(address: str) -> None:
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--ray-address {address}: expected HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise UsageError(
            f"--ray-address {address}: no Ray cluster answers there ({exc.strerror or exc}); "
            "start one with `ray start --head` or give its address"
        ) from None


def archive(root: Path) -> bytes:
    """The suite folder as a tar.gz, for workers that do not see the driver's disk."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root, arcname=root.name, filter=lambda m: None if skipped(m.name) else m)
    if buffer.tell() > MAX_SHIPPED:
        raise UsageError(
            f"{root}: the suite folder is {buffer.tell() // 2**20} MiB compressed, more than "
            f"Ray workers are sent ({MAX_SHIPPED // 2**20} MiB); move large data out of it"
        )
    return buffer.getvalue()


def skipped(name: str) -> bool:
    return any(part in SKIPPED for part in Path(name).parts)


def credentials(suite: Suite) -> dict[str, str]:
    """The driver's API keys the run's models may need: the providers' usual variables and
    any a model entry names."""
    names = key_variables()
    for entry in [*load_config().models.values(), *suite.file.models.values()]:
        if entry.api_key_env:
            names.add(entry.api_key_env)
    return {name: os.environ[name] for name in sorted(names) if os.environ.get(name)}


def config_file() -> bytes | None:
    path = config_path()
    return path.read_bytes() if path is not None else None
