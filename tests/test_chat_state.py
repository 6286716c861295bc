"""Deleting a chat frees everything it owned: no feature keeps its id.

Every feature keeps its per-chat state in a slot on the chat
(``ChatSession.slot``), so forgetting the chat is the whole clean-up. The
test proves it the way a leak would show: a chat that used every feature's
state (compaction's token base, an "allow always" grant, the read cache,
recalled memories, skill review's count, a pending follow-up suggestion) is
deleted, then every object reachable from the workspace is walked; the
chat's id must be nowhere. A new per-chat table keyed by chat id anywhere
under the workspace fails it.
"""

from __future__ import annotations

import asyncio
import gc
import types
from pathlib import Path
from typing import Any

from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from qwen_lsp.agent.approvals import Approval, PermissionRequest
from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.protocol import SuggestionNotice
from qwen_lsp.sessions.registry import ChatSession
from qwen_lsp.workspace import Listeners, Workspace

SETTINGS = {
    "memory": {"enabled": True, "autoExtract": False, "autoDream": False},
    "followup": {"enabled": True, "speculate": False},
    "skills": {"review": {"enabled": True}},
    "tools": {"approvalMode": "default"},
}


def ignore(_event: TurnEvent) -> None:
    return None


def paths_to(root: object, wanted: str) -> list[str]:
    """Where ``wanted`` (a string equal to it, or a chat with that id) is reachable from ``root``.

    Follows instances, containers, closures and bound methods; not modules,
    classes or a function's globals (those reach the whole program, not what
    the workspace holds).
    """
    seen: set[int] = set()
    found: list[str] = []
    queue: list[tuple[object, str]] = [(root, "workspace")]
    while queue:
        obj, path = queue.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if (isinstance(obj, str) and obj == wanted) or (isinstance(obj, ChatSession) and obj.id == wanted):
            found.append(path)
            continue
        if isinstance(obj, (types.ModuleType, type, str, bytes, int, float)):
            continue
        if isinstance(obj, types.FunctionType):
            children: list[Any] = [c.cell_contents for c in obj.__closure__ or () if _filled(c)]
            children.extend(obj.__defaults__ or ())
        else:
            children = gc.get_referents(obj)
        for child in children:
            queue.append((child, f"{path} > {type(child).__name__}"))
    return found


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


async def test_a_deleted_chat_leaves_no_trace_in_any_feature(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    target = ws / "a.py"
    target.write_text("x = 1\n")

    async def allow_always(_request: PermissionRequest) -> Approval:
        return Approval("allowAlways")

    notices: list[SuggestionNotice] = []
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    workspace = Workspace(ws, counter=TokenCounter(), env=env, client_settings=SETTINGS, listeners=Listeners(suggestion=notices.append), ask=allow_always)
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", {"file_path": str(target)})]),
        Reply(chunks=[], tool_calls=[ToolCallSpec("edit", {"file_path": str(target), "old_string": "x = 1", "new_string": "x = 2"})]),
        Reply(chunks=["Done."]),
        Reply(chunks=['{"suggestion": "run the tests"}']),
    )
    try:
        sid = (await workspace.chat("set x to 2", emit=ignore)).session_id
        for _ in range(500):
            if notices:
                break
            await asyncio.sleep(0.01)
        session = workspace.sessions.get(sid)
        assert session is not None and notices and notices[0].session_id == sid
        used = {slot.name for slot in session.slots}
        assert {"compaction", "approvals", "read_cache", "memory.surfaced", "skill_review.tool_calls"} <= used
        assert target.read_text() == "x = 2\n"
        assert paths_to(workspace, sid)  # guards the walk: an open chat is found

        await workspace.delete_session(sid)
        del session
        notices.clear()  # the test's own record, reachable through the listener it gave
        assert paths_to(workspace, sid) == []
    finally:
        await workspace.drain()
