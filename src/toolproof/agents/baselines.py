"""Baseline agents that prove a suite sound: the oracle must pass every task, and every
adversarial baseline (`ADVERSARIES`), each a way to look right without doing the work, must
fail every task."""

from __future__ import annotations

import asyncio
import calendar
import random
import re
from typing import Any, ClassVar

from toolproof.agents.base import Agent, TrialContext
from toolproof.errors import AgentFailure
from toolproof.gateway import Gateway
from toolproof.gateway.drift import DriftError
from toolproof.graders.base import allowed_values, by_field, describe_call
from toolproof.graders.communication import fielded
from toolproof.graders.identity import given_by_user
from toolproof.graders.refusal import shown_values
from toolproof.graders.rules import compliance
from toolproof.meaning.actions import name_words, named_at, vocabulary
from toolproof.meaning.clauses import read
from toolproof.meaning.dialogue import is_affirmative
from toolproof.tools.base import ToolResult
from toolproof.transcript import Transcript

NULL_REPLY = "I'm sorry, I can't help with that."


class Adversary(Agent):
    """A baseline that looks right without doing the work: every task must fail it."""

    does: ClassVar[str]
    """What it does, to finish "cannot tell a good agent from one that ..."."""

    def __init__(self, context: TrialContext) -> None:
        self.context = context


class NullAgent(Adversary):
    """Calls nothing and says nothing useful. Every task must fail it."""

    does = "does nothing"

    async def reply(self, message: str, tools: Gateway) -> str:
        return NULL_REPLY


REASON_VALUES = 3
"""How many values of its last read the oracle gives as a refusal's reason, where the task
names no fact (the refusal grader wants one of them)."""


class OracleAgent(Agent):
    """Replays the task's gold actions and states the facts the user must hear. It plays
    both sides: a gold action `by: user` it makes with the user's own tools.

    When the suite requires confirmation before writes, it performs the actions up to the
    first write, asks for confirmation, and goes on once the user says yes. When the suite
    identifies users on what they give, it asks for their account's details before an
    identifying action whose values the user has not said (up to three times: a user who
    misspeaks, or answers vaguely, is asked again).
    """

    def __init__(self, context: TrialContext) -> None:
        self.context = context
        expect = context.task.spec.expect
        self.pending = list(expect.actions or [])
        self.keeps = compliance(context.suite.file.policy_rules)
        self.confirm = self.keeps.confirm_writes
        self.identify = self.keeps.on_user_values
        self.writes = frozenset(name for name, b in context.suite.tools.items() if b.write)
        self.reads = frozenset(name for name, b in context.suite.tools.items() if not b.write)
        self.said = {name: b.schema.description for name, b in context.suite.tools.items()}
        self.declined = context.declined
        self.refusal = bool(self.declined)
        self.seen: list[Any] = []
        self.asked = False
        self.asked_identity = 0
        self.identified = False
        self.done = False

    def _unidentified(self, tool: str, args: dict[str, Any]) -> bool:
        """An identifying action on values the user has not said yet, before the user was
        identified on what they said (after that, an id a lookup found is fine)."""
        if self.identified or tool not in self.identify:
            return False
        heard = " ".join(m.content for m in self.context.transcript.messages("user"))
        if given_by_user(args, heard):
            self.identified = True
            return False
        return True

    async def reply(self, message: str, tools: Gateway) -> str:
        return self.keeps.say(await self.answer(message, tools))

    async def answer(self, message: str, tools: Gateway) -> str:
        """The oracle's reply before the rules' rewrites (`Compliance.reply`)."""
        if self.done:
            return "You're welcome. Is there anything else?"
        if self.asked and not is_affirmative(message):
            return f"To be sure: shall I go ahead with {self.proposal()}? (yes/no)"
        while self.pending:
            action = self.pending[0]
            if self.asked_identity < 3 and self._unidentified(action.tool, dict(action.args)):
                self.asked_identity += 1
                return "What is the email address, phone number or customer id on your account?"
            if self.confirm and not self.asked and tools.is_write(action.tool):
                self.asked = True
                return f"I can do that: {self.proposal()}. Shall I go ahead? (yes/no)"
            self.pending.pop(0)
            hands = tools if action.by == "agent" else self.context.user_tools
            if hands is not None:  # a user's action: the oracle plays the user's side too
                await self.perform(action.tool, dict(action.args), hands)
        self.done = True
        facts = [f.options[0] for f in self.context.task.spec.expect.facts()]
        if self.refusal:
            # a refusal task without facts wants a value its reads showed as the reason
            facts = facts or shown_values(self.seen[-1:])[:REASON_VALUES]
            return " ".join([self.decline(), said_apart(facts)]).strip()
        return " ".join(["Done.", said_apart(facts)]).strip()

    def decline(self) -> str:
        """What a refusal task requires said, and no more: the action asked for, declined
        (the facts that say why follow)."""
        words = vocabulary(self.writes, self.reads, self.said)
        actions = [
            next((w for w in name_words(tool) if named_at(read(w), words.actions[tool])), "do")
            for tool in self.declined
            if tool != "*"
        ]
        return (
            f"I can't {' or '.join(actions) or 'do'} that, as our records and policy rule it out:"
        )

    def proposal(self) -> str:
        """Every write still to do, with its arguments: what the user's yes is for."""
        return ", ".join(
            describe_call(a.tool.replace("_", " "), dict(a.args))
            for a in self.pending
            if a.tool in self.writes
        )

    async def perform(self, tool: str, args: dict[str, Any], tools: Gateway) -> ToolResult:
        """One gold action, called by the suite's own names: this oracle knows only the API
        it was written against, so schema drift breaks it, as it would a hard-coded client."""
        return self.saw(tool, await tools.call(tool, args), tools)

    def saw(self, tool: str, result: ToolResult, tools: Gateway) -> ToolResult:
        """Keeps what a successful read showed (a refusal's reason may be one of its values)."""
        if not result.is_error and not tools.is_write(tool):
            self.seen.append(result.content)
        return result


