"""The words that name what a tool does, so a message can be read for the actions it names.

A write tool's action is named by the words of its name that no read tool's name has
(`cancel` of cancel_order, not `order`), and by the everyday words people use for the same
thing ("text you" for send_sms, "put it on van V136" for assign_vehicle, "move it" for a
reschedule). The everyday words are one small thesaurus of common business verbs, the same
for every suite; a suite's own tool names do the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from toolproof.meaning.clauses import Reading
from toolproof.meaning.values import tokens

GENERIC = frozenset(
    {"get", "set", "do", "make", "run", "call", "the", "a", "an", "to", "of", "for", "by", "and"}
)

THESAURUS: Mapping[str, tuple[str, ...]] = {
    "cancel": ("cancel", "cancellation", "call off", "void", "scrap"),
    "refund": (
        "refund",
        "reimburse",
        "money back",
        "pay back",
        "credit back",
        "refundable",
        "money",
    ),
    "book": ("book", "booking", "reserve", "schedule", "put you down", "slot you in"),
    "reschedule": ("reschedule", "move", "rebook", "shift", "push", "change the date"),
    "assign": (
        "assign",
        "put * on",
        "allocate",
        "load * on",
        "load * onto",
        "load onto",
        "move * onto",
        "move * to * van",
        "move * to * truck",
        "reassign",
    ),
    "unassign": ("unassign", "take * off", "release", "remove from"),
    "notify": ("notify", "let * know", "inform", "text", "email", "message", "alert"),
    "send": ("send", "text", "email", "message"),
    "sms": ("text", "sms", "message"),
    "update": (
        "update",
        "change",
        "correct",
        "fix",
        "edit",
        "amend",
        "replace",
        "switch",
        "put * into",
    ),
    "merge": (
        "merge",
        "combine",
        "consolidate",
        "fold",
        "dedupe",
        "deduplicate",
        "unify",
        "put * together",
        "bring * together",
        "join",
    ),
    "delete": ("delete", "remove", "erase", "purge", "drop", "bin", "get rid of"),
    "create": ("create", "set up", "generate"),
    "apply": ("apply", "give you", "add"),
    "discount": ("discount", "take * off", "knock * off", "money off", "reduce the price"),
    "exchange": ("exchange", "swap", "trade"),
    "adjust": ("adjust", "credit", "correct", "reduce", "amend", "take * off", "discount"),
    "lower": ("lower", "reduce", "take * off", "knock * off", "discount", "cut"),
    "rollup": ("roll up", "rollup", "consolidate", "combine"),
    "return": ("return", "send * back"),
    "transfer": ("transfer", "move"),
    "modify": ("modify", "change", "update", "amend"),
}
"""Everyday words for common actions, by the word a tool's name uses for it (`*`: up to three
words between, as in "let the receiver know")."""

READ_VERBS = (
    "look up",
    "lookup",
    "look into",
    "check",
    "double check",
    "verify",
    "find",
    "search",
    "review",
    "pull up",
    "see",
    "fetch",
    "retrieve",
    "view",
    "show",
    "confirm the details",
    "get the details",
    "read",
)
"""Words that name reading, not changing: "Shall I look up our policy?" proposes no write."""


def name_words(name: str) -> list[str]:
    """A tool name's words: snake_case, camelCase, kebab-case and dotted names split."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


