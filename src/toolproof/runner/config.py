"""A run's configuration: what is asked (`RunRequest`: the command line's flags, or the API's)
turned into the settings a run stores and is built from (`RunConfig`).

`run_config` is the one way to a new run's config, a `toolproof run`'s or a served trial's
(`serve-tools`); `resumed_config` is a stored run's own, with the secrets the store does not
keep given again; `run_target` opens what a `toolproof run` command names, its flags checked
first.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolproof.errors import UsageError
from toolproof.format import inert
from toolproof.metrics.summary import InfraPolicy
from toolproof.records.run import RunConfig, RunRecord
from toolproof.redact import REDACTED, redacted
from toolproof.runner.build import judge_name
from toolproof.runner.variants import Variant
from toolproof.spec.limits import (
    MAX_CONCURRENCY,
    MAX_COST_USD,
    MAX_RUN_TRIALS,
    MAX_SECONDS,
    MAX_SEED,
    MAX_STEPS,
    MAX_TEMPERATURE,
    MAX_THREADS,
    MAX_TIME_SCALE,
    MAX_TOKENS,
    MAX_TRIALS,
    MAX_TURNS,
    real,
    whole,
)
from toolproof.spec.metrics import CATALOGUE, DECLARED
from toolproof.spec.overrides import ModelOverrides
from toolproof.spec.suite import DEFAULT_AGENT_TIMEOUT_S
from toolproof.spec.task import Task
from toolproof.spec.user import BUILTIN_PERSONAS
from toolproof.store.journal import Store
from toolproof.store.queries import open_existing
from toolproof.suite import load_suite
from toolproof.suite.loaded import Suite
from toolproof.users.personas import resolve_persona

TOOL_CHOICES = ("auto", "required", "none")


@dataclass
class RunRequest:
    """What to run; None means the suite's default."""

    agent: str | None = None
    models: list[str] = field(default_factory=list)
    model_flags: ModelOverrides = field(default_factory=ModelOverrides)
    trials: int | None = None
    k: list[int] | None = None
    concurrency: int | None = None
    seed: int | None = None
    tasks: str | None = None
    max_steps: int | None = None
    agent_timeout: float | None = None
    """Seconds one turn of a Python agent may take (None: the suite's default)."""
    infra_errors: InfraPolicy = "fail"
    max_cost: float | None = None
    user_model: str | None = None
    judge_model: str | None = None
    faults: str | None = None
    drift: str | None = None
    load: list[int] = field(default_factory=list)
    personas: list[str] = field(default_factory=list)
    checkpoints: list[int] = field(default_factory=list)
    """Conversation lengths (user turns) to stretch every task to."""
    profile: str | None = None
    time_scale: float = 1.0
    suite_path: str = ""
    executor: str = "local"
    """Where trials run: 'local' (this process) or 'ray' (actors on a Ray cluster)."""
    ray_address: str | None = None


