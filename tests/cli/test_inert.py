"""Text that toolproof did not write reaches the terminal inert: an escape sequence in a tool's
result, an agent's exception, a run id, a task id or a path is shown (`\\x1b[2J`), never
obeyed (the screen cleared, the clipboard written, the window retitled, a link hidden). The
check is one mechanism, `format.inert`, applied by every console the command line prints
through, so live lines, tables, `show` and error lines are covered alike."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.table import Table
from rich.text import Text
from stored import MINI, invoke

from toolproof.cli import _run
from toolproof.cli.commands import app
from toolproof.format import inert
from toolproof.records.trial import TrialResult
from toolproof.report.console import InertConsole, inert_text
from toolproof.report.terminal import RunProgress
from toolproof.transcript import Transcript

CLIPBOARD = "\x1b]52;c;aGk=\x07"  # OSC 52: sets the clipboard to "hi"
CLEAR = "\x1b[2J"  # CSI 2J: clears the screen
TITLE = "\x1b]0;pwned\x07"  # OSC 0: the window title
LINK = "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"  # OSC 8: a hidden link
C1 = "\x9b31m"  # CSI in its one-character C1 form
BIDI = "\u202egnp.exe"  # right-to-left override: shows as "exe.png"
EVIL = CLIPBOARD + CLEAR + TITLE + LINK + C1 + BIDI
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def assert_inert(text: str) -> None:
    """Nothing in `text` that a terminal would obey, and the escapes there to be seen."""
    for raw in RAW:
        assert raw not in text, repr(text)
    assert "\\x1b" in text, text


# ---------------------------------------------------------------- inert itself


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (CLIPBOARD, "\\x1b]52;c;aGk=\\x07"),
        (CLEAR, "\\x1b[2J"),
        (TITLE, "\\x1b]0;pwned\\x07"),
        (LINK, "\\x1b]8;;http://evil.example\\x1b\\click\\x1b]8;;\\x1b\\"),
        (C1, "\\x9b31m"),
        (BIDI, "\\u202egnp.exe"),
        ("a\u2066b\u2069c\u202ad", "a\\u2066b\\u2069c\\u202ad"),
        ("back\rspace\b del\x7f nul\x00", "back\\x0dspace\\x08 del\\x7f nul\\x00"),
    ],
)
def test_inert_shows_what_a_terminal_would_obey(raw: str, shown: str) -> None:
    assert inert(raw) == shown
    assert inert(inert(raw)) == inert(raw)


@pytest.mark.parametrize(
    "plain", ["order A has shipped", "Zoë 東京 Ωμέγα مرحبا", "a\\x1b is text already", ""]
)
def test_plain_text_and_letters_of_any_script_pass_unchanged(plain: str) -> None:
    assert inert(plain) == plain


def test_newline_and_tab_are_kept_for_layout_unless_one_line_is_asked_for() -> None:
    assert inert("one\n\ttwo") == "one\n\ttwo"
    assert inert("one\n\ttwo", layout=False) == "one\\x0a\\x09two"


def test_a_styled_text_is_made_inert_with_its_styles_kept() -> None:
    text = Text.assemble(("task ", "bold"), (f"x{CLEAR}y", "red"), " end")
    made = inert_text(text)
    assert made.plain == "task x\\x1b[2Jy end"
    assert [(s.start, s.end, s.style) for s in made.spans] == [
        (0, 5, "bold"),
        (5, 6, "red"),
        (6, 10, "red"),
        (10, 14, "red"),
    ]
    plain = Text("plain", style="bold")
    assert inert_text(plain) is plain


# ---------------------------------------------------------------- the console


def printed(*renderables: object, terminal: bool = True) -> str:
    out = io.StringIO()
    if terminal:
        console = InertConsole(file=out, force_terminal=True, color_system="standard", width=120)
    else:
        console = InertConsole(file=out, width=120)
    for renderable in renderables:
        console.print(renderable, highlight=False)
    return out.getvalue()


def test_the_console_keeps_its_own_styles_and_shows_every_foreign_escape() -> None:
    table = Table("task", "reason")
    table.add_row(f"t{CLEAR}", Text(f"why {TITLE}", style="red"))
    shown = printed(f"[red]error:[/] no run 'x{CLEAR}'", Text(EVIL), table, f"[bold]{BIDI}")
    assert "\x1b[31m" in shown and "\x1b[1m" in shown  # toolproof's red and bold
    for raw in (CLIPBOARD, CLEAR, TITLE, "\x1b]8;;http", C1, "\u202e", "\x07"):
        assert raw not in shown
    assert "no run 'x\\x1b[2J'" in shown
    assert "\\x1b]0;pwned" in shown and "\\u202egnp.exe" in shown  # rich drops BEL from a Text


def test_a_console_not_on_a_terminal_writes_no_escape_at_all() -> None:
    shown = printed(f"[red]error:[/] {EVIL}", Text(EVIL, style="bold"), terminal=False)
    assert_inert(shown)


def test_the_line_per_trial_shows_a_failure_reason_with_escapes_on_one_line() -> None:
    out = io.StringIO()
    progress = RunProgress(InertConsole(file=out, width=300), every=0)
    progress.start(total=1, done=0)
    progress.advance(
        TrialResult(
            task_id=f"task{CLEAR}",
            trial=0,
            seed=0,
            outcome="failed",
            reason=f"agent_error: RuntimeError: {EVIL}",
            transcript=Transcript(),
        )
    )
    [line] = out.getvalue().splitlines()
    assert_inert(line)
    assert "last: task\\x1b[2J #0 failed: agent_error: RuntimeError: \\x1b]52;c;aGk=" in line


# ---------------------------------------------------------------- through the command line

AGENT = f"""
EVIL = {EVIL!r}