@dataclass(frozen=True)
class Vocabulary:
    """What a suite's tools are called: each write tool's action words, as tokens."""

    actions: Mapping[str, tuple[tuple[str, ...], ...]]
    """Write tool -> the word sequences (as tokens) that name its action."""
    reads: tuple[tuple[str, ...], ...]
    """The word sequences (as tokens) that name reading something."""
    systems: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Tool -> the proper names its description gives, as tokens: the system it reads or
    writes ("Salesforce" of "Get a Salesforce account", "CUSTDB" of "... from CUSTDB")."""


def proper_names(description: str) -> tuple[str, ...]:
    """The capitalised words of a description's first sentence other than its first word:
    the names of the systems and things it is about."""
    first = re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0]
    words = re.findall(r"[A-Za-z][\w-]*", first)[1:]
    return tuple(sorted({t for w in words if w[0].isupper() for t in tokens(w)}))


_ARTICLES = frozenset({"a", "an", "the", "its", "their", "one", "new", "each"})
_STOPS = frozenset(
    {"in", "from", "of", "to", "for", "on", "onto", "with", "into", "by", "at", "about", "and",
     "or", "as", "that", "which", "when", "if", "it", "off", "back", "its", "their"}
)  # fmt: skip


def described(description: str) -> set[tuple[str, ...]]:
    """The words a tool's description names its action with: the verb each part of its first
    sentence starts with ("Cancel a shipment, put it on hold, or release ..."), with its
    everyday words, and the thing it makes or changes when that takes two words or more
    ("golden account" of "Write the golden account of a company")."""
    first = re.split(r"(?<=[.:;(])\s|[:(]", description.strip(), maxsplit=1)[0]
    forms: set[tuple[str, ...]] = set()
    for part in re.split(r",\s*(?:or\s+|and\s+)?|\s+or\s+", first):
        words = re.findall(r"[A-Za-z][\w'-]*", part.lower())
        if not words or words[0].endswith("ed") or words[0] in _LIGHT | _STOPS | _ARTICLES:
            continue  # "filled in from ...", "at the phone number": no action; "put": too light
        verb = words[0]
        forms |= {tuple(tokens(verb)), *(_form(s) for s in THESAURUS.get(verb, ()))}
        thing = []
        for word in words[1:]:
            if word in _STOPS:
                break
            if word not in _ARTICLES:
                thing.append(word)
        if len(thing) >= 2 and not thing[0].endswith("ed"):
            forms.add(tuple(t for w in thing for t in tokens(w)))
    return forms


_LIGHT = frozenset({"put", "get", "make", "take", "give", "set", "have", "do", "keep", "let"})
"""Verbs too light to name an action alone."""


@lru_cache(maxsize=64)
def _vocabulary(
    writes: tuple[str, ...], reads: tuple[str, ...], descriptions: tuple[tuple[str, str], ...]
) -> Vocabulary:
    shared = {w for read in reads for w in name_words(read)} | GENERIC
    said = dict(descriptions)
    actions: dict[str, tuple[tuple[str, ...], ...]] = {}
    for tool in writes:
        words = [w for w in name_words(tool) if w not in shared] or name_words(tool)
        forms = {tuple(tokens(w)) for w in words}
        for word in words:
            forms |= {_form(s) for s in THESAURUS.get(word, ())}
        forms |= described(said.get(tool, ""))
        actions[tool] = tuple(sorted(f for f in forms if f and f != ("*",)))
    read_words = {_form(v) for v in READ_VERBS}
    spaces = {name_words(w)[0] for w in writes if name_words(w)}
    read_words |= {tuple(tokens(name_words(r)[0])) for r in reads if name_words(r)} - {
        tuple(tokens(s)) for s in spaces
    }  # "sf" of sf_search_contacts names a system
    read_words -= {f for forms in actions.values() for f in forms}
    systems = {tool: proper_names(text) for tool, text in descriptions if proper_names(text)}
    return Vocabulary(actions, tuple(sorted(w for w in read_words if w)), systems)


def _form(entry: str) -> tuple[str, ...]:
    """A thesaurus entry as tokens, its `*` kept."""
    return tuple(t for part in entry.split() for t in (["*"] if part == "*" else tokens(part)))


def vocabulary(
    writes: Iterable[str], reads: Iterable[str], descriptions: Mapping[str, str] | None = None
) -> Vocabulary:
    """The vocabulary of a suite's tools, from their names and the descriptions of the write
    tools (remembered: every trial of a suite shares it)."""
    chosen = tuple(sorted(writes))
    said = tuple(sorted((descriptions or {}).items()))
    return _vocabulary(chosen, tuple(sorted(reads)), said)


def named_at(reading: Reading, forms: Iterable[tuple[str, ...]]) -> list[int]:
    """Where a message names one of the word sequences, each word by its stem (so that
    "cancellation" names "cancel", and "refunded" "refund")."""
    said = reading.tokens
    return sorted({i for form in forms for i in range(len(said)) if _at(said, i, form)})


GAP = 3
"""The most words a `*` of a thesaurus entry stands for."""


def _at(said: tuple[str, ...], i: int, form: tuple[str, ...]) -> bool:
    if not form:
        return True
    if form[0] == "*":
        return any(_at(said, i + skip, form[1:]) for skip in range(GAP + 1))
    return i < len(said) and _same_word(form[0], said[i]) and _at(said, i + 1, form[1:])


def _same_word(word: str, said: str) -> bool:
    if word == said:
        return True
    if len(word) < 4 or any(c.isdigit() for c in said):
        return False
    stem = word[: max(4, len(word) - 2)]
    return said.startswith(stem) and len(said) - len(stem) <= 6


def actions_named(
    reading: Reading, vocabulary: Vocabulary, asserted: bool = True
) -> dict[str, list[int]]:
    """The write tools whose action a message names, with where; `asserted`: only where no
    negation denies it ("I will not cancel anything" names no cancellation)."""
    reads = named_at(reading, vocabulary.reads)
    out: dict[str, list[int]] = {}
    for tool, forms in vocabulary.actions.items():
        at = [
            p
            for p in named_at(reading, forms)
            if not (asserted and reading.clause_at(p).denies(p)) and not _read_of(reading, p, reads)
        ]
        if at:
            out[tool] = at
    return out


def _read_of(reading: Reading, position: int, reads: list[int]) -> bool:
    """The action word is what a read is about ("check our cancellation policy"): a read's
    verb comes before it in its clause."""
    clause = reading.clause_at(position)
    return any(clause.start <= r < position for r in reads)


def reads_named(reading: Reading, vocabulary: Vocabulary) -> list[int]:
    """Where a message names reading something, where no negation denies it."""
    return [p for p in named_at(reading, vocabulary.reads) if not reading.clause_at(p).denies(p)]
