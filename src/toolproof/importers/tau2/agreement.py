"""How far toolproof's verdict on an imported tau2 task agrees with tau2's own evaluator,
on the same trajectories: the gold actions, an agent that does nothing, and the gold
actions perturbed (a write dropped, an argument changed, a write made twice, two actions
swapped, every fact left unsaid). Each trajectory is graded by tau2's evaluator, which
replays its calls in tau2's own environment (database, actions and communicate_info, as the
task's reward basis says; nl assertions are left out, as in tau2's default evaluation), and
by a toolproof run of the imported suite with a scripted agent making exactly those calls.

On some kinds toolproof is stricter than tau2 by design (`STRICTER_BY_DESIGN`): there the two
define different things, and the headline agreement leaves those kinds out.

In a dual-control domain (telecom) a trajectory holds the user's calls too: tau2 gets them as
the user's tool calls, and the toolproof run a scripted user that makes them, in order, each
time the scripted agent hands over ("Please go ahead.")."""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from toolproof.importers.tau2.data import Domain, load_domain, tau2_module, tool_kinds
from toolproof.importers.tau2.state import invoke, invoke_user
from toolproof.importers.tau2.suite import (
    OPENING,
    call,
    import_tau2,
    initialized,
    instructions,
    task_id,
)
from toolproof.spec.expectations import CallSpec
from toolproof.spec.user import UserTurn
from toolproof.suite import Suite, load_suite
from toolproof.tools import ToolError
from toolproof.world import World

KINDS = (
    "gold",
    "do-nothing",
    "drop-write",
    "change-arg",
    "extra-write",
    "swap-order",
    "missing-fact",
)

Call = tuple[str, dict[str, Any], str]
"""A tool call: its tool, its arguments, and who makes it (tau2's requestor: "assistant" or
"user")."""

HAND_OVER = "Please go ahead on your phone."
"""What the scripted agent says where the user's calls come next."""


@dataclass(frozen=True)
class ByDesign:
    """A trajectory kind on which toolproof is stricter than the other grader by design."""

    mark: str
    """What toolproof fails there, as the table marks the kind."""
    reason: str
    """How toolproof's reason starts on each trajectory of the kind the other grader passes."""
    why: str


STRICTER_BY_DESIGN = {
    "extra-write": ByDesign(
        mark="a duplicate write",
        reason="writes: a duplicate write: ",
        why="tau2 compares only the final database; toolproof fails a write done and made "
        "again, whatever the system answered the second time",
    ),
}
"""The kinds where toolproof and tau2 grade different things on purpose, with why."""

REFUSAL_BY_CODE = ByDesign(
    mark="a refusal graded by code",
    reason="refusal: ",
    why="tau2 grades a task whose gold writes nothing and says nothing by an nl assertion "
    "alone, which its default reward leaves out, so it passes any agent that writes nothing; "
    "toolproof grades it as a refusal (the reads that show why, no write, a decline with its "
    "reason)",
)
"""Tasks, of every kind, where toolproof grades a refusal tau2 leaves to a judge."""


@dataclass(frozen=True)
class Trajectory:
    """What an agent did: its calls in order, then one message."""

    calls: list[Call]
    message: str


@dataclass
class Graded:
    """One trajectory of one task, as both graders judged it."""

    task: str
    kind: str
    toolproof: bool
    tau2: bool
    toolproof_reason: str = ""
    tau2_reason: str = ""
    refusal: bool = False
    """The task is a refusal toolproof grades by code and tau2 by an nl assertion alone."""

    @property
    def agrees(self) -> bool:
        return self.toolproof == self.tau2


@dataclass
class Agreement:
    """Every graded trajectory, and the perturbations that did not apply to a task."""

    graded: list[Graded] = field(default_factory=list)
    not_applicable: dict[str, int] = field(default_factory=dict)

    def alike(self, headline: bool = False) -> tuple[int, int]:
        """How many trajectories both graders grade alike, of how many: all of them, or for
        the headline those of the kinds both graders define alike (not `STRICTER_BY_DESIGN`)."""
        rows = [
            g for g in self.graded if not (headline and (g.kind in STRICTER_BY_DESIGN or g.refusal))
        ]
        return sum(g.agrees for g in rows), len(rows)

    def by_design(self) -> list[Graded]:
        """The disagreements a stricter-by-design kind explains: tau2 passes, and toolproof
        fails for that kind's reason."""
        return [g for g in self.graded if explained(g)]

    def unexplained(self) -> list[Graded]:
        """Every other disagreement."""
        return [g for g in self.graded if not g.agrees and not explained(g)]


