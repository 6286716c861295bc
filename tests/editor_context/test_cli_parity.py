"""The editor-context reminder our server sends equals the one Qwen Code 0.24.4 sends for the same editor.

Each case gives an editor state twice: to our server over LSP (``didOpen`` in order, then
``qwen/editorContext``), and to the CLI as its companion's ``ide/contextUpdate`` (files with
increasing timestamps, the focused one last and active, its cursor as the companion reports
it — line 1-based, character 0-based — and its selected text). ``tests/data/editor_context/``
holds the reminder the real ``qwen -p hi --auth-type openai`` (0.24.4) sent, with the
workspace path as ``{ROOT}``; ``test_goldens_match_the_real_cli`` re-captures them with the
CLI the ``qwen_cli`` fixture installs (``tests/support/qwen_cli.py``; under CI a missing CLI
fails), so the goldens cannot drift from it. The CLI glues the reminder to the user's text with a blank line; ours
is a text part of its own right before it (the transcript then never shows it as typed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.qwen_cli import QUIET_CLI_SETTINGS
from support.scripted_openai import ScriptedOpenAI

from lsp_harness import chat, open_doc, running_server

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "editor_context"
COMPANION = Path(__file__).resolve().parents[1] / "support" / "ide_companion.py"
INTRO = "Here is the user's current editor context."


@dataclass
class Case:
    files: dict[str, str]
    """File name → text, opened in this order; the last is focused."""
    cursor: tuple[int, int]
    """0-based (line, character) in the focused file."""
    selection: tuple[tuple[int, int], tuple[int, int]] | None
    selected_text: str | None
    """What the selection covers (the companion sends the text itself)."""


LONG = "y" * 16_500
CASES = {
    "selection": Case(
        {"a.py": "import os\n", "b.py": "def f():\n    x = 1\n    return x\n"},
        cursor=(2, 4),
        selection=((1, 0), (3, 0)),
        selected_text="    x = 1\n    return x\n",
    ),
    "caps": Case(
        {**{f"f{i:02d}.py": f"F = {i}\n" for i in range(12)}, "long.txt": LONG + "\n"},
        cursor=(0, 16_500),
        selection=((0, 0), (0, 16_500)),
        selected_text=LONG,
    ),
    "cursor_only": Case({"x.md": "# title\nbody\n", "y.md": "hello\n"}, cursor=(1, 2), selection=None, selected_text=None),
}


def editor_part(texts: list[str]) -> str:
    found = [t for t in texts if INTRO in t]
    assert len(found) == 1, texts
    part = found[0]
    return part[: part.index("</system-reminder>") + len("</system-reminder>")]


def user_texts(body: dict) -> list[str]:
    content = next(m for m in body["messages"] if m["role"] == "user" and INTRO in json.dumps(m))["content"]
    return [content] if isinstance(content, str) else [p["text"] for p in content]


def golden(name: str, root: Path) -> str:
    return (GOLDEN / f"{name}.txt").read_text(encoding="utf-8").replace("{ROOT}", str(root))


def make_workspace(tmp_path: Path, case: Case) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    for name, text in case.files.items():
        (ws / name).write_text(text)
    return ws.resolve()


@pytest.mark.parametrize("name", sorted(CASES))
async def test_our_reminder_equals_the_clis(name, tmp_path, home, scripted: ScriptedOpenAI):
    case = CASES[name]
    ws = make_workspace(tmp_path, case)
    async with running_server(home, ws, scripted.base_url) as client:
        for file in case.files:
            open_doc(client, ws / file, "plaintext")
        focused = ws / list(case.files)[-1]
        active: dict = {"uri": focused.as_uri(), "cursor": {"line": case.cursor[0], "character": case.cursor[1]}}
        if case.selection is not None:
            (sl, sc), (el, ec) = case.selection
            active["selection"] = {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}
        client.protocol.notify("qwen/editorContext", {"activeFile": active})
        await chat(client, "hi")
    assert editor_part(user_texts(scripted.chat_requests()[-1].body)) == golden(name, ws)


def cli_reminder(qwen: str, case: Case, tmp_path: Path, scripted: ScriptedOpenAI) -> tuple[str, Path]:
    ws = make_workspace(tmp_path, case)
    home = tmp_path / "cli-home"
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps({**QUIET_CLI_SETTINGS, "ide": {"enabled": True}}))
    names = list(case.files)
    open_files = [{"path": str(ws / n), "timestamp": i + 1} for i, n in enumerate(names)]
    last = open_files[-1]
    last.update(isActive=True, cursor={"line": case.cursor[0] + 1, "character": case.cursor[1]})
    if case.selected_text:
        last["selectedText"] = case.selected_text
    context_file = tmp_path / "ide-context.json"
    context_file.write_text(json.dumps({"workspaceState": {"openFiles": open_files, "isTrusted": True}}))
    env = {
        **os.environ,
        "HOME": str(home),
        "OPENAI_BASE_URL": scripted.base_url,
        "OPENAI_API_KEY": "test-key",
        "OPENAI_MODEL": "scripted-model",
        "TERM_PROGRAM": "vscode",
        "QWEN_CODE_IDE_WORKSPACE_PATH": str(ws),
        "QWEN_CODE_IDE_SERVER_STDIO_COMMAND": sys.executable,
        "QWEN_CODE_IDE_SERVER_STDIO_ARGS": json.dumps([str(COMPANION), str(context_file)]),
    }
    done = subprocess.run([qwen, "-p", "hi", "--auth-type", "openai"], cwd=ws, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    first = next(r.body for r in scripted.chat_requests() if INTRO in json.dumps(r.body))
    return editor_part(user_texts(first)), ws


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(CASES))
def test_goldens_match_the_real_cli(name, tmp_path, scripted: ScriptedOpenAI, qwen_cli: str):
    got, ws = cli_reminder(qwen_cli, CASES[name], tmp_path, scripted)
    if os.environ.get("QWEN_LSP_WRITE_GOLDENS"):
        (GOLDEN / f"{name}.txt").write_text(got.replace(str(ws), "{ROOT}"), encoding="utf-8")
    assert got == golden(name, ws)