async def agent(conversation, tools):
    await tools.call("get_order", {{"order_id": "Z" + EVIL}})
    raise RuntimeError("boom " + EVIL)
"""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run of the mini suite by an agent that asks for an order whose id is an escape
    sequence (the tool's error result repeats it), then raises an exception that holds one:
    its store, and what the run printed."""
    root = tmp_path_factory.mktemp("inert")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    store = root / "runs.db"
    done = invoke(
        "run", MINI, "--agent", f"python:{root / 'agent.py'}:agent", "--trials", "1",
        "--k", "1", "--store", store,
    )  # fmt: skip
    assert done.code == 0, done.stdout
    return store, done.stdout


def test_run_prints_an_agents_exception_inert_in_its_line_per_trial(
    hostile: tuple[Path, str],
) -> None:
    _, stdout = hostile
    assert_inert(stdout)
    assert "failed: agent_error: RuntimeError: boom \\x1b]52;c;aGk=\\x07\\x1b[2J" in stdout


def test_show_prints_a_tool_result_and_an_exception_inert(hostile: tuple[Path, str]) -> None:
    store, _ = hostile
    done = invoke("show", "latest", "--store", store, "--task", "cancel")
    assert done.code == 0, done.stdout
    assert_inert(done.stdout)
    assert "✗ not_found:" in done.stdout
    assert "boom \\x1b]52;c;aGk=\\x07\\x1b[2J\\x1b]0;pwned\\x07" in done.stdout


def errors_of(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    """What a command that fails prints, as `main` prints it (exit 2)."""
    with pytest.raises(SystemExit) as ended:
        _run(lambda: app([str(a) for a in args], prog_name="toolproof"))
    assert ended.value.code == 2
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_an_error_naming_a_run_id_with_escapes_shows_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = tmp_path / "runs.db"
    assert invoke("run", MINI, "--agent", "oracle", "--trials", "1", "--store", store).code == 0
    shown = errors_of(capsys, "show", f"{CLEAR}{TITLE}", "--store", store)
    assert_inert(shown)
    assert "no run '\\x1b[2J\\x1b]0;pwned\\x07'" in shown
    shown = errors_of(capsys, "show", "latest", "--store", store, "--task", f"x{CLIPBOARD}")
    assert_inert(shown)
    assert "x\\x1b]52;c;aGk=\\x07" in shown


def test_an_error_naming_tasks_with_escapes_shows_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shown = errors_of(capsys, "run", MINI, "--agent", "oracle", "--tasks", f"x{LINK}{BIDI}")
    assert_inert(shown)
    assert "x\\x1b]8;;http://evil.example" in shown
    pytest.importorskip("tau2")
    shown = errors_of(
        capsys, "import", "tau2", "airline", "--out", tmp_path / "s", "--tasks", f"1,{CLEAR}"
    )
    assert_inert(shown)


def test_init_names_a_path_with_escapes_inert(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    shown = errors_of(capsys, "init", blocker / f"suite{CLEAR}")
    assert_inert(shown)
    assert "suite\\x1b[2J" in shown
    done = invoke("init", tmp_path / f"made{TITLE}")
    assert done.code == 0, done.stdout
    assert_inert(done.stdout)
    assert "made\\x1b]0;pwned\\x07" in done.stdout