def explained(graded: Graded) -> bool:
    """Whether the trajectory is a disagreement its kind's design explains."""
    design = REFUSAL_BY_CODE if graded.refusal else STRICTER_BY_DESIGN.get(graded.kind)
    return (
        design is not None
        and graded.tau2
        and not graded.toolproof
        and graded.toolproof_reason.startswith(design.reason)
    )


def final_message(facts: list[str]) -> str:
    """The agent's closing message, saying every fact."""
    if not facts:
        return "Done."
    return "Done. " + " ".join(f"{fact}." for fact in facts)


@dataclass(frozen=True)
class Replayed:
    """One gold action replayed after the ones before it: whether the system did it, and
    what it answered."""

    succeeded: bool
    answer: Any


def trajectories(
    task: Any, writes: set[str], replayed: list[Replayed] | None = None
) -> dict[str, Trajectory]:
    """A task's trajectories by kind; a perturbation with nothing to act on is left out: no
    write; no write that succeeds, to make twice; no two different adjacent actions that can
    be made the other way round (the second does not use a text that only the first one's
    answer showed, like a user id `find_user_id_by_email` found: made first, it would use
    what the agent could not know yet); no fact. `replayed` is the gold actions replayed in
    order (`replay_gold`); without it, every action is taken to succeed and to show nothing."""
    criteria = task.evaluation_criteria
    gold: list[Call] = [
        (a.name, dict(a.arguments), getattr(a, "requestor", "assistant"))
        for a in criteria.actions or []
    ]
    played = replayed if replayed is not None else [Replayed(True, None)] * len(gold)
    facts = [str(f) for f in criteria.communicate_info or []]
    said = final_message(facts)
    out = {"gold": Trajectory(gold, said), "do-nothing": Trajectory([], "Done.")}
    spots = [i for i, (name, _, _) in enumerate(gold) if name in writes]
    if spots:
        last = spots[-1]
        out["drop-write"] = Trajectory(gold[:last] + gold[last + 1 :], said)
        for i in reversed(spots):
            changed = _changed(gold[i])
            if changed is not None:
                out["change-arg"] = Trajectory([*gold[:i], changed, *gold[i + 1 :]], said)
                break
    done = [i for i in spots if played[i].succeeded]
    if done:
        first = done[0]
        out["extra-write"] = Trajectory([*gold[: first + 1], *gold[first:]], said)
    heard = f"{OPENING} {instructions(task)}"
    for i in range(len(gold) - 1):
        shown = _texts(played[i].answer) - _texts([p.answer for p in played[:i]])
        learnt = {text for text in shown if text not in heard}
        if gold[i] != gold[i + 1] and not _texts(gold[i + 1][1]) & learnt:
            swapped = [*gold[:i], gold[i + 1], gold[i], *gold[i + 2 :]]
            out["swap-order"] = Trajectory(swapped, said)
            break
    if facts:
        out["missing-fact"] = Trajectory(gold, "Done.")
    return out


def replay_gold(world: World, domain: str, task: Any) -> list[Replayed]:
    """The task's gold actions replayed in order on a fork of the domain's world (the
    task's own start, for a dual-control domain), each by its requestor."""
    fork = world.fork()
    out: list[Replayed] = []
    for action in task.evaluation_criteria.actions or []:
        try:
            out.append(Replayed(True, call(fork, domain, action)))
        except ToolError as refused:
            out.append(Replayed(False, str(refused)))
    return out


def _texts(value: Any) -> set[str]:
    """Every text in a JSON value, at any depth, and every text a JSON text encodes."""
    if isinstance(value, dict | list):
        out: set[str] = set()
        for item in value.values() if isinstance(value, dict) else value:
            out |= _texts(item)
        return out
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return {value}
        return {value} | (_texts(decoded) if isinstance(decoded, dict | list) else set())
    return set()