class RetryingOracle(OracleAgent):
    """The oracle that handles every injected fault the right way: it waits out a 429 for
    its Retry-After, refreshes an expired token, and tries again after a server error, a
    timeout, or a damaged answer; and it calls the API as drift has changed it. Every fault
    profile and drift variant a suite ships must be survivable by it.
    """

    attempts = 8

    async def call(
        self, tool: str, args: dict[str, Any], tools: Gateway, page: int | None = None
    ) -> ToolResult:
        """One call of a suite tool through the agent-facing (possibly drifted) API."""
        try:
            name, arguments = tools.present(tool, args)
        except DriftError as exc:
            raise AgentFailure("drift_unexpressible", str(exc)) from None
        if page is not None:
            arguments["page"] = page
        return await tools.call(name, arguments)

    async def perform(self, tool: str, args: dict[str, Any], tools: Gateway) -> ToolResult:
        """The call until it succeeds, then every later page of a paginated answer."""
        result = self.saw(tool, await self.attempt(tool, args, tools), tools)
        while not result.is_error and (page := _next_page(result.content)) is not None:
            result = self.saw(tool, await self.attempt(tool, args, tools, page), tools)
        return result

    async def attempt(
        self, tool: str, args: dict[str, Any], tools: Gateway, page: int | None = None
    ) -> ToolResult:
        refresh = self.context.suite.file.faults.refresh_tool
        result = await self.call(tool, args, tools, page)
        for attempt in range(1, self.attempts):
            if not result.is_error:
                break
            if result.error_kind == "token_expired" and refresh:
                await self.call(refresh, {}, tools)
            elif result.error_kind == "rate_limit":
                wait = _retry_after(result.content)
                await asyncio.sleep(wait * tools.time_scale)
            else:
                await asyncio.sleep(min(2.0, 0.1 * 2**attempt) * tools.time_scale)
            result = await self.call(tool, args, tools, page)
        return result


