"""One stored trial in the terminal (`toolproof show RUN --task ID`): what happened, turn by
turn, and why it was graded as it was, so a failure can be read without opening the HTML
report. Messages are shown whole; tool arguments and results as compact JSON, cut at
`RESULT_CHARS` (the whole record is `--json`). What the record holds is made inert as it
goes into rich's `Text` (which would drop BEL and CR unseen): a control character in a
message, a result or a reason is shown as `\\x1b`, never sent to the terminal."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from toolproof.format import inert
from toolproof.transcript import (
    CheckEvent,
    EndEvent,
    MessageEvent,
    ModelCallEvent,
    NoteEvent,
    ToolCallEvent,
)

if TYPE_CHECKING:
    from toolproof.records.trial import TrialResult
    from toolproof.store.queries import PickedTrial

RESULT_CHARS = 400
"""A tool result or argument list longer than this is cut: enough for a record or two."""

OUTCOME_STYLE = {"passed": "green", "failed": "red", "infra_error": "yellow"}


def trial_view(run_id: str, picked: PickedTrial) -> list[RenderableType]:
    """The trial's header, its conversation, what it changed and its verdicts."""
    result = picked.result
    parts: list[RenderableType] = [header(run_id, picked), conversation(result)]
    if result.world_diff:
        parts.append(changes(result))
    parts.append(verdicts(result))
    return parts


def header(run_id: str, picked: PickedTrial) -> RenderableType:
    """Which trial this is, how it ended and what it used; how to see another."""
    r = picked.result
    which = f"trial {r.trial} (of {', '.join(map(str, picked.trials))}"
    which += "; the first that did not pass)" if picked.first_failure else ")"
    title = Text.assemble(
        (inert(r.task_id), "bold"),
        inert(f" · {which} · {r.variant or 'clean'} · {r.model or r.agent} · run {run_id}"),
    )
    outcome = Text.assemble(
        (r.outcome.replace("_", " "), f"bold {OUTCOME_STYLE[r.outcome]}"),
        inert(f": {r.reason}") if r.reason else "",
    )
    tokens = f"{r.usage.input_tokens:,} in / {r.usage.output_tokens:,} out tokens"
    cost = "unpriced" if r.cost_usd is None else f"${r.cost_usd:.4f}"
    ended = inert(f" · ended: {r.ended}") if r.ended else ""
    facts = Text(
        f"{r.duration_s:.2f}s · {plural(r.turns, 'turn')} · {plural(r.tool_calls, 'tool call')}"
        f" · {tokens} · {cost} · seed {r.seed}{ended}",
        style="dim",
    )
    lines: list[RenderableType] = [title, outcome, facts]
    others = [v or "clean" for v in picked.variants if v != r.variant]
    hint = "--trial N for another"
    if others:
        hint += f"; --variant for {', '.join(others)}"
    if len(picked.models) > 1:
        hint += f"; --model for {', '.join(m for m in picked.models if m != r.model)}"
    lines.append(Text(inert(hint), style="dim"))
    return Group(*lines)


def conversation(result: TrialResult) -> Table:
    """Every event in order: messages, model turns, tool calls with what came back."""
    table = Table(title="conversation", title_justify="left", box=None, show_header=False)
    table.add_column("t", justify="right", style="dim", no_wrap=True)
    table.add_column("who", no_wrap=True)
    table.add_column("what", overflow="fold")
    confusing = {n.turn for n in result.transcript.notes("confusing_turn")}
    said = 0
    for event in result.transcript.events:
        t = f"{event.t:.2f}s"
        if isinstance(event, MessageEvent):
            text = Text(inert(event.content.strip()))
            if event.role == "user":
                if said in confusing:
                    text.append("  (meant to confuse)", style="yellow")
                said += 1
                table.add_row(t, Text("user", style="bold cyan"), text)
            else:
                table.add_row(t, Text("agent", style="bold magenta"), text)
        elif isinstance(event, ToolCallEvent):
            who = (
                Text("tool", style="bold")
                if event.by == "agent"
                else Text("user tool", style="bold cyan")
            )
            table.add_row(t, who, tool_call(event))
        elif isinstance(event, ModelCallEvent):
            table.add_row(t, Text("model", style="dim"), model_turn(event))
        elif isinstance(event, CheckEvent):
            mark = ("✓", "green") if event.passed else ("✗", "red")
            line = Text.assemble(mark, inert(f" check {event.name}"))
            if event.message:
                line.append(inert(f": {event.message}"))
            table.add_row(t, Text("check", style="bold"), line)
        elif isinstance(event, EndEvent):
            detail = f": {event.detail}" if event.detail else ""
            table.add_row(
                t, Text("end", style="dim"), Text(inert(event.reason + detail), style="dim")
            )
        elif isinstance(event, NoteEvent) and event.kind != "confusing_turn":
            table.add_row(t, Text("note", style="dim"), Text(inert(note(event)), style="dim"))
    return table