def _changed(call: Call) -> Call | None:
    """The call with its first text or number argument changed: a text gets "_x"
    appended, a number 1 added; None when it has no such argument."""
    name, args, side = call
    for key, value in args.items():
        new: Any
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            new = value + 1
        elif isinstance(value, str):
            new = value + "_x"
        else:
            continue
        return name, {**args, key: new}, side
    return None


def tau2_verdict(
    domain: Domain, task: Any, trajectory: Trajectory, world: World
) -> tuple[bool, str]:
    """tau2's evaluator on the trajectory: the reward of the task's reward basis (database,
    env assertions, actions, communicate), nl assertions left out. The tool messages are
    what toolproof's tools answered on a fork of `world`; tau2's evaluator replays the calls
    in its own environment and refuses a trajectory whose answers differ from its own."""
    message = tau2_module("tau2.data_model.message")
    env_module = tau2_module(f"tau2.domains.{domain.name}.environment")
    evaluator_env = tau2_module("tau2.evaluator.evaluator_env")
    evaluator_action = tau2_module("tau2.evaluator.evaluator_action")
    evaluator_communicate = tau2_module("tau2.evaluator.evaluator_communicate")
    reward_type = tau2_module("tau2.data_model.tasks").RewardType
    played = world.fork()
    messages: list[Any] = [
        message.AssistantMessage(role="assistant", content="Hi! How can I help you today?"),
        message.UserMessage(role="user", content=OPENING),
    ]
    for i, (name, args, side) in enumerate(trajectory.calls):
        made = message.ToolCall(id=f"call_{i}", name=name, arguments=args, requestor=side)
        if side == "user":
            messages.append(message.UserMessage(role="user", tool_calls=[made]))
        else:
            messages.append(message.AssistantMessage(role="assistant", tool_calls=[made]))
        try:
            answer, error = invoke_as(played, domain.name, name, args, side), False
        except ToolError as refused:
            answer, error = str(refused), True
        content = answer if isinstance(answer, str) else json.dumps(answer)
        messages.append(
            message.ToolMessage(
                id=made.id, role="tool", content=content, requestor=side, error=error
            )
        )
    messages.append(message.AssistantMessage(role="assistant", content=trajectory.message))
    basis = set(task.evaluation_criteria.reward_basis)
    parts: list[tuple[str, Any]] = []
    if basis & {reward_type.DB, reward_type.ENV_ASSERTION}:
        # tau2 builds the start from the task's initialization actions itself
        try:
            database = evaluator_env.EnvironmentEvaluator.calculate_reward(
                environment_constructor=env_module.get_environment,
                task=task,
                full_trajectory=messages,
            )
        except ValueError as differs:
            return False, f"tau2 answers differently: {differs}"
        parts.append(("database", database))
    if reward_type.ACTION in basis:
        parts.append(("actions", evaluator_action.ActionEvaluator.calculate_reward(task, messages)))
    if reward_type.COMMUNICATE in basis:
        parts.append(
            (
                "communicate",
                evaluator_communicate.CommunicateEvaluator.calculate_reward(task, messages),
            )
        )
    failed = [name for name, info in parts if info.reward < 1.0]
    return not failed, ", ".join(failed)


def invoke_as(world: World, domain: str, name: str, args: dict[str, Any], side: str) -> Any:
    """One call on the world, made by the agent or (`side` "user") by the user."""
    if side == "user":
        return invoke_user(world, domain, name, args)
    return invoke(world, domain, name, args)


def script(trajectory: Trajectory) -> list[dict[str, Any]]:
    """The scripted model's turns for a trajectory: one call of the agent's per turn, a
    hand-over to the user where the user's calls come next, then its message."""
    turns: list[dict[str, Any]] = []
    for name, args, side in trajectory.calls:
        if side == "user":
            if not turns or turns[-1].get("text") != HAND_OVER:
                turns.append({"text": HAND_OVER})
        else:
            turns.append({"tool_calls": [{"name": name, "arguments": args}]})
    turns.append({"text": trajectory.message})
    return turns


def user_turns(trajectory: Trajectory) -> list[UserTurn]:
    """The scripted user's turns for a trajectory: at each hand-over, the user's calls that
    come next, made in order."""
    turns: list[UserTurn] = []
    handed = False
    for name, args, side in trajectory.calls:
        if side != "user":
            handed = False
            continue
        if not handed:
            turns.append(UserTurn(say="Done.", do=[]))
            handed = True
        turns[-1].do.append(CallSpec(tool=name, args=args))
    return turns


