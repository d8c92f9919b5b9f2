"""The checks a suite must pass once its tools are known: every task, every condition."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from toolproof.gateway.drift import DriftError, DriftLayer
from toolproof.graders.rules import POLICY_RULES, resolved
from toolproof.meaning.values import contains, tokens
from toolproof.spec.expectations import CallSpec, Refusal
from toolproof.spec.placeholders import scope_names, template_problem
from toolproof.spec.source import SuiteSource
from toolproof.spec.suite import SuiteFile
from toolproof.spec.task import Task, TaskSpec
from toolproof.tools.binding import ToolBinding


def check_task(
    source: SuiteSource,
    task: Task,
    tools: dict[str, ToolBinding],
    world: Any,
    task_ids: dict[str, str],
    user_tools: dict[str, ToolBinding] | None = None,
) -> None:
    """Semantic checks of one task. A tool listed under `tools:` that did not load (its
    problem is already reported) is not reported again as unknown."""
    assert source.file is not None
    spec = task.spec
    if spec.id in task_ids:
        first = task_ids[spec.id]
        source.problem(task.source, task.line, f"duplicate task id '{spec.id}' (first at {first})")
    else:
        task_ids[spec.id] = f"{task.source}:{task.line}"
    expect = spec.expect
    if expect.is_empty():
        source.problem(
            task.source,
            task.at("expect"),
            f"task '{spec.id}' has no expectations; a task that cannot fail proves nothing "
            "(give actions, state, calls, reads, forbidden_calls, must_say or must_not_say)",
        )
    _check_facts(source, task)
    _check_calls(source, task, tools, set(source.file.tools), user_tools or {})
    _check_user_calls(source, task, user_tools or {}, set(source.file.user.tools))
    _check_checks(source, task, tools, source.file)
    for key in spec.initial_state:
        if key not in world:
            source.problem(
                task.source,
                task.at("initial_state", key),
                f"initial_state names '{key}', which the world does not have",
            )


def user_words(spec: TaskSpec) -> str:
    """Everything the task's user may say: the opening, turns, replies and instructions."""
    user = spec.user
    return "\n".join(
        [
            user.opening,
            user.instructions,
            *(t.say for t in user.turns),
            *(r.say for r in user.replies),
        ]
    )


def _check_facts(source: SuiteSource, task: Task) -> None:
    """A fact the user hands the agent proves nothing when the agent repeats it, unless the
    task says so; a fact must have something to match."""
    heard = tokens(user_words(task.spec))
    for i, fact in enumerate(task.spec.expect.facts()):
        line = task.at("expect", "must_say", i)
        empty = [o for o in fact.sources if not tokens(o)]
        if empty:
            source.problem(
                task.source,
                line,
                f"task '{task.id}': must_say {empty[0]!r} has no letters or digits to look for",
            )
            continue
        echoed = [o for o in fact.options if contains(heard, tokens(o))]
        if echoed and fact.source != "user":
            source.problem(
                task.source,
                line,
                f"task '{task.id}': must_say {echoed[0]!r} is in the user's own words, so an "
                "agent that repeats the user says it; expect a fact the agent must find out, "
                "or mark it {fact: ..., source: user} if repeating it is the point",
            )
        elif fact.source == "user" and not echoed:
            source.problem(
                task.source,
                line,
                f"task '{task.id}': must_say {fact.options[0]!r} is marked source: user, but "
                "the user never says it (source: none is for facts that need no source)",
            )


