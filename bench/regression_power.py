"""Trials per task the gate needs to flag a task that regressed: the power table of docs/ci.md.

    python bench/regression_power.py [--alpha 0.05] [--power 0.8] [--tasks 1,10,30,100]

For each drop of a task's pass rate from p to q, the fewest trials per task (in the baseline
and in the candidate alike) at which Fisher's one-sided exact test, with Holm's correction
over the tasks, flags that task with the power asked for, when the other tasks are unchanged.
Computed exactly (`toolproof.metrics.power.trials_for_power`): every pair of pass counts of
the two runs, with its binomial probability. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

from toolproof.metrics.power import trials_for_power

DROPS = (
    ("1.0", "0.0"),
    ("1.0", "0.5"),
    ("1.0", "0.8"),
    ("0.9", "0.5"),
    ("0.9", "0.7"),
    ("0.95", "0.75"),
    ("0.8", "0.4"),
)


def table(alpha: Fraction, power: Fraction, families: list[int]) -> list[str]:
    """The Markdown rows: one drop a row, one number of tasks a column."""
    header = ["drop"] + ["1 task" if m == 1 else f"{m} tasks" for m in families]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for before, after in DROPS:
        cells = [
            str(trials_for_power(Fraction(before), Fraction(after), m, alpha, power))
            for m in families
        ]
        rows.append(f"| {before} → {after} | " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alpha", default="0.05", help="significance level (decimal)")
    parser.add_argument("--power", default="0.8", help="the power wanted (decimal)")
    parser.add_argument("--tasks", default="1,10,30,100", help="numbers of tasks, comma-separated")
    args = parser.parse_args()
    alpha, power = Fraction(args.alpha), Fraction(args.power)
    families = [int(m) for m in args.tasks.split(",")]
    start = time.perf_counter()
    rows = table(alpha, power, families)
    print(
        f"Trials per task, in each run, to flag one regressed task with {float(power):.0%} "
        f"power at alpha {args.alpha} (Fisher one-sided, Holm over the tasks):\n"
    )
    print("\n".join(rows))
    print(f"\n({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