def acting(suite: Suite, turns: dict[str, list[UserTurn]]) -> Suite:
    """The suite with each named task's user making `turns` (tasks not named keep theirs)."""
    tasks = []
    for task in suite.tasks:
        if task.id in turns:
            user = task.spec.user.model_copy(update={"turns": turns[task.id]})
            task = replace(task, spec=task.spec.model_copy(update={"user": user}))
        tasks.append(task)
    return replace(suite, tasks=tasks)


async def toolproof_verdicts(
    suite: Suite, suite_dir: Path, scripts: dict[str, list[dict[str, Any]]]
) -> dict[str, tuple[bool, str]]:
    """Run the suite once with a scripted agent making each task's calls: task -> (passed,
    reason)."""
    from toolproof.runner import RunRequest, run_suite
    from toolproof.store import Store

    path = suite_dir.parent / "agent-script.yaml"
    path.write_text(yaml.safe_dump({"tasks": scripts}, sort_keys=False), encoding="utf-8")
    seen: dict[str, tuple[bool, str]] = {}
    request = RunRequest(
        agent=f"scripted:{path}", trials=1, k=[1], tasks=",".join(scripts), concurrency=4
    )
    store = Store(f"sqlite:///{suite_dir.parent / 'runs.db'}")
    await run_suite(
        suite,
        request,
        store,
        fresh=True,
        on_result=lambda r: seen.__setitem__(r.task_id, (r.outcome == "passed", r.reason)),
    )
    return seen


def sample(tasks: list[Any], count: int) -> list[Any]:
    """`count` tasks spread evenly over the domain."""
    stride = max(1, len(tasks) // count)
    return tasks[::stride][:count]


def measure(
    domain_name: str,
    count: int,
    progress: Callable[[str], None] = lambda _: None,
    ids: list[str] | None = None,
) -> Agreement:
    """Both verdicts on every trajectory of `count` tasks of the domain (`sample`), or of
    the tasks whose tau2 ids are `ids`."""
    domain = load_domain(domain_name)
    if ids is not None:
        tasks = [t for t in domain.tasks if str(t.id) in ids]
    else:
        tasks = sample(domain.tasks, count)
    kinds = {**tool_kinds(domain), **tool_kinds(domain, user=True)}
    writes = {name for name, kind in kinds.items() if kind == "write"}
    dual = domain.user_db_model is not None
    agreement = Agreement()
    with tempfile.TemporaryDirectory(prefix="tau2-agreement-") as tmp:
        suite_dir = Path(tmp) / "suite"
        import_tau2(domain_name, suite_dir, ids=[str(t.id) for t in tasks])
        suite = load_suite(suite_dir)
        data = domain.load_db().model_dump(mode="json")
        if dual:
            data.update(domain.load_user_db().model_dump(mode="json"))
        world = World.from_data(data)
        by_kind: dict[str, dict[str, tuple[Trajectory, Graded]]] = {k: {} for k in KINDS}
        for task in tasks:
            start = initialized(world, domain_name, task) if dual else world
            made = trajectories(task, writes, replay_gold(start, domain_name, task))
            name = task_id(domain_name, str(task.id))
            for kind in KINDS:
                if kind not in made:
                    agreement.not_applicable[kind] = agreement.not_applicable.get(kind, 0) + 1
                    continue
                passed, why = tau2_verdict(domain, task, made[kind], start)
                graded = Graded(name, kind, toolproof=False, tau2=passed, tau2_reason=why)
                graded.refusal = bool(suite.task(name).spec.expect.forbidden_calls)
                by_kind[kind][name] = (made[kind], graded)
        for kind, found in by_kind.items():
            if not found:
                continue
            progress(f"{domain_name}: {kind}, {len(found)} tasks")
            scripts = {name: script(trajectory) for name, (trajectory, _) in found.items()}
            users = {name: user_turns(trajectory) for name, (trajectory, _) in found.items()}
            played = acting(suite, users) if dual else suite
            verdicts = asyncio.run(toolproof_verdicts(played, suite_dir, scripts))
            for name, (_, graded) in found.items():
                graded.toolproof, graded.toolproof_reason = verdicts[name]
                agreement.graded.append(graded)
    return agreement