def tool_call(event: ToolCallEvent) -> Text:
    """`name(args)`, what came back (cut), and the injected fault or drift, if any."""
    if event.arguments is None:
        arguments = cut(event.raw_arguments)  # as the agent wrote them: they did not parse
    else:
        arguments = cut(
            ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in event.arguments.items())
        )
    text = Text.assemble((inert(event.name), "bold"), "(", arguments, ")")
    if event.tool is not None:
        text.append(inert(f"  [drifted name of {event.tool}]"), style="dim")
    if event.fault:
        text.append(inert(f"\n⚡ fault injected: {event.fault}"), style="yellow")
    if event.is_error:
        text.append(inert(f"\n✗ {event.error_kind or 'error'}: "), style="red")
        text.append(cut(event.result))
    else:
        text.append("\n→ ", style="green")
        text.append(cut(event.result))
    return text


def model_turn(event: ModelCallEvent) -> Text:
    """A model turn's cost in brief, and what it said alongside its tool calls (a reply
    without calls is the agent's message, shown on its own row)."""
    who = "user simulator " if event.role == "user" else ""
    calls = f", {len(event.tool_calls)} tool call(s)" if event.tool_calls else ""
    text = Text(
        inert(
            f"{who}{event.model}: {event.usage.input_tokens:,} in / {event.usage.output_tokens:,} "
            f"out tokens, {event.latency_s:.2f}s{calls}"
        ),
        style="dim",
    )
    if event.content and event.tool_calls:
        text.append(inert(f"\n{event.content}"), style="dim italic")
    return text


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def note(event: NoteEvent) -> str:
    if event.kind == "persona":
        return f"persona: {event.data.get('name')}"
    return f"stretched to about {event.data.get('target')} user turns"


def cut(value: Any) -> str:
    """A value as compact JSON (text as it is), cut at RESULT_CHARS with how much was left
    out, made inert."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= RESULT_CHARS:
        return inert(text)
    return inert(f"{text[:RESULT_CHARS]}… ({len(text) - RESULT_CHARS:,} more characters in --json)")


def changes(result: TrialResult) -> Table:
    """What the trial changed in its world: path, before, after."""
    table = Table(title="changes to the world", title_justify="left")
    for column in ("path", "before", "after"):
        table.add_column(column, overflow="fold")
    for change in result.world_diff:
        before = "" if change.op == "add" else cut(change.old)
        after = "(removed)" if change.op == "remove" else cut(change.value)
        table.add_row(change.path, before, after)
    return table


def verdicts(result: TrialResult) -> Table:
    """Each grader's verdict with its reason, the judge's criteria, and who is to blame."""
    table = Table(title="verdicts", title_justify="left")
    for column in ("", "grader", "reason"):
        table.add_column(column, overflow="fold")
    for verdict in result.verdicts:
        if not verdict.decided:
            mark = Text("?", style="yellow")
        else:
            mark = Text("✓", style="green") if verdict.passed else Text("✗", style="red")
        table.add_row(mark, verdict.grader, verdict.reason)
    for criterion in result.judge.criteria if result.judge else []:
        mark = Text("✓", style="green") if criterion.passed else Text("✗", style="red")
        table.add_row(mark, f"rubric: {criterion.name}", criterion.explanation)
    if not result.verdicts:
        ended = result.outcome.replace("_", " ")
        table.add_row("", "", f"not graded: the trial ended as {ended} before grading")
    if result.blame is not None:
        blame = result.blame
        table.caption = f"to blame: {blame.party} ({blame.rule}): {blame.reason}"
        table.caption_justify = "left"
    return table