def said_apart(facts: list[str]) -> str:
    """Facts said one after another, kept apart: numbers side by side ("327 1000") would read
    as one number."""
    return "; ".join(facts)


def _next_page(content: Any) -> int | None:
    """The page to ask for next when an answer came back cut into pages."""
    note = content.get("pagination") if isinstance(content, dict) else None
    if not isinstance(note, dict):
        return None
    page, pages = note.get("page"), note.get("pages")
    if isinstance(page, int) and isinstance(pages, int) and page < pages:
        return page + 1
    return None


def _retry_after(content: Any) -> float:
    error = content.get("error") if isinstance(content, dict) else None
    if isinstance(error, dict) and isinstance(error.get("retry_after_s"), int | float):
        return float(error["retry_after_s"])
    return 1.0


# ---------------------------------------------------------------- adversarial baselines
#
# Each looks right without doing the work. A task one of them passes cannot tell a good
# agent from that one, so `toolproof validate` calls it unsound.


class RecitingAgent(Adversary):
    """Calls no tool and states every fact the task expects, in every form it allows: an
    agent that knows the answers without looking anything up."""

    does = "states every expected fact without calling a tool"

    async def reply(self, message: str, tools: Gateway) -> str:
        facts = self.context.task.spec.expect.facts()
        options = [o for f in facts for o in f.options]
        return " ".join(["Here is what you need to know:", said_apart(options)]).strip()


class EchoAgent(Adversary):
    """Calls no tool and says back whatever the user said."""

    does = "repeats the user's words"

    async def reply(self, message: str, tools: Gateway) -> str:
        return message


class WordSaladAgent(Adversary):
    """Calls no tool and answers with every word it was shown (the policy, the tools'
    descriptions and parameters with their allowed values, the user's message), shuffled."""

    does = "answers with a shuffle of every word it was shown"

    def __init__(self, context: TrialContext) -> None:
        super().__init__(context)
        self.rng = random.Random(f"word-salad:{context.seed}")

    async def reply(self, message: str, tools: Gateway) -> str:
        shown = [self.context.suite.policy, message]
        for schema in tools.schemas:
            shown += [schema.name, schema.description, *_schema_words(schema.parameters)]
        words = sorted({w for text in shown for w in re.findall(r"[\w$%.,:/@+-]+", text)})
        self.rng.shuffle(words)
        return " ".join(words)


def _schema_words(schema: Any) -> list[str]:
    """Every description, name and allowed value in a JSON Schema."""
    if isinstance(schema, dict):
        return [w for key, value in schema.items() for w in [str(key), *_schema_words(value)]]
    if isinstance(schema, list):
        return [w for item in schema for w in _schema_words(item)]
    return [str(schema)]


STATUS_WORDS = (
    "yes no done ok confirmed approved declined denied refused failed completed pending "
    "processing open closed active inactive on hold scheduled rescheduled planned booked "
    "assigned unassigned dispatched picked packed shipped in transit out for delivery "
    "delivered late on time delayed cancelled canceled refunded partially refunded returned "
    "exchanged replaced paid unpaid overdue adjusted credited charged created updated "
    "merged deleted kept unchanged available unavailable in stock out of stock not found "
    "valid invalid expired eligible not eligible allowed not allowed"
)


def _every_time() -> str:
    return " ".join(f"{h:02d}:{m:02d}" for h in range(24) for m in range(60))


def _every_date(year: int = 2026) -> str:
    days = [
        (month, day)
        for month in range(1, 13)
        for day in range(1, calendar.monthrange(year, month)[1] + 1)
    ]
    iso = " ".join(f"{year}-{m:02d}-{d:02d}" for m, d in days)
    spoken = " ".join(f"{calendar.month_name[m]} {d}" for m, d in days)
    return f"{iso} {spoken}"


FIXED_REPLY = f"{STATUS_WORDS}. {_every_time()}. {_every_date()}."


