"""One registry mechanism for providers, agents, backend kinds and graders: entries made by
their factory when first asked for, unknown names answered with the known ones, and a
missing optional package answered with what to install."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from toolproof.agents.registry import AGENTS
from toolproof.errors import UsageError
from toolproof.graders.registry import GRADERS
from toolproof.models.registry import PROVIDERS
from toolproof.registry import Registry
from toolproof.runtime.kinds import KINDS

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"
REGISTRIES = {"provider": PROVIDERS, "agent": AGENTS, "backend kind": KINDS, "grader": GRADERS}
OPTIONAL_SDKS = {"openai", "anthropic", "llama_cpp", "ray", "opentelemetry", "psycopg"}


def test_an_entry_is_made_by_its_factory_once_and_only_when_asked_for() -> None:
    made: list[str] = []
    registry: Registry[list[str]] = Registry("widget")

    @registry.register("plain")
    def plain() -> list[str]:
        made.append("plain")
        return made

    assert made == [] and "plain" in registry and list(registry) == ["plain"]
    assert registry.get("plain") is registry.get("plain")
    assert made == ["plain"]


def test_an_unknown_name_is_a_usage_error_that_lists_the_known_names() -> None:
    registry: Registry[int] = Registry("widget")
    registry.register("plain")(lambda: 1)
    registry.register("sized:", shown="sized:N")(lambda: 2)
    with pytest.raises(UsageError, match=r"^unknown widget 'fancy'; use one of plain, sized:N$"):
        registry.get("fancy")


def test_an_entry_whose_package_is_missing_says_which_extra_installs_it() -> None:
    made: list[str] = []
    registry: Registry[int] = Registry("widget")

    @registry.register("fast", packages=("toolproof_absent_module",), extra="local")
    def fast() -> int:
        made.append("fast")
        return 1

    with pytest.raises(UsageError) as raised:
        registry.get("fast")
    assert str(raised.value) == (
        "widget 'fast' needs toolproof_absent_module, which is not installed: "
        "pip install 'toolproof[local]'"
    )
    with pytest.raises(UsageError, match=r"^--widget fast: widget 'fast' needs "):
        registry.get("fast", where="--widget fast")
    with pytest.raises(ValueError, match="widget 'bare': name the extra that installs"):
        registry.register("bare", packages=("toolproof_absent_module",))(lambda: 2)
    assert made == [] and registry.installed() == []


def test_a_name_is_registered_once_and_can_be_taken_out_again() -> None:
    registry: Registry[int] = Registry("widget")
    registry.register("plain")(lambda: 1)
    with pytest.raises(ValueError, match="widget 'plain' is already registered"):
        registry.register("plain")(lambda: 2)
    assert registry.get("plain") == 1
    registry.unregister("plain")
    registry.register("plain")(lambda: 2)
    assert registry.get("plain") == 2


def test_every_registry_keeps_its_names_in_order() -> None:
    assert list(PROVIDERS) == ["openai", "anthropic", "openai-compatible", "local", "scripted"]
    assert list(KINDS) == ["python", "mcp", "openapi"]
    graders = ["state", "calls", "communication", "checks", "writes", "refusal", "policy"]
    assert list(GRADERS) == graders
    assert AGENTS.known().startswith("oracle, retrying-oracle, null, ")
    assert AGENTS.known().endswith("scripted:FILE, python:MODULE:FUNCTION, http://URL, https://URL")


def test_every_extra_a_registration_names_is_one_of_the_package() -> None:
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    named = {
        (role, entry.name): (entry.packages, entry.extra)
        for role, registry in REGISTRIES.items()
        for entry in registry.registrations()
        if entry.packages
    }
    assert named == {("provider", "local"): (("llama_cpp",), "local")}
    assert all(extra in extras for _, extra in named.values())
    assert any(dependency.startswith("llama-cpp-python") for dependency in extras["local"])


@pytest.mark.slow
def test_every_entry_is_made_without_importing_an_optional_sdk() -> None:
    """A registry lists its names, and makes each entry, before any provider's SDK is
    imported: a provider's SDK is imported when one of its clients is made."""
    program = f"""
import json, sys
from toolproof.agents.registry import AGENTS
from toolproof.graders.registry import GRADERS
from toolproof.models.registry import PROVIDERS
from toolproof.runtime.kinds import KINDS
made = {{}}
for registry in (PROVIDERS, AGENTS, KINDS, GRADERS):
    made[registry.role] = [name for name in registry.installed() if registry.get(name)]
imported = sorted({{name.split(".")[0] for name in sys.modules}} & set({sorted(OPTIONAL_SDKS)!r}))
print(json.dumps({{"made": made, "imported": imported}}))
"""
    ran = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    found = json.loads(ran.stdout)
    assert found["imported"] == []
    assert found["made"] == {role: registry.installed() for role, registry in REGISTRIES.items()}
    assert "oracle" in found["made"]["agent"] and "openai" in found["made"]["provider"]


@pytest.mark.slow
def test_a_local_model_without_llama_cpp_is_refused_with_what_to_install(
    mini_dir: Path, tmp_path: Path
) -> None:
    """The command line, in an interpreter where llama_cpp cannot be imported."""
    program = (
        "import sys; sys.modules['llama_cpp'] = None; "
        "from toolproof.cli import main; sys.argv[0] = 'toolproof'; main()"
    )
    store = tmp_path / "runs.db"
    args = ["run", mini_dir, "--model", "local/smollm2", "--store", store]
    ran = subprocess.run(
        [sys.executable, "-c", program, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    assert ran.stderr.strip().endswith(
        "model local/smollm2: provider 'local' needs llama_cpp, which is not installed: "
        "pip install 'toolproof[local]'"
    )
