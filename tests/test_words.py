"""The glossary in docs/architecture.md ("Words") and the code agree: every type a word's row
names exists in the source, and every type named after a condition or a trial is listed in
that word's row, so a new `...Condition` or `Trial...` type has to say which one it is."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
SRC = ROOT / "src" / "toolproof"


def glossary() -> dict[str, set[str]]:
    """Each word of the table, with the type names its row gives in backquotes."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## Words\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("word", "---"):
            names = re.findall(r"`(?:\w+\.)?([A-Z]\w*)`", cells[2])
            rows[cells[0]] = set(names)
    return rows


def defined_types() -> set[str]:
    """Every class, and every module-level name given a capitalised type alias, in src."""
    found = set()
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                found.add(node.name)
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            found |= {t.id for t in targets if isinstance(t, ast.Name) and t.id[:1].isupper()}
    return found


def test_every_type_the_glossary_names_exists() -> None:
    named = set().union(*glossary().values())
    assert named - defined_types() == set()


def test_every_condition_and_trial_type_is_in_its_words_row() -> None:
    words, types = glossary(), defined_types()
    conditions = {name for name in types if "Condition" in name}
    trials = {name for name in types if re.fullmatch(r"Trial([A-Z]\w*)?|\w+Trial", name)}
    assert conditions - words["condition"] - words["check"] == set()
    assert trials - words["trial"] == set()


def test_the_glossary_is_read_with_its_rows() -> None:
    words = glossary()
    assert {"suite", "task", "condition", "variant", "run", "trial", "check"} <= set(words)
    assert {"PlannedTrial", "Trial", "TrialResult"} <= words["trial"]
