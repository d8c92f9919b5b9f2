"""The README stays a five-minute read, and no link in it or in docs/ leads nowhere: every
relative link names a file or folder that exists, and every `#anchor` a heading of its page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_LIMIT = 10_000

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def prose(text: str) -> str:
    """The page without its code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor on a page, a repeated heading numbered as GitHub numbers it."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """The relative links of a page whose file, folder or heading does not exist."""
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto: leave the repository
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading with that anchor")
    return broken


def test_readme_is_a_five_minute_read() -> None:
    length = len(README.read_text(encoding="utf-8"))
    assert length <= README_LIMIT, f"README.md: {length} characters; details belong in docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_relative_link_points_to_a_file_and_heading_that_exist(page: Path) -> None:
    assert broken_links(page) == []


def test_a_link_to_a_missing_file_or_heading_is_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# A page\n\n## `run SUITE [--k N]`\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n\n## Top\n\n"
        "[ok](other.md#run-suite---k-n) [ok](#top-1) [ok](other.md) [web](https://x.org/a)\n"
        "[gone](missing.md) [no heading](other.md#nowhere) [own](#bottom)\n"
        "`[in code](missing.md)`\n\n```\n[in a block](missing.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#nowhere: no heading with that anchor",
        "#bottom: no heading with that anchor",
    ]
