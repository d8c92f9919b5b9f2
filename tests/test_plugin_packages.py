"""Plug-ins from installed packages: the package docs/architecture.md shows ("Writing a
plug-in package"), installed as pip installs one (its module and a dist-info with its entry
points), gives `toolproof run` an agent, a provider and a grader by name; a plug-in that
fails to import is a located usage error; and nothing of a package is imported until a
name is asked for that no built-in has."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import MINI_FILES, line_with, write_files

from toolproof.errors import UsageError
from toolproof.registry import PLUGIN_GROUP, Registry, installed_plugins

ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "architecture.md"


def page_block(language: str, first_line: str) -> str:
    """The code block of the page in `language` that starts with `first_line`."""
    blocks = re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    found = [block for block in blocks if block.startswith(first_line)]
    assert len(found) == 1, f"docs/architecture.md shows {first_line!r} once"
    return found[0]


def install(site: Path, name: str, modules: dict[str, str], entries: dict[str, str]) -> Path:
    """A package as pip installs it into `site`: its modules, and a dist-info folder with
    its metadata and its `toolproof.plugins` entry points."""
    for path, source in modules.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(source, encoding="utf-8")
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    points = "".join(f"{key} = {value}\n" for key, value in entries.items())
    (info / "entry_points.txt").write_text(f"[{PLUGIN_GROUP}]\n{points}", encoding="utf-8")
    return site


def documented_package(site: Path) -> Path:
    """The page's package, installed into `site` from its pyproject.toml and module."""
    project = tomllib.loads(page_block("toml", "# pyproject.toml"))["project"]
    module = page_block("python", "# acme_toolproof/__init__.py")
    entries = project["entry-points"][PLUGIN_GROUP]
    return install(site, project["name"], {"acme_toolproof/__init__.py": module}, entries)


