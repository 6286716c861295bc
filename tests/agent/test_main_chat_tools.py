"""The main chat's shell, read cache and approval policy, run directly (no model, no editor)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from qwen_lsp.agent.approvals import Approval, ApprovalPolicy, PermissionRequest, ToolPermission, offered_mode
from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.agent.tools.read_cache import ReadCache
from qwen_lsp.agent.tools.read_file import ReadFileTool
from qwen_lsp.agent.tools.run_shell import ShellTool
from qwen_lsp.shell.run import OUTPUT_THRESHOLD, TRUNCATED_MARKER
from qwen_lsp.sessions.registry import ChatSession


async def _auto(_call: str, _req: ToolPermission) -> Approval:
    return Approval("auto")


async def _deny(_call: str, _req: ToolPermission) -> Approval:
    return Approval("deny", "not now")


def ctx(root: Path, **kw) -> ToolContext:
    return ToolContext(workspace_root=root, cwd=root, **kw)


async def test_shell_runs_in_the_workspace_and_reports_the_exit_code(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    result = await ShellTool().run({"command": "pwd; exit 3", "directory": "sub"}, ctx(tmp_path, approve=_auto))
    assert result.is_error and str((tmp_path / "sub").resolve()) in result.output and "Exit Code: 3" in result.output


async def test_shell_declined_runs_nothing(tmp_path: Path) -> None:
    result = await ShellTool().run({"command": "touch made"}, ctx(tmp_path, approve=_deny))
    assert result.is_error and "User did not allow" in result.output and result.extra["decision"] == "deny"
    assert result.output.endswith("The user said: not now")
    assert not (tmp_path / "made").exists()


async def test_shell_refuses_a_directory_outside_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    result = await ShellTool().run({"command": "pwd", "directory": "../"}, ctx(ws, approve=_auto))
    assert result.is_error and "inside the workspace" in result.output


async def test_shell_output_is_capped(tmp_path: Path) -> None:
    result = await ShellTool().run({"command": "head -c 200000 /dev/zero | tr '\\\\0' a"}, ctx(tmp_path, approve=_auto))
    assert TRUNCATED_MARKER in result.output and len(result.output) <= OUTPUT_THRESHOLD
    assert result.output.rstrip().endswith("Process Group PGID: " + result.output.rstrip().rsplit(" ", 1)[1])  # the tail is kept


async def test_shell_timeout_stops_the_command(tmp_path: Path) -> None:
    result = await ShellTool(timeout=0.5).run({"command": "sleep 30"}, ctx(tmp_path, approve=_auto))
    assert result.is_error and "timed out" in result.output


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


async def test_cancel_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    task = asyncio.ensure_future(ShellTool().run({"command": f"sleep 300 & echo $! > {pid_file}; wait"}, ctx(tmp_path, approve=_auto)))
    for _ in range(500):  # a hang detector, not a timing assertion
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    pid = int(pid_file.read_text())
    assert _alive(pid)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    for _ in range(500):
        if not _alive(pid):
            break
        await asyncio.sleep(0.02)
    assert not _alive(pid)


async def test_read_cache_serves_an_unchanged_reread_and_forgets_on_eviction_and_change(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("one\ntwo\n")
    cache: ReadCache[ToolResult] = ReadCache()
    c = ctx(tmp_path, read_cache=cache)
    tool = ReadFileTool()
    first = await tool.run({"file_path": str(f)}, c)
    assert first.output == "one\ntwo"
    assert await tool.run({"file_path": str(f)}, c) is first  # served from the cache: the very same answer
    other_range = await tool.run({"file_path": str(f), "offset": 1}, c)
    assert other_range is not first and other_range.output.endswith("two")
    cache.evict(frozenset({str(f)}))
    fresh = await tool.run({"file_path": str(f)}, c)
    assert fresh is not first and fresh.output == first.output
    f.write_text("one\ntwo\nthree\n")
    os.utime(f, ns=(1, 1))
    assert "three" in (await tool.run({"file_path": str(f)}, c)).output  # changed on disk: read again
    cache.evict(None)
    assert len(cache) == 0


async def test_approval_policy_modes_and_allow_always() -> None:
    mode = ["default"]
    policy = ApprovalPolicy(lambda: mode[0])  # type: ignore[arg-type, return-value]
    asked: list[PermissionRequest] = []
    answers = [Approval("allowAlways"), Approval("deny", "too risky")]

    async def ask(req: PermissionRequest) -> Approval:
        asked.append(req)
        return answers.pop(0)

    edit = ToolPermission(tool="edit", title="Edit a")
    shell = ToolPermission(tool="run_shell_command", title="Run ls", command="ls")

    chats = {name: ChatSession(id=name, recorder=None, context=None) for name in ("s1", "s2")}  # type: ignore[arg-type]

    async def decide(session: str, call: str, asker, request: ToolPermission) -> str:
        return (await policy.decide(chats[session], "t", call, asker, request)).decision

    assert await decide("s1", "c1", ask, edit) == "allowAlways"
    assert await decide("s1", "c2", ask, edit) == "allowAlways"  # remembered: not asked again
    denied = await policy.decide(chats["s1"], "t", "c3", ask, shell)  # per tool
    assert denied.decision == "deny" and denied.refusal().endswith("The user said: too risky")
    assert [r.tool_call_id for r in asked] == ["c1", "c3"]
    assert await decide("s2", "c4", None, edit) == "deny"  # another chat; nobody to ask
    mode[0] = "auto-edit"
    assert await decide("s2", "c5", None, edit) == "auto"
    assert await decide("s2", "c6", None, shell) == "deny"
    mode[0] = "yolo"
    assert await decide("s2", "c7", None, shell) == "auto"
    assert offered_mode("default", can_ask=False) == "plan" and offered_mode("auto-edit", can_ask=False) == "auto-edit"


async def test_a_background_command_reports_its_pid_and_file_reads_unasked_and_stops_with_the_chat(tmp_path: Path) -> None:
    from qwen_lsp.shell.run import BackgroundJobs

    jobs = BackgroundJobs(tmp_path / "jobs")
    asked: list[ToolPermission] = []

    async def approve(_call: str, request: ToolPermission) -> Approval:
        if request.read_only:
            return Approval("auto")
        asked.append(request)
        return Approval("allow")

    ws = tmp_path / "ws"
    ws.mkdir()
    tool = ShellTool(jobs=lambda chat: jobs)
    started = await tool.run({"command": "echo started; sleep 300", "is_background": True}, ctx(ws, approve=approve, chat_id="c1"))
    assert not started.is_error and started.output.startswith("Background shell started.")
    pid = int(started.output.split("pid: ", 1)[1].split("\n", 1)[0])
    output = Path(started.output.split("output file: ", 1)[1].split("\n", 1)[0])
    assert output.parent == jobs.directory and _alive(pid) and len(asked) == 1
    for _ in range(500):  # a hang detector, not a timing assertion
        if output.read_text():
            break
        await asyncio.sleep(0.02)
    peek = await tool.run({"command": f"tail -n 5 {output}"}, ctx(ws, approve=approve, chat_id="c1"))
    assert "Output: started" in peek.output and len(asked) == 1  # its own output file reads without a question
    await jobs.stop_all()
    for _ in range(500):
        if not _alive(pid):
            break
        await asyncio.sleep(0.02)
    assert not _alive(pid)