def model_overrides(
    *,
    base_url: str | None = None,
    request_timeout: float | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    tool_choice: str | None = None,
    parallel_tool_calls: bool | None = None,
    threads: int | None = None,
    prompted: bool = False,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> ModelOverrides:
    """The model settings the command line gives (only those given), each number checked
    against its range and named as its flag."""
    return ModelOverrides(
        base_url=base_url,
        timeout_s=real("--request-timeout", request_timeout, MAX_SECONDS),
        temperature=real("--temperature", temperature, MAX_TEMPERATURE, zero=True),
        max_tokens=whole("--max-tokens", max_tokens, 1, MAX_TOKENS),
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        n_threads=whole("--threads", threads, 1, MAX_THREADS),
        prompted=prompted or None,
        headers=headers or None,
        extra=extra or None,
    )


def check_request(request: RunRequest) -> None:
    """Every number of a request finite and in range (named as the command line's flags),
    so that nothing a run stores overflows the store or fails to read back, and nothing
    it plans exhausts memory."""
    whole("--trials", request.trials, 1, MAX_TRIALS)
    whole("--concurrency", request.concurrency, 1, MAX_CONCURRENCY)
    whole("--seed", request.seed, 0, MAX_SEED)
    whole("--max-steps", request.max_steps, 1, MAX_STEPS)
    real("--max-cost", request.max_cost, MAX_COST_USD)
    real("--agent-timeout", request.agent_timeout, MAX_SECONDS)
    real("--time-scale", request.time_scale, MAX_TIME_SCALE)
    for k in request.k or []:
        whole("--k", k, 1, MAX_TRIALS)
    for level in request.load:
        whole("--load", level, 1, MAX_CONCURRENCY)
    for turns in request.checkpoints:
        whole("--checkpoints", turns, 1, MAX_TURNS)


@dataclass(frozen=True)
class RunTarget:
    """What a `toolproof run` command runs: the suite, the store, the run it resumes."""

    suite: Suite
    store: Store
    resume: str | None


def run_target(
    request: RunRequest, folder: Path | None, store: str | None, resume: str | None
) -> RunTarget:
    """Check every flag, then open the store (one that exists, to resume a run from it) and
    load the suite: the folder given, else the resumed run's own."""
    check_request(request)  # before the store is opened
    journal = open_existing(store) if resume else Store(store)
    journal.check_sound()  # a damaged store is refused before the suite even loads
    run_id = journal.resolve(resume) if resume else None
    if folder is None:
        if run_id is None:
            raise UsageError("give a SUITE folder, or --resume RUN_ID")
        folder = suite_folder(journal.run(run_id), "give the SUITE folder")
    suite = load_suite(folder)
    check_tool_choice(request.model_flags.tool_choice, suite)
    return RunTarget(suite, journal, run_id)


def suite_folder(run: RunRecord, hint: str) -> Path:
    """The suite folder a stored run was made from; an imported run has none."""
    if run.config.suite_path is None:
        raise UsageError(f"run {run.id} was not made from a suite folder here: {hint}")
    return Path(run.config.suite_path)


def check_tool_choice(choice: str | None, suite: Suite) -> None:
    """--tool-choice is auto, required, none, or the name of one of the suite's tools."""
    if choice is None or choice in TOOL_CHOICES or choice in suite.tools:
        return
    raise UsageError(
        f"--tool-choice {choice}: use {', '.join(TOOL_CHOICES)}, or one of the suite's tools "
        f"to force it ({', '.join(sorted(suite.tools))})"
    )


def run_config(suite: Suite, request: RunRequest, *, served: Task | None = None) -> RunConfig:
    """A new run's effective settings, checked: the request's, else the suite's defaults.

    A served run (`serve-tools`; `served` is the task it plays) stores the same settings and
    how its agent came: over MCP, one trial at a time, with the suite's default k that its
    trials allow, and a judge model only when the served task has a rubric."""
    defaults = suite.file.defaults
    trials = request.trials or defaults.trials
    if served is None:
        ks = reported_ks(suite, request, trials)
    else:
        ks = sorted({k for k in defaults.k if k <= trials}) or [1]
    max_steps = request.max_steps or defaults.max_steps
    beyond = checkpoints_beyond(request, max_steps)
    if beyond:
        note(beyond)
    tasks = suite.select(request.tasks)
    if served is None:
        judge = judge_name(suite, request.judge_model, graded=tasks)
    else:
        rubric = served.spec.expect.rubric
        judge = judge_name(suite, request.judge_model, graded=[served]) if rubric else None
    return RunConfig(
        agent=request.agent,
        **({"served": "mcp"} if served else {}),
        models=list(request.models),
        model_flags=request.model_flags,
        max_cost=request.max_cost,
        user_model=request.user_model,
        **({"judge_model": judge} if judge else {}),
        variants=variant_keys(suite, request),
        score=score_settings(suite),
        time_scale=request.time_scale,
        trials=trials,
        k=ks,
        seed=defaults.seed if request.seed is None else request.seed,
        max_steps=max_steps,
        **agent_timeout(request, defaults.agent_timeout_s),
        concurrency=1 if served else request.concurrency or defaults.concurrency,
        infra_errors=request.infra_errors,
        tasks=[t.id for t in tasks],
        **({"notes": list(suite.file.notes)} if suite.file.notes else {}),
        suite_path=request.suite_path or str(suite.root),
    )


def agent_timeout(request: RunRequest, suites: float) -> dict[str, float]:
    """The agent's turn deadline as the config keeps it: only when it is not the default
    (so a run's stored config, and its resumption, stay as they were)."""
    seconds = request.agent_timeout or suites
    return {} if seconds == DEFAULT_AGENT_TIMEOUT_S else {"agent_timeout_s": seconds}


def reported_ks(suite: Suite, request: RunRequest, trials: int) -> list[int]:
    """The k values a run reports. A k asked for above the trial count is a usage error; a k
    of the suite's defaults above it is left out, with a note on stderr, so that a quick run
    with fewer trials needs no --k of its own."""
    ks = sorted(set(request.k or suite.file.defaults.k))
    too_big = [k for k in ks if k > trials]
    if too_big and request.k:
        raise UsageError(
            f"k={too_big[0]} needs at least {too_big[0]} trials per task, but --trials is {trials}"
        )
    if too_big:
        ks = [k for k in ks if k <= trials] or [1]
        note(
            f"{trials} trials per task are too few for the suite's default k="
            f"{', '.join(map(str, too_big))}; reporting k={', '.join(map(str, ks))}"
        )
    return ks


def checkpoints_beyond(request: RunRequest, max_steps: int) -> str | None:
    """Why the longest checkpoints cannot be reached, when an agent's turns count against
    max_steps (a model, a script, an HTTP agent): each user message takes at least one turn,
    so a conversation of more user messages than max_steps is cut before it gets there."""
    over = [n for n in sorted(set(request.checkpoints)) if n > max_steps]
    agent = request.agent or ""
    counted = bool(request.models) or agent.startswith(("scripted:", "http://", "https://"))
    if not over or not counted:
        return None
    return (
        f"--checkpoints {','.join(map(str, over))}: a conversation of {over[0]} user turns "
        f"needs at least {over[0]} agent turns, more than max_steps ({max_steps}) allows, so "
        f"its trials are cut at max_steps; give --max-steps {max(over)} or more (each tool "
        "call takes a turn too)"
    )


def check_size(config: RunConfig) -> None:
    """A run plans at most MAX_RUN_TRIALS trials (every model, variant, task and trial)."""
    total = max(len(config.models), 1) * len(config.variants) * len(config.tasks) * config.trials
    if total > MAX_RUN_TRIALS:
        raise UsageError(
            f"the run would plan {total:,} trials ({config.trials:,} per task), more than "
            f"{MAX_RUN_TRIALS:,}: give fewer --trials, tasks, models or conditions"
        )


def peak_concurrency(config: RunConfig) -> int:
    """The most trials the run has at once: --concurrency, or its highest load level."""
    levels = [Variant.parse(key).load or 0 for key in config.variants]
    return max([config.concurrency, *levels])


# ---------------------------------------------------------------- the variants a run has


def variant_keys(suite: Suite, request: RunRequest) -> list[str]:
    """The run's variants, in order: one per load level, or the full profile's set; each
    followed by one per persona and one per checkpoint (the plain one is their baseline)."""
    if request.profile not in (None, "full"):
        raise UsageError(f"--profile {request.profile}: the only profile is 'full'")
    if request.profile == "full":
        if request.faults or request.drift or request.load or request.personas:
            raise UsageError("--profile full chooses faults, drift, load and personas itself")
        lacking = lacking_conditions(suite)
        if lacking:
            note(f"--profile full: {lacking}")
        bases = full_profile(suite)
    else:
        levels: list[int | None] = list(request.load) or [None]
        bases = [Variant(request.faults, request.drift, level) for level in levels]
    personas = rewriting(suite, request.personas)
    turns = sorted(set(request.checkpoints))
    # personas and checkpoints vary the plain conditions: each load level, or the clean trials
    extended = [Variant()] if request.profile == "full" else bases
    keys = []
    for base in bases:
        keys.append(base.key)
        if base in extended:
            keys += [replace(base, persona=name).key for name in personas]
            keys += [replace(base, turns=n).key for n in turns]
    return keys


def rewriting(suite: Suite, names: list[str]) -> list[str]:
    """The named personas, once each, but those that play every task as written
    (`cooperative`): the plain variant already runs exactly that, so such a persona gets a
    note rather than the same trials a second time."""
    kept = []
    for name in dict.fromkeys(names):
        if not resolve_persona(name, suite.file.personas).plain:
            kept.append(name)
            continue
        note(
            f"persona {name} plays every task as written, as the plain trials do: "
            "their numbers are its numbers, so it is not run a second time"
        )
    return kept


def profile_personas(suite: Suite) -> list[str]:
    """The personas `--profile full` runs: the suite's own, or every confusing or messy
    built-in when it declares none (`cooperative` is the plain variant already)."""
    if suite.file.personas:
        return rewriting(suite, list(suite.file.personas))
    return [p for p in BUILTIN_PERSONAS if p != "cooperative"]


def full_profile(suite: Suite) -> list[Variant]:
    """What the Reliability Score needs: clean trials and its conditions
    (`score_conditions`); and the clean trials as each of the suite's personas plays the
    user (profile_personas)."""
    return [
        Variant(),
        *score_conditions(suite),
        *(Variant(persona=name) for name in profile_personas(suite)),
    ]


def score_conditions(suite: Suite) -> list[Variant]:
    """The conditions the Reliability Score's parts other than pass^k are measured under:
    the fault profile, every drift variant and the peak load level, each as the suite
    defines them (absent ones are skipped)."""
    spec, score = suite.file, suite.file.score
    variants = []
    profile = score.faults or next(iter(spec.faults.profiles), None)
    if profile:
        variants.append(Variant(faults=profile))
    variants.extend(Variant(drift=name) for name in (score.drift or list(spec.drift)))
    if spec.load:
        peak = score.load or spec.load.peak or max(spec.load.levels)
        variants.append(Variant(load=peak))
    return variants


SCORE_SECTIONS = tuple(
    (part.under, DECLARED[part.under], part.name)
    for part in CATALOGUE
    if part.score_weight is not None and part.under is not None
)
"""Each condition the score needs: its suite.yaml section, what the suite declares in it, and
the part of the score it measures."""


def lacking_conditions(suite: Suite) -> str | None:
    """What `--profile full` cannot run on this suite and what to add for it, in a sentence;
    None when the suite declares every condition the score needs."""
    declared = score_conditions(suite)
    lacking = [entry for entry in SCORE_SECTIONS if not any(getattr(v, entry[0]) for v in declared)]
    if not lacking:
        return None
    sections, nouns, parts = zip(*lacking, strict=True)
    only = " (the run has clean trials and personas only)" if not declared else ""
    return (
        f"suite '{suite.name}' declares no {listed(nouns, 'or')}, so {listed(parts, 'and')} "
        f"cannot be measured{only}; add {listed([f'`{s}:`' for s in sections], 'and')} to "
        "suite.yaml to measure " + ("it" if len(lacking) == 1 else "them") + " (docs/conditions.md)"
    )


def listed(items: Sequence[str], last: str) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def score_settings(suite: Suite) -> dict[str, Any]:
    """The Reliability Score's settings a run stores: the suite's `score:` section, and the
    variants its parts are measured under on this suite (`conditions`; empty when the suite
    declares none), so that a summary suggests `--profile full` only where it adds a part."""
    return {
        **suite.file.score.model_dump(),
        "conditions": [v.key for v in score_conditions(suite)],
    }


# ---------------------------------------------------------------- a resumed run


def resumed_config(stored: RunRecord, suite: Suite, request: RunRequest) -> RunConfig:
    """A stored run's own settings, to resume it: the same suite content, the request's
    --concurrency, and the secrets the store does not keep, given again."""
    if stored.suite_hash != suite.content_hash:
        raise UsageError(
            f"run {stored.id} was made with a different version of suite '{suite.name}'; "
            "resume needs the same suite content (use `toolproof regrade` to re-grade)"
        )
    config = stored.config
    return config.with_(
        concurrency=request.concurrency or config.concurrency,
        model_flags=restored_secrets(config.model_flags, request.model_flags, stored.id),
        **restored_agent(config.agent, request.agent, stored.id),
    )


def restored_secrets(stored: ModelOverrides, given: ModelOverrides, run_id: str) -> ModelOverrides:
    """A resumed run's model settings. The store keeps header names, not their values, and
    a base URL without the credentials in it (secrets, often), so those come from the command
    again; a header or credentials the run used that the command does not give is a usage
    error."""
    headers = stored.headers or {}
    supplied = given.headers or {}
    missing = [
        name for name, value in headers.items() if value == REDACTED and name not in supplied
    ]
    if missing:
        raise UsageError(
            f"run {run_id} sent the header(s) {', '.join(missing)}, whose values are not "
            "stored: give them again with --header NAME=VALUE to resume it"
        )
    restored: dict[str, Any] = {}
    if headers:
        restored["headers"] = {name: supplied.get(name, value) for name, value in headers.items()}
    url = stored.base_url
    if url is not None and f"{REDACTED}@" in url:
        again = given.base_url
        if again is None:
            raise UsageError(
                f"run {run_id} called {url}, whose credentials are not stored: give them "
                "again with --base-url to resume it"
            )
        if redacted(again) != url:
            raise UsageError(f"--base-url {redacted(again)}: run {run_id} called {url}")
        restored["base_url"] = again
    return stored.model_copy(update=restored)


def restored_agent(stored: str | None, given: str | None, run_id: str) -> dict[str, str]:
    """A resumed run's agent, when the store keeps its URL without the credentials in it:
    the command gives it again (a usage error otherwise)."""
    if not stored or f"{REDACTED}@" not in stored:
        return {}
    if given is None or redacted(given) != stored:
        raise UsageError(
            f"run {run_id} ran the agent at {stored}, whose credentials are not stored: give "
            "it again with --agent to resume it"
        )
    return {"agent": given}


def note(text: str) -> None:
    """`note: TEXT` on standard error, TEXT made inert (it may name what a suite says)."""
    print(f"note: {inert(text)}", file=sys.stderr)