class FixedReplyAgent(Adversary):
    """Calls no tool and sends one reply that covers the usual answers: common status words,
    every time of day (HH:MM), every date of 2026, and the user's own words."""

    does = "sends one fixed reply of status words, every time and date, and the user's words"

    async def reply(self, message: str, tools: Gateway) -> str:
        return f"{FIXED_REPLY} You said: {message}"


class ReadAllAgent(Adversary):
    """Calls every read tool once, with the arguments a lazy agent would guess (ids it can
    see in the user's words, else the examples in the tools' descriptions, else
    placeholders of the right type), and stops without an answer."""

    does = "calls every read tool once and stops"
    REPLY = "I have looked into this for you."

    def __init__(self, context: TrialContext) -> None:
        super().__init__(context)
        self.called = False

    async def reply(self, message: str, tools: Gateway) -> str:
        if not self.called:
            self.called = True
            for schema in tools.schemas:
                if not tools.is_write(schema.name):
                    await tools.call(schema.name, guess_arguments(schema.parameters, message))
        return self.REPLY


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?\(?\d[\d ().-]{6,}\d")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")
_EXAMPLE = re.compile(r"(?:e\.g\.|like|such as)\s*\(?[\"'“]([^\"'”]+)[\"'”]")


def guess_arguments(parameters: dict[str, Any], said: str) -> dict[str, Any]:
    """A lazy agent's arguments for a tool: its required parameters only, each filled from
    the user's words where something fits, else from the description's example."""
    properties = parameters.get("properties", {})
    return {
        name: _guess(name, properties.get(name, {}), said)
        for name in parameters.get("required", [])
    }


def _guess(name: str, schema: dict[str, Any], said: str) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("integer", "number"):
        numbers = [float(n) for n in _NUMBER.findall(said)] or [1.0]
        return int(numbers[0]) if kind == "integer" else numbers[0]
    if kind == "boolean":
        return True
    if kind == "array":
        return [_guess(name, schema.get("items", {}), said)]
    if kind == "object":
        return {}
    hint = f"{name} {schema.get('description', '')}".lower()
    if "email" in hint or "e-mail" in hint:
        found = _EMAIL.findall(said)
        return found[0] if found else "customer@example.com"
    if "phone" in hint:
        found = _PHONE.findall(said)
        return found[0].strip() if found else "555-0100"
    example = _EXAMPLE.search(str(schema.get("description", "")))
    words = [w.strip(".,;:!?()'\"") for w in said.split()]
    if example:
        shape = re.compile(re.sub(r"\d+", r"\\d+", re.escape(example.group(1))))
        fitting = [w for w in words if shape.fullmatch(w)]
        return fitting[0] if fitting else example.group(1)
    ids = [w for w in words if re.search(r"\d", w) and re.search(r"[A-Za-z]", w)]
    return ids[0] if ids else (words[0] if words else "example")


# ---------------------------------------------------------------- the shortcuts of agents that do
# some of the work: they read, but leak, hedge, refuse blindly or write what nobody asked for


def seen_values(transcript: Transcript) -> list[tuple[str, str]]:
    """(field, value) of every value the trial's successful tool results showed, in order,
    each once."""
    found: list[tuple[str, str]] = []
    for call in transcript.tool_calls():
        if not call.is_error:
            found += [item for item in fielded(call.result, "") if item not in found]
    return found


def recital(transcript: Transcript) -> str:
    """Every value the tool results showed, as "field: value" pairs."""
    return "; ".join(f"{key}: {value}" if key else value for key, value in seen_values(transcript))