def _check_user_calls(
    source: SuiteSource, task: Task, tools: dict[str, ToolBinding], declared: set[str]
) -> None:
    """What the scripted user does (`do:`) names the suite's user tools with arguments they
    take."""
    user = task.spec.user
    done: list[tuple[str, int, list[CallSpec]]] = [
        *(("turns", i, t.do) for i, t in enumerate(user.turns)),
        *(("replies", i, r.do) for i, r in enumerate(user.replies)),
    ]
    for part, i, calls in done:
        for j, call in enumerate(calls):
            line = task.at("user", part, i, "do", j, "tool")
            binding = tools.get(call.tool)
            if binding is None:
                if call.tool not in declared:
                    known = ", ".join(sorted(declared)) or "none: add them under user: tools:"
                    source.problem(
                        task.source,
                        line,
                        f"user {part}: '{call.tool}' is not a user tool (user tools: {known})",
                    )
                continue
            for issue in binding.tool.check_arguments(dict(call.args)):
                source.problem(task.source, line, f"{call.tool}: {issue}")


def _check_calls(
    source: SuiteSource,
    task: Task,
    tools: dict[str, ToolBinding],
    declared: set[str],
    user_tools: dict[str, ToolBinding],
) -> None:
    """Gold actions are complete calls the tool accepts (the user's tool for an action `by:
    user`); required and forbidden calls name arguments the tool has."""
    assert source.file is not None
    user_declared = set(source.file.user.tools)
    expect = task.spec.expect
    refusal = expect.refusal if isinstance(expect.refusal, Refusal) else None
    groups: list[tuple[tuple[str, ...], list[Any]]] = [
        (("actions",), list(expect.actions or [])),
        (("calls",), list(expect.calls)),
        (("reads",), list(expect.reads or [])),
        (("forbidden_calls",), list(expect.forbidden_calls)),
        (("allow_writes",), list(expect.allow_writes)),
        (("refusal", "reads"), list(refusal.reads or []) if refusal else []),
    ]
    for path, calls in groups:
        group = ".".join(path)
        for i, call in enumerate(calls):
            by_user = getattr(call, "by", "agent") == "user"
            binding = (user_tools if by_user else tools).get(call.tool)
            if binding is None:
                if call.tool not in (user_declared if by_user else declared):
                    line = task.at("expect", *path, i, "tool")
                    whose = "user tool" if by_user else "tool"
                    source.problem(task.source, line, f"unknown {whose} '{call.tool}' in {group}")
                continue
            if group == "allow_writes" and not binding.write:
                line = task.at("expect", *path, i, "tool")
                source.problem(
                    task.source, line, f"allow_writes: '{call.tool}' is not a write tool"
                )
            if group == "actions":
                for issue in binding.tool.check_arguments(dict(call.args)):
                    line = task.at("expect", *path, i, "args")
                    source.problem(task.source, line, f"{call.tool}: {issue}")
                continue
            known = set(binding.schema.parameters.get("properties", {}))
            for arg in call.args:
                if arg not in known:
                    line = task.at("expect", *path, i, "args", arg)
                    source.problem(task.source, line, f"{call.tool} has no argument '{arg}'")


def _check_checks(
    source: SuiteSource, task: Task, tools: dict[str, ToolBinding], file: SuiteFile
) -> None:
    """A task's command checks expand; gold actions on real systems need checks."""
    expect = task.spec.expect
    names = scope_names("trial", file.services)
    for i, check in enumerate(expect.check):
        if check.command is None:
            continue
        problem = template_problem(check.command, names) or template_problem(check.cwd, names)
        if problem:
            source.problem(task.source, task.at("expect", "check", i), problem)
    real = sorted(
        {a.tool for a in expect.actions or [] if a.tool in tools and not tools[a.tool].simulated}
    )
    if real and not expect.check:
        source.problem(
            task.source,
            task.at("expect", "actions"),
            f"task '{task.id}': its gold actions call tools of real systems "
            f"({', '.join(real)}), whose effects the world hash cannot see; give `check` "
            "expectations that verify the final state (a task that cannot fail proves nothing)",
        )


