"""Verdict agreement between toolproof and BFCL's own multi-turn checker on imported suites.

    python bench/bfcl_agreement.py [--entries 20] [--categories base,miss_func,...]

For `--entries` entries of each BFCL v4 multi-turn category, spread evenly over it, six
trajectories are built from the ground truth: the ground truth itself, an agent that does
nothing, the last call dropped, the first argument of the first call changed, the first write
duplicated, and the first two different adjacent calls of a turn swapped. Each is graded by
BFCL's `multi_turn_checker` and by a toolproof run of `toolproof import bfcl`'s suite with a
scripted agent making exactly those calls.

Prints one Markdown row per category and kind (both pass, both fail, toolproof alone passes,
BFCL alone passes), each kind where toolproof is stricter by design marked so; then two
totals, per category and over all: every trajectory, and the headline, the kinds both
graders define alike; then the disagreements the design explains, counted, and every other
one with both graders' reasons. Needs bfcl-eval (docs/bfcl.md).
"""

from __future__ import annotations

import argparse
import sys
import time

from toolproof.importers.bfcl import CATEGORIES
from toolproof.importers.bfcl.agreement import KINDS, STRICTER_BY_DESIGN, Agreement, measure


def table(results: dict[str, Agreement]) -> list[str]:
    """The agreement table as Markdown rows."""
    lines = [
        "| category | trajectory | entries | both pass | both fail | only toolproof passes "
        "| only BFCL passes | agreement |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for category, agreement in results.items():
        for kind in KINDS:
            rows = [g for g in agreement.graded if g.kind == kind]
            if not rows:
                continue
            both_pass = sum(g.toolproof and g.bfcl for g in rows)
            both_fail = sum(not g.toolproof and not g.bfcl for g in rows)
            tp_only = sum(g.toolproof and not g.bfcl for g in rows)
            bfcl_only = sum(g.bfcl and not g.toolproof for g in rows)
            share = (both_pass + both_fail) / len(rows)
            skipped = agreement.not_applicable.get(kind, 0)
            entries = f"{len(rows)}" + (f" ({skipped} n/a)" if skipped else "")
            design = STRICTER_BY_DESIGN.get(kind)
            name = f"{kind} (stricter by design: {design.mark})" if design else kind
            lines.append(
                f"| {category} | {name} | {entries} | {both_pass} | {both_fail} | {tp_only} "
                f"| {bfcl_only} | {share:.0%} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=20, help="entries per category")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    args = parser.parse_args()
    started = time.perf_counter()
    results = {
        c: measure(c, args.entries, lambda line: print(line, file=sys.stderr))
        for c in args.categories.split(",")
    }
    print("\n".join(table(results)))
    every = Agreement([g for a in results.values() for g in a.graded])
    left_out = ", ".join(STRICTER_BY_DESIGN)
    print(f"\n| category | all | headline ({left_out} left out) |\n|---|---|---|")
    for name, agreement in [*results.items(), ("all", every)]:
        cells = [f"{a} of {n} ({a / n:.1%})" for a, n in (agreement.alike(), agreement.alike(True))]
        print(f"| {name} | {' | '.join(cells)} |")
    nothing = [g for g in every.graded if g.kind == "do-nothing" and g.bfcl]
    print(f"\nentries BFCL passes doing nothing: {len(nothing)} {[g.entry for g in nothing]}")
    explained = every.by_design()
    print("\ndisagreements by design:")
    for kind, design in STRICTER_BY_DESIGN.items():
        found = [g.entry for g in explained if g.kind == kind]
        print(
            f"- {kind}: {len(found)}, BFCL passes and toolproof fails ({design.mark}): {design.why}"
        )
        print(f"    {' '.join(found)}")
    print("\nother disagreements:")
    for g in every.unexplained():
        print(f"- {g.entry} {g.kind}: toolproof {'passes' if g.toolproof else 'fails'}")
        print(f"    toolproof: {g.toolproof_reason[:300] or 'passed'}")
        print(f"    BFCL: {g.bfcl_reason[:300] or 'passed'}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