class LeakingAgent(Adversary):
    """Looks up every identifier the user mentions (an email, a phone number, an id) with
    every read tool that takes one, follows the account ids it finds, and recites everything
    it got: the user's own records, and anyone else's the user named."""

    does = "looks up every identifier the user mentions and recites what it got"
    LIMIT = 40

    def __init__(self, context: TrialContext) -> None:
        super().__init__(context)
        self.asked: set[tuple[str, str]] = set()

    async def reply(self, message: str, tools: Gateway) -> str:
        said = " ".join(m.content for m in self.context.transcript.messages("user"))
        first = _identifying_tools(self.context)
        reads = [s for s in tools.schemas if not tools.is_write(s.name)]
        reads.sort(key=lambda s: s.name not in first)
        await self.look_up(_identifiers(said), reads, tools)
        found = [v for _, v in seen_values(self.context.transcript)]
        await self.look_up([v for v in found if _ID.fullmatch(v)], reads, tools)
        return "Here is everything I found: " + recital(self.context.transcript)

    async def look_up(self, values: list[str], reads: list[Any], tools: Gateway) -> None:
        for value in values:
            for schema in reads:
                name = _parameter_for(schema.parameters, value)
                if name is None or (schema.name, value) in self.asked:
                    continue
                if len(self.asked) >= self.LIMIT:
                    return
                self.asked.add((schema.name, value))
                args = guess_arguments(schema.parameters, value)
                args[name] = value
                await tools.call(schema.name, args)


class HedgingAgent(OracleAgent, Adversary):
    """Makes the task's decisive reads (the gold actions that read, asking for the user's
    identity as the oracle does), then answers with every value it saw and, for every field
    whose values the tools' parameters list, all of them: "status could be any of: ..."."""

    does = "makes the decisive reads, then answers with every value it saw"

    def __init__(self, context: TrialContext) -> None:
        super().__init__(context)
        self.pending = [a for a in self.pending if a.tool not in self.writes]
        self.refusal = False

    async def reply(self, message: str, tools: Gateway) -> str:
        answer = await super().reply(message, tools)
        if not self.done or answer.startswith("You're welcome"):
            return answer
        alternatives = by_field(allowed_values({s.name: s.parameters for s in tools.schemas}))
        hedges = [f"{key} could be any of: {', '.join(v)}" for key, v in alternatives.items()]
        return "; ".join([recital(self.context.transcript), *hedges])


class BlindRefuser(OracleAgent, Adversary):
    """Looks up the caller (the gold actions' identifying calls) and nothing else, then
    declines with a reason that sounds right: the thing belongs to another account, policy
    forbids it; and it says every fact that needs no tool."""

    does = "looks up the caller and declines without checking why"

    def __init__(self, context: TrialContext) -> None:
        super().__init__(context)
        first = _identifying_tools(context)
        self.pending = [a for a in self.pending if a.tool in first]

    async def reply(self, message: str, tools: Gateway) -> str:
        answer = await super().reply(message, tools)
        if not self.done or answer.startswith("You're welcome"):
            return answer
        facts = [
            o
            for f in self.context.task.spec.expect.facts()
            if f.source != "tools"
            for o in f.options
        ]
        return " ".join([BLIND_REFUSAL, said_apart(facts)]).strip()


BLIND_REFUSAL = (
    "I'm sorry, I can't do that: it belongs to another account, and our policy does not "
    "allow it, because it is no longer eligible."
)


class OverWriter(OracleAgent, Adversary):
    """Does what the oracle does (the gold actions, confirmed), then writes to other objects
    too: each write tool the task uses, once more, on another id of the same shape (one the
    tools showed, else the next one up); where the task writes nothing, or its writes take
    nothing to change, every other write tool."""

    does = "does the task's writes and then writes to other objects"

    async def reply(self, message: str, tools: Gateway) -> str:
        first = not self.done
        answer = await super().reply(message, tools)
        if self.done and first:
            await self.write_more(tools)
        return answer

    async def write_more(self, tools: Gateway) -> None:
        gold = [a for a in self.context.task.spec.expect.actions or [] if a.tool in self.writes]
        seen = [v for _, v in seen_values(self.context.transcript)]
        required = {s.name: list(s.parameters.get("required", [])) for s in tools.schemas}
        varied = False
        for action in {a.tool: a for a in gold}.values():
            other = _elsewhere(dict(action.args), seen, required.get(action.tool, []))
            if other != action.args:
                await tools.call(action.tool, other)
                varied = True
        if varied:
            return
        said = " ".join(m.content for m in self.context.transcript.messages("user"))
        for schema in tools.schemas:
            if tools.is_write(schema.name) and schema.name not in {a.tool for a in gold}:
                guessed = guess_arguments(schema.parameters, said)
                await tools.call(schema.name, _elsewhere(guessed, seen, required[schema.name]))