def check_conditions(source: SuiteSource, file: SuiteFile, tools: dict[str, ToolBinding]) -> None:
    """Fault profiles, drift variants, load, score and policy rules must name what the suite
    has (a fault may hit a user tool too). They are checked against `tools:` as declared, so
    a tool that failed to load (reported already) is not reported again here."""
    check_policy_rules(source, file, tools)
    declared = set(file.tools)
    faults = file.faults
    if faults.refresh_tool and faults.refresh_tool not in declared:
        source.suite_problem(
            ["faults", "refresh_tool"],
            f"refresh_tool '{faults.refresh_tool}' is not listed under tools:",
        )
    for name, rules in faults.profiles.items():
        for i, rule in enumerate(rules):
            for tool in rule.tools or []:
                if tool not in declared and tool not in file.user.tools:
                    source.suite_problem(
                        ["faults", "profiles", name, i, "tools"],
                        f"fault profile '{name}': unknown tool '{tool}'",
                    )
            if rule.kind == "token_expired" and not faults.refresh_tool:
                source.suite_problem(
                    ["faults", "profiles", name, i],
                    f"fault profile '{name}': token_expired needs faults.refresh_tool",
                )
    _check_drift(source, file, tools)
    if file.load:
        for tool in file.load.capacity:
            if tool != "*" and tool not in declared:
                source.suite_problem(
                    ["load", "capacity", tool], f"load capacity for unknown tool '{tool}'"
                )
    score = file.score
    if score.faults and score.faults not in faults.profiles:
        source.suite_problem(
            ["score", "faults"], f"score.faults: no fault profile '{score.faults}'"
        )
    for variant in score.drift or []:
        if variant not in file.drift:
            source.suite_problem(["score", "drift"], f"score.drift: no drift variant '{variant}'")


def check_policy_rules(source: SuiteSource, file: SuiteFile, tools: dict[str, ToolBinding]) -> None:
    """Each rule's settings check against the suite's tools (a rule names tools `tools:`
    lists, of the right kind). A tool listed under `tools:` that did not load is not
    reported again."""
    for i, rule in enumerate(file.policy_rules):
        registered = POLICY_RULES.get(rule.rule)
        if registered.settings is not None:
            registered.settings(resolved(rule), Settings(source, file, tools, rule.rule, i))


@dataclass(frozen=True)
class Settings:
    """The suite as one rule's settings check sees it (`toolproof.graders.rules`)."""

    source: SuiteSource
    file: SuiteFile
    tools: dict[str, ToolBinding]
    rule: str
    index: int

    def tool(
        self, loc: list[str | int], name: str, kind: Literal["read", "write"] | None = None
    ) -> dict[str, Any] | None:
        binding = self.tools.get(name)
        if binding is None:
            if name not in self.file.tools:
                self.problem(loc, f"unknown tool '{name}'")
            return None
        if kind is not None and binding.write != (kind == "write"):
            self.problem(loc, f"'{name}' is not a {kind} tool")
        return binding.schema.parameters

    def problem(self, loc: list[str | int], message: str) -> None:
        self.source.suite_problem(["policy_rules", self.index, *loc], f"{self.rule}: {message}")


def _check_drift(source: SuiteSource, file: SuiteFile, tools: dict[str, ToolBinding]) -> None:
    """Each drift variant applies to the tools' schemas; a variant that names a tool of
    `tools:` that did not load cannot be checked, and is left to the next load."""
    unloaded = set(file.tools) - set(tools)
    schemas = {name: b.schema for name, b in tools.items()}
    for name, transforms in file.drift.items():
        if unloaded & _strings([t.model_dump(mode="json") for t in transforms]):
            continue
        try:
            DriftLayer(list(transforms), schemas)
        except DriftError as exc:
            source.suite_problem(["drift", name], f"drift variant '{name}': {exc}")


def _strings(data: Any) -> set[str]:
    """Every string in JSON-like data."""
    if isinstance(data, str):
        return {data}
    found: set[str] = set()
    values = data.values() if isinstance(data, dict) else data if isinstance(data, list) else []
    for value in values:
        found |= _strings(value)
    return found
