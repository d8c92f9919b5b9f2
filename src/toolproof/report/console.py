"""The console every command prints through: rich's, with text toolproof did not write made
inert on its way in (see `format.inert`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Span, Text

from toolproof.format import UNSAFE, inert, shown


class InertConsole(Console):
    """A console that prints no control character or bidi override it did not write itself
    (see `format.inert`): a task id, a tool's result, an agent's exception, a run id or a
    path may hold an escape sequence, and a terminal must show it, not obey it. Text is made
    inert where rich takes it in, a string before its markup is read and a `Text` with its
    styles kept, so widths are measured on what is shown; every segment of plain text is
    checked again on its way out. rich's own control segments (the live bar's cursor moves)
    and the styles it renders pass as they are."""

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(inert(text), **options)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        if isinstance(renderable, Text):
            renderable = inert_text(renderable)
        for segment in super().render(renderable, options):
            if segment.control or not UNSAFE.search(segment.text):
                yield segment
            else:
                yield Segment(inert(segment.text), segment.style)


def inert_text(text: Text) -> Text:
    """`text` made inert, its styles kept; the same object when there is nothing to show."""
    runs = list(UNSAFE.finditer(text.plain))
    if not runs:
        return text
    pieces = text.divide(offset for run in runs for offset in run.span())
    made = text.blank_copy()
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            made.append_text(piece)
            continue
        visible = shown(runs[index // 2])
        made.append_text(Text(visible, spans=[Span(0, len(visible), s.style) for s in piece.spans]))
    return made