def toolproof(
    site: Path, *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m toolproof ARGS` with the packages of `site` installed."""
    path = os.pathsep.join([str(site), str(ROOT / "src")])
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": path, "NO_COLOR": "1", **(env or {})},
    )


def task_passes(summary_file: Path) -> dict[str, tuple[int, list[str]]]:
    """Each task of a run's JSON summary: its passes and its failure reasons."""
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    return {row["id"]: (row["passed"], row["failures"]) for row in summary["tasks"]}


@pytest.mark.slow
def test_an_installed_packages_agent_provider_and_grader_run_by_name(tmp_path: Path) -> None:
    site = documented_package(tmp_path / "site")
    suite = write_files(tmp_path / "mini", MINI_FILES)
    once = ["--trials", "1", "--k", "1", "--store", tmp_path / "runs.db"]

    agent = toolproof(site, "run", suite, "--agent", "clerk", *once, "--json", tmp_path / "a.json")
    assert agent.returncode == 0, agent.stderr
    passes = task_passes(tmp_path / "a.json")
    assert passes["status"] == (1, []) and passes["cancel"][0] == 0  # the clerk cancels nothing

    model = toolproof(
        site, "run", suite, "--model", "desk/b-finder", *once, "--json", tmp_path / "m.json"
    )
    assert model.returncode == 0, model.stderr
    assert task_passes(tmp_path / "m.json")["status"] == (1, [])

    oracle = toolproof(
        site, "run", suite, "--agent", "oracle", *once, "--json", tmp_path / "o.json"
    )
    assert oracle.returncode == 0, oracle.stderr
    for passed, failures in task_passes(tmp_path / "o.json").values():
        assert (passed, failures) == (0, ["signed: the last reply is not signed"])

    unknown = toolproof(site, "run", suite, "--agent", "clerks", *once)
    assert unknown.returncode == 2
    assert re.search(r"unknown agent; use one of oracle, .*, clerk \(or --model", unknown.stderr)

    shop = write_files(tmp_path / "shop", SHOP_FILES)
    kind = toolproof(site, "run", shop, "--agent", "clerk", *once, "--json", tmp_path / "k.json")
    assert kind.returncode == 0, kind.stderr
    assert task_passes(tmp_path / "k.json") == {"status": (1, [])}


SIGNED_RULES = """
policy_rules: [confirm_before_write, signed_replies]
personas:
  loud: {use: [shouty]}
"""


@pytest.mark.slow
def test_an_installed_packages_policy_rule_and_persona_are_used_by_name(tmp_path: Path) -> None:
    site = documented_package(tmp_path / "site")
    text = MINI_FILES["suite.yaml"].replace("policy_rules: [confirm_before_write]\n", "")
    suite = write_files(tmp_path / "mini", {**MINI_FILES, "suite.yaml": text + SIGNED_RULES})
    sound = toolproof(site, "validate", suite)
    assert sound.returncode == 0, sound.stdout + sound.stderr  # the oracle signs its replies

    once = ["--trials", "1", "--k", "1", "--store", tmp_path / "runs.db"]
    loud = ["--persona", "loud", "--json", tmp_path / "o.json"]
    oracle = toolproof(site, "run", suite, "--agent", "oracle", *once, *loud)
    assert oracle.returncode == 0, oracle.stderr
    summary = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert summary["counts"]["passed"] == summary["counts"]["total"] == 4  # plain, and loud
    assert summary["personas"]["loud"]["pass@1"] == 1.0

    clerk = toolproof(site, "run", suite, "--agent", "clerk", *once, "--json", tmp_path / "c.json")
    assert clerk.returncode == 0, clerk.stderr
    assert task_passes(tmp_path / "c.json")["status"] == (1, [])  # the clerk signs too

    broken = install(
        tmp_path / "broken",
        "acme-broken",
        {"acme_broken.py": BROKEN},
        {"policy.signed_replies": "acme_broken:clerk"},
    )
    failed = toolproof(broken, "validate", suite)
    assert failed.returncode == 2
    line = line_with((suite / "suite.yaml").read_text(encoding="utf-8"), "signed_replies")
    assert f"suite.yaml:{line}: policy_rules.1: " in failed.stderr + failed.stdout
    assert "policy rule 'signed_replies' of plug-in package 'acme-broken'" in failed.stdout + (
        failed.stderr
    )
    assert "No module named 'acme_sdk'" in failed.stdout + failed.stderr
    assert "Traceback" not in failed.stderr


SHOP_FILES = {
    "suite.yaml": """
        name: shop
        version: "1"
        policy: policy.md
        world:
          data: [orders.yaml]
        backends:
          shop: {type: acme-shop, region: eu}
        tools:
          get_order: {tier: 1, weight: 1}
        tasks:
          - id: status
            user: {opening: "Where is order B?"}
            expect:
              actions: [{tool: get_order, args: {order_id: B}}]
              must_say: [shipped]
        defaults: {trials: 1, k: [1]}
    """,
    "orders.yaml": MINI_FILES["orders.yaml"],
    "policy.md": MINI_FILES["policy.md"],
}
"""A suite whose one backend is of the plug-in's kind."""


BROKEN = """
import acme_sdk  # not installed

clerk = None
"""


@pytest.mark.slow
def test_a_plugin_that_fails_to_import_is_a_located_error_and_only_when_asked_for(
    tmp_path: Path,
) -> None:
    site = install(
        tmp_path / "site",
        "acme-broken",
        {"acme_broken.py": BROKEN},
        {"agent.clerk": "acme_broken:clerk"},
    )
    suite = write_files(tmp_path / "mini", MINI_FILES)
    once = ["--trials", "1", "--k", "1", "--store", tmp_path / "runs.db"]
    broken = toolproof(site, "run", suite, "--agent", "clerk", *once)
    assert broken.returncode == 2
    assert broken.stderr.strip() == (
        "error: agent 'clerk' of plug-in package 'acme-broken', entry point 'agent.clerk = "
        "acme_broken:clerk' (group toolproof.plugins) failed to import: ModuleNotFoundError: "
        "No module named 'acme_sdk'"
    )
    assert "Traceback" not in broken.stderr
    oracle = toolproof(site, "run", suite, "--agent", "oracle", *once)
    assert oracle.returncode == 0, oracle.stderr  # the broken package is never imported
    shop = write_files(tmp_path / "shop", SHOP_FILES)
    no_kind = toolproof(site, "run", shop, "--agent", "oracle", *once)
    assert no_kind.returncode == 2
    assert no_kind.stderr.splitlines() == [
        f"{shop / 'suite.yaml'}:7: backend 'shop': unknown backend kind 'acme-shop'; use one "
        "of python, mcp, openapi",
        "1 problem(s)",
    ]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A folder of installed packages on this process's path, its entry points read anew."""
    folder = tmp_path / "site"
    folder.mkdir()
    sys.path.insert(0, str(folder))
    installed_plugins.cache_clear()
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m.startswith("acme_widgets")]:
            del sys.modules[name]
        installed_plugins.cache_clear()


WIDGETS = """
IMPORTED = True


def fancy():
    return "a fancy widget"


def plain():
    return "the package's plain widget"


def failing():
    raise RuntimeError("no fancy parts in stock")
"""


def widgets(site: Path) -> Registry[str]:
    install(
        site,
        "acme-widgets",
        {"acme_widgets.py": WIDGETS},
        {
            "widget.fancy": "acme_widgets:fancy",
            "widget.plain": "acme_widgets:plain",
            "widget.failing": "acme_widgets:failing",
            "gadget.other": "acme_widgets:fancy",
        },
    )
    registry: Registry[str] = Registry("widget", plugins="widget")
    registry.register("plain")(lambda: "the built-in plain widget")
    return registry


def test_a_plugin_name_is_known_without_importing_its_package(site: Path) -> None:
    registry = widgets(site)
    assert "fancy" in registry and "other" not in registry and "gone" not in registry
    assert registry.known() == "plain, fancy, failing"
    assert "acme_widgets" not in sys.modules
    assert registry.get("fancy") == "a fancy widget"
    assert "acme_widgets" in sys.modules


def test_a_built_in_name_is_never_taken_over_by_a_plugin(site: Path) -> None:
    registry = widgets(site)
    assert registry.get("plain") == "the built-in plain widget"
    assert "acme_widgets" not in sys.modules
    assert [r.name for r in registry.registrations()[:2]] == ["plain", "fancy"]


def test_a_plugins_failing_factory_is_a_usage_error_naming_it(site: Path) -> None:
    registry = widgets(site)
    with pytest.raises(UsageError) as raised:
        registry.get("failing")
    assert str(raised.value) == (
        "widget 'failing' of plug-in package 'acme-widgets', entry point 'widget.failing = "
        "acme_widgets:failing' (group toolproof.plugins): its factory failed: RuntimeError: "
        "no fancy parts in stock"
    )


def test_a_registry_without_plugins_reads_no_installed_package(site: Path) -> None:
    widgets(site)
    closed: Registry[str] = Registry("widget")
    assert "fancy" not in closed and list(closed) == [] and closed.known() == ""
