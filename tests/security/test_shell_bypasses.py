"""Commands that slipped past the old hand-written read-only check, and their families, run for real.

Each command goes through the main chat's ``run_shell_command`` in
``default`` mode with a person who says no (the real approval policy), then
through the memory fork's shell, where nobody can be asked. If the analyser
took one for read-only it would run: so each test then looks at the scratch
repository — no new file, ``.git/config`` unchanged, the outside canary in no
output — besides checking that the question was asked.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from qwen_lsp.agent.approvals import Approval, ApprovalPolicy, PermissionRequest
from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.agent.tools.run_shell import ShellTool
from qwen_lsp.agent.tools.shell import ReadOnlyShellTool
from qwen_lsp.sessions.registry import ChatSession

CANARY = "outside-canary-7d3e"

COMMENTS = [
    "cat README.md#;touch X", "ls#||touch X", "echo a#&&touch X", "cat cfg.txt#|tee X", "ls -la#;touch X",
    "wc -l README.md#&touch X", "grep x README.md#;touch X", "head -1 cfg.txt#\ntouch X",
]
ABBREVIATED_OPTIONS = [
    "sort -r --outp=.git/config cfg.txt", "sort --outpu .git/config cfg.txt", "sort -o.git/config cfg.txt", "sort -ro .git/config cfg.txt",
    "sort --compress-prog=sh -S 1K data.txt", "sort --compress=sh -S1K data.txt", "sort -rS1K --compress-p=sh data.txt",
    "sort -T . data.txt", "sort --temp=. data.txt", "uniq cfg.txt X", "uniq -c cfg.txt X", "tree -o X", "tree -R -H . -L 1",
    "find . -fprin X", "find . -fprint X", "find . -fls X", "find . -exec touch X ;", "find . -execdir touch X +", "find . -ok touch X ;",
    "git log --outp=X", "git diff --outpu=X", "git show --output=X", "git grep --open=touch canary", "git grep -Otouch canary",
    "git grep --open-files=touch canary", "git -c core.pager=touch log", "git --exec-path=. status", "git -C .. status",
    "rg --pre=sh canary", "rg --pre sh canary", "rg --search-z canary", "rg -z canary", "rg --hostname-bin=touch canary",
    "git branch X", "git branch -D main", "git remote add X .", "git stash", "git checkout -b X", "git commit --allow-empty -m X",
]
READS_OUTSIDE = [
    "sort --files0=list.txt", "sort --files0-f=list.txt", "wc --files0=list.txt", "du --files0-fr=list.txt", "du --files0-from list.txt",
    "grep -r --deref canary docs", "grep -r --dereference-r canary docs", "grep -R canary docs", "grep -rR canary .", "rg -L canary",
    "rg --follow canary", "find -L docs -name secret", "find docs -follow -name secret", "ls -L docs", "ls --deref docs/link",
    "du -L docs", "stat -L docs/link", "cat docs/link", "cat docs/*", "head docs/link", "grep canary docs/link", "cat ../secret",
    "cat < ../secret", "grep -f ../secret cfg.txt", "grep --file=../secret cfg.txt", "rg --ignore-file ../secret x", "cd .. && cat secret",
    "cd docs && cat link", "ls ..", "find .. -name secret", "tree ..", "cat ~/secret", "cat $HOME/secret", "tail -n 1 docs/link",
    "wc -c ../secret", "file ../secret", "sort -R --random-source=../secret cfg.txt", "column ../secret",
]
SHELL_TRICKS = [
    "'touch' X", "t\\ouch X", '"tou"ch X', "cat $(touch X)", 'cat "$(touch X)"', "cat `touch X`", "cat <(touch X)", "ls > X",
    "ls >| X", "ls &> X", "ls 2> X", "ls >> X", "ls >&X", "cat <<EOF > X\nhi\nEOF", "cat <<EOF | sh\ntouch X\nEOF", "X=1 ls",
    "PAGER=touch git log", "ls & touch X", "(touch X)", "{ touch X; }", "eval touch X", "env touch X", "echo X | xargs touch",
    "sudo touch X", "nohup touch X", "timeout 5 touch X", "bash -c 'touch X'", "sh -c 'touch X'", "exec touch X",
    "command touch X", "builtin eval touch X", "f() { touch X; }; f", "ls; touch X", "ls && touch X", "ls || touch X",
    "ls | touch X", "! touch X", "./ls", "/usr/bin/touch X", "l{s,} ; touch X", "ls \\\n; touch X", "cat $'\\x2e'git/config",
]
PROGRAMS_THAT_RUN_PROGRAMS = [
    "awk 'BEGIN{system(\"touch X\")}'", "awk '{print > \"X\"}' cfg.txt", "sed -n '1w X' cfg.txt", "sed 's/x/y/w X' cfg.txt",
    "sed '1e touch X' cfg.txt", "sed -i s/x/y/ cfg.txt", "sed --in-place=.bak s/x/y/ cfg.txt", "less cfg.txt", "more cfg.txt",
    "printf -v X 1", "tail -f cfg.txt", "ps eww", "cd inj && sort *", "cd inj2 && find . *",
]
FAMILIES = COMMENTS + ABBREVIATED_OPTIONS + READS_OUTSIDE + SHELL_TRICKS + PROGRAMS_THAT_RUN_PROGRAMS


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    (tmp_path / "secret").write_text(f"{CANARY}\n")
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "README.md").write_text("readme canary-free\n")
    (ws / "cfg.txt").write_text("b\na\n")
    (ws / "data.txt").write_text("x\ny\n")
    (ws / "list.txt").write_text(f"{tmp_path / 'secret'}\0")
    (ws / "docs" / "link").symlink_to(tmp_path / "secret")
    (ws / "inj").mkdir()
    (ws / "inj" / "-oX").write_text("")  # wildcard injection: `sort *` would read it as `sort -oX …`
    (ws / "inj" / "data").write_text("z\n")
    (ws / "inj2").mkdir()
    (ws / "inj2" / "-delete").write_text("")
    (ws / "inj2" / "keep").write_text("kept\n")
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "add", "-A")
    _git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return ws


def _state(ws: Path) -> dict[str, bytes]:
    """Every file of the repository (``.git`` included) with its bytes, and the files beside it."""
    return {str(p.relative_to(ws.parent)): p.read_bytes() if p.is_file() and not p.is_symlink() else b"" for p in sorted(ws.parent.rglob("*"))}


async def _main_chat(command: str, ws: Path) -> tuple[list[PermissionRequest], str]:
    asked: list[PermissionRequest] = []

    async def person(request: PermissionRequest) -> Approval:
        asked.append(request)
        return Approval("deny", "no")

    session = ChatSession(id="c", recorder=None, context=None)  # type: ignore[arg-type]
    approve = ApprovalPolicy(lambda: "default").for_turn(session, "t", person)
    result = await ShellTool().run({"command": command}, ToolContext(workspace_root=ws, cwd=ws, approve=approve, call_id="x"))
    return asked, result.output


@pytest.mark.parametrize("command", FAMILIES)
async def test_the_main_chat_asks_and_a_no_leaves_everything_as_it_was(command: str, scratch: Path) -> None:
    before = _state(scratch)
    asked, output = await _main_chat(command, scratch)
    assert [a.command for a in asked] == [command], f"ran without a question: {command!r}"
    assert _state(scratch) == before and CANARY not in output


@pytest.mark.parametrize("command", FAMILIES)
async def test_the_memory_forks_shell_refuses_and_nothing_happens(command: str, scratch: Path) -> None:
    before = _state(scratch)
    result = await ReadOnlyShellTool().run({"command": command}, ToolContext(workspace_root=scratch, cwd=scratch))
    assert result.is_error and result.output.startswith("Command refused"), (command, result.output)
    assert _state(scratch) == before and CANARY not in result.output


@pytest.mark.parametrize("command", ["git status", "ls -la", "grep -rn x .", "sort -r cfg.txt", "cat README.md | wc -l", "cd inj && ls", "sed -n 1p cfg.txt"])
async def test_read_only_commands_run_unasked_and_their_output_arrives(command: str, scratch: Path) -> None:
    """The harness can tell a command that ran: these do, with no question, in the same scratch repository."""
    asked, output = await _main_chat(command, scratch)
    assert asked == [] and "Exit Code: 0" in output, output


async def test_a_program_planted_in_the_workspace_never_runs_in_place_of_a_read_only_one(scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with a relative entry (``.`` or an empty one) would find the repository's own ``ls`` first."""
    planted = scratch / "ls"
    planted.write_text("#!/bin/sh\ntouch X\n")
    planted.chmod(0o755)
    for path in (f".{os.pathsep}{os.environ['PATH']}", f"{os.pathsep}{os.environ['PATH']}", f"{scratch}{os.pathsep}{os.environ['PATH']}"):
        monkeypatch.setenv("PATH", path)
        before = _state(scratch)
        asked, _ = await _main_chat("ls", scratch)
        assert len(asked) == 1 and _state(scratch) == before, path


async def test_bash_start_up_hooks_in_the_environment_do_not_reach_the_command(scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = scratch.parent / "hook.sh"
    hook.write_text(f"touch {scratch.parent / 'hooked'}\n")
    monkeypatch.setenv("BASH_ENV", str(hook))
    monkeypatch.setenv("BASH_FUNC_ls%%", f"() {{ touch {scratch.parent / 'func'}; }}")
    asked, output = await _main_chat("ls", scratch)
    assert asked == [] and "Exit Code: 0" in output
    assert not (scratch.parent / "hooked").exists() and not (scratch.parent / "func").exists()
