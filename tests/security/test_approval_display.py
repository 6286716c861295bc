"""The approval card and the CLI prompt show what will run, not what the model says it is.

Before: the card's title was the model's own ``description`` (``Run: git
status``) while the command was ``git status`` + twelve newlines + ``touch X
# <U+202E>…``; newlines and bidi characters passed through, and in the CLI
prompt ``\\r\\x1b[2K`` redrew the line as ``$ git status`` so ``y`` ran
``touch``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import chat
from qwen_lsp.agent.approvals import PermissionRequest
from qwen_lsp.features.edits.terminal import terminal_asker
from qwen_lsp.text.visible import shown_title, terminal_safe, visible

HIDDEN = "git status" + "\n" * 12 + "touch X # \u202eevil\u200b"
REDRAW = "touch X\r\x1b[2K$ git status"


def test_visible_writes_out_every_hidden_character_and_is_idempotent() -> None:
    assert visible("a\r\x1b[2Kb\tc\u202ed\u200be\ufeff\u2028") == "a\\r\\x1b[2Kb\\tc\\u202ed\\u200be\\ufeff\\u2028"
    assert visible("x\ny") == "x⏎y" and visible("x\ny", keep_newlines=True) == "x\ny"
    assert visible("\x9b31m\x7f") == "\\x9b31m\\x7f"
    for text in (HIDDEN, REDRAW, "plain é 中文 👨‍👩‍👧"):
        assert visible(visible(text)) == visible(text)
    assert visible("plain é 中文") == "plain é 中文"


def test_the_title_is_the_command_flagged_when_multi_line_and_never_silently_cut() -> None:
    title = shown_title("Run: ", HIDDEN)
    assert title.startswith("Run: git status⏎⏎") and "touch X # \\u202eevil\\u200b" in title and title.endswith("[multi-line: 13 lines]")
    long = shown_title("Run: ", "ls " + "a" * 500 + " ; rm -rf x")
    assert len(long) <= 200 and "[+" in long and "characters]" in long
    assert shown_title("Run: ", "git status\n") == "Run: git status⏎"


def test_terminal_output_keeps_text_and_escapes_sequences() -> None:
    osc52 = "\x1b]52;c;ZXZpbA==\x07"
    assert terminal_safe(f"hi {osc52}\nnext\tcol 👨‍👩‍👧 \u202e\r\x9b") == "hi \\u001b]52;c;ZXZpbA==\\u0007\nnext\tcol 👨‍👩‍👧 \\u202e\\r\\u009b"
    assert json.loads(terminal_safe(json.dumps({"k": "a\x7f\x9b\u202e"}, ensure_ascii=False))) == {"k": "a\x7f\x9b\u202e"}


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_the_cli_prompt_cannot_be_redrawn_by_the_command() -> None:
    stdin, stderr = _Tty("y\n"), _Tty()
    request = PermissionRequest("s", "t", "c", "run_shell_command", shown_title("Run: ", REDRAW), command=REDRAW)
    await terminal_asker(stdin, stderr)(request)
    shown = stderr.getvalue()
    assert "\r" not in shown and "\x1b" not in shown
    assert "  $ touch X\\r\\x1b[2K$ git status" in shown
    multi = _Tty()
    await terminal_asker(_Tty("n\n"), multi)(PermissionRequest("s", "t", "c", "run_shell_command", shown_title("Run: ", HIDDEN), command=HIDDEN))
    lines = multi.getvalue().splitlines()
    assert "  $ git status" in lines and "  > touch X # \\u202eevil\\u200b" in lines and any("[multi-line: 13 lines]" in line for line in lines)


async def test_the_card_shows_the_command_not_the_models_description(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    from test_server_edits_e2e import editor  # the fake editor that answers qwen/permission

    ws = tmp_path / "ws"
    ws.mkdir()
    call = ToolCallSpec("run_shell_command", {"command": HIDDEN, "description": "git status"}, id="s1")
    scripted.enqueue(Reply(chunks=[], tool_calls=[call]), Reply(chunks=["ok"]))
    async with editor(home, ws, scripted, shell=True, answers=["deny"]) as lsp:
        await chat(lsp, "status please")
        (card,) = lsp.ed.of("permission")
    assert card["title"].startswith("Run: git status⏎") and "touch X" in card["title"] and "[multi-line: 13 lines]" in card["title"]
    assert "\u202e" not in card["title"] + card["command"] and "\\u202e" in card["command"]
    assert card["command"].split("\n")[-1] == "touch X # \\u202eevil\\u200b"
    assert not (ws / "X").exists()


def test_the_cli_prompt_shows_a_big_change_whole_and_what_always_covers() -> None:
    """An approval never shows less than it approves: the 6,000th line of a write is on the terminal before the question."""
    import asyncio
    import io

    from qwen_lsp.agent.approvals import PermissionRequest
    from qwen_lsp.features.edits.terminal import terminal_asker

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    diff = "--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,6000 @@\n" + "".join(f"+line {i}\n" for i in range(1, 6001))
    out, answer = Tty(), Tty("n\n")
    request = PermissionRequest("s", "t", "c", "write_file", "WriteFile big.txt", path="/ws/big.txt", diff=diff, always_covers="Every write_file of /ws/big.txt in this chat")
    asyncio.run(terminal_asker(answer, out)(request))
    shown = out.getvalue()
    assert "+line 6000" in shown and shown.index("+line 6000") < shown.index("Allow?")
    assert "[a]lways covers: Every write_file of /ws/big.txt in this chat" in shown