def _elsewhere(args: dict[str, Any], seen: list[str], required: list[str]) -> dict[str, Any]:
    """The same call on another object: one of its required arguments changed. An id takes
    another value of its shape the tools showed (else the same id with its last digit moved
    on); a list of names, another name the tools showed; a text, another text; a number, the
    next one."""
    names = [n for n in required if n in args] or list(args)
    ids = [n for n in names if isinstance(args[n], str) and _ID.fullmatch(args[n])]
    for name in ids + [n for n in names if n not in ids]:
        value = args[name]
        if isinstance(value, str):
            return {**args, name: _another(value, seen)}
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return {**args, name: [_another(value[0], [v for v in seen if v not in value])]}
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {**args, name: value + 1}
    return args


def _another(value: str, seen: list[str]) -> str:
    shape = re.compile(re.sub(r"\d", r"\\d", re.escape(value)))
    other = next((v for v in seen if v != value and shape.fullmatch(v)), None)
    if other is not None:
        return other
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    if digits:
        last = digits[-1]
        return value[:last] + str((int(value[last]) + 1) % 10) + value[last + 1 :]
    return next((v for v in seen if v != value and len(v) > 2), f"{value} (another)")


_ID = re.compile(r"(?=[\w.@+:/-]*\d)[\w.@+:/-]{4,}")


def _identifiers(said: str) -> list[str]:
    """The emails, phone numbers and ids in the user's words, in the order said."""
    found: list[str] = []
    for pattern in (_EMAIL, _PHONE):
        found += [m.group(0).strip() for m in pattern.finditer(said)]
    words = [w.strip(".,;:!?()'\"") for w in said.split()]
    found += [
        w for w in words if re.search(r"\d", w) and re.search(r"[A-Za-z]", w) and "@" not in w
    ]
    return list(dict.fromkeys(found))


def _parameter_for(parameters: dict[str, Any], value: str) -> str | None:
    """The parameter of a tool an identifier fits: an email one, a phone one, or one whose
    description's example has the identifier's shape."""
    properties = parameters.get("properties", {})
    for name, schema in properties.items():
        hint = f"{name} {schema.get('description', '')}".lower()
        if _EMAIL.fullmatch(value):
            if "email" in hint or "e-mail" in hint:
                return str(name)
            continue
        if _PHONE.fullmatch(value) and not re.search(r"[A-Za-z]", value):
            if "phone" in hint:
                return str(name)
            continue
        example = _EXAMPLE.search(str(schema.get("description", "")))
        if example:
            shape = re.sub(r"\d+", r"\\d+", re.escape(example.group(1)))
            if re.fullmatch(shape, value, re.IGNORECASE):
                return str(name)
    return None


def _identifying_tools(context: TrialContext) -> set[str]:
    """The tools the suite's policy says identify the user."""
    return set(compliance(context.suite.file.policy_rules).identifies)


ADVERSARIES: dict[str, type[Adversary]] = {
    "null": NullAgent,
    "recite-facts": RecitingAgent,
    "echo-user": EchoAgent,
    "word-salad": WordSaladAgent,
    "read-all": ReadAllAgent,
    "fixed-reply": FixedReplyAgent,
    "leaker": LeakingAgent,
    "hedger": HedgingAgent,
    "blind-refuser": BlindRefuser,
    "over-writer": OverWriter,
}
"""The baselines every task must fail, by the name `--agent` and `validate` give them."""
