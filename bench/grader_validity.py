"""Each grading rule's false passes and false failures on a labelled corpus.

    python bench/grader_validity.py [bench/validity/*.yaml] [--show]

Plays every case of the corpus files (bench/validity/ by default) as a trial of its suite's
task, graded by every grader, and prints one Markdown row per rule: honest cases it judged
and how many it failed (false failures), adversarial cases that break it and how many it
passed (false passes). `--show` lists every misjudged case with the rule's reason.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from toolproof.runner.corpus import OUTCOME, Rates, grade_corpus

CORPUS = Path(__file__).parent / "validity"


def _share(count: int, total: int) -> str:
    return f"{count} ({count / total:.1%})" if total else "-"


def table(result: Rates) -> list[str]:
    lines = [
        "| rule | honest cases | false failures | adversarial cases | false passes |",
        "|---|---|---|---|---|",
    ]
    for rule in sorted(result.rules, key=lambda r: (r == OUTCOME, r)):
        rate = result.rules[rule]
        lines.append(
            f"| {rule} | {rate.honest} | {_share(rate.false_failures, rate.honest)} "
            f"| {rate.adversarial} | {_share(rate.false_passes, rate.adversarial)} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--show", action="store_true", help="list every misjudged case")
    args = parser.parse_args()
    files = args.files or sorted(CORPUS.glob("*.yaml"))
    started = time.perf_counter()
    result = asyncio.run(grade_corpus(files))
    seconds = time.perf_counter() - started
    honest = sum(g.case.kind == "honest" for g in result.graded)
    print(
        f"{len(result.graded)} cases ({honest} honest, {len(result.graded) - honest} "
        f"adversarial) from {len(files)} files in {seconds:.1f} s\n"
    )
    print("\n".join(table(result)))
    if args.show:
        for graded in result.graded:
            for rule in graded.misjudged():
                _, reason = graded.verdicts.get(rule, (graded.passed, "no verdict"))
                kind = "false failure" if graded.case.kind == "honest" else "false pass"
                print(f"\n{graded.suite}/{graded.case.id}: {rule}: {kind}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
