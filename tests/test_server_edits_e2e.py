"""End-to-end: the model edits files through the editor, only with the user's consent.

The real server runs as a subprocess; the pytest-lsp client plays the
editor: it answers ``qwen/permission`` or ``window/showMessageRequest`` as
the user would, and records every ``workspace/applyEdit`` (the server must
never write the workspace itself, so the files on disk stay as they were).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, server_env, session_records, start_client, wait_for

ORIGINAL = "def f():\n    return 1\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "api").mkdir(parents=True)
    (ws / "src" / "api" / "x.py").write_text(ORIGINAL)
    (ws / ".git").mkdir()
    skill = ws / ".qwen" / "skills" / "api-helper"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text('---\nname: api-helper\ndescription: Helps with API handlers\npaths: ["src/api/**"]\n---\nSteps.\n')
    return ws


class Editor:
    """What the fake editor saw and how its user answers."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.refuse: str | None = None
        """When set, ``workspace/applyEdit`` answers ``applied: false`` with this reason."""
        self.log: list[tuple[str, Any]] = []

    def of(self, kind: str) -> list[Any]:
        return [params for k, params in self.log if k == kind]


@asynccontextmanager
async def editor(
    home: Path,
    ws: Path,
    scripted: ScriptedOpenAI,
    *,
    mode: str = "default",
    asks: str | None = "qwen",
    answers: list[Any] | None = None,
    shell: bool | None = None,
) -> AsyncIterator[Any]:
    """A client that can ask via ``qwen/permission`` (asks="qwen"), ``showMessageRequest`` ("show") or not at all (None)."""
    client, rec = await start_client(server_env(home, scripted.base_url))
    ed = Editor(list(answers or []))

    @client.feature("qwen/permission")
    def permission(params: Any) -> dict[str, str]:
        ed.log.append(("permission", as_dict(params)))
        answer = ed.answers.pop(0)
        return answer if isinstance(answer, dict) else {"decision": answer}

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def show(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        ed.log.append(("show", params))
        return types.MessageActionItem(title=ed.answers.pop(0))

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        ed.log.append(("applyEdit", params.edit))
        if ed.refuse is not None:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=ed.refuse)
        return types.ApplyWorkspaceEditResult(applied=True)

    window = types.WindowClientCapabilities(show_message=types.ShowMessageRequestClientCapabilities()) if asks == "show" else None
    caps = types.ClientCapabilities(
        window=window,
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True, resource_operations=[types.ResourceOperationKind.Create]),
        ),
        experimental={"qwen": {"permissionRequests": True}} if asks == "qwen" else None,
    )
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name=ws.name)],
                initialization_options={"tools": {"approvalMode": mode, **({"shell": {"enabled": shell}} if shell is not None else {})}},
            )
        )
        client.rec = rec
        client.ed = ed
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


def edit_call(path: Path, old: str = "return 1", new: str = "return 2", call_id: str = "e1") -> Reply:
    return Reply(chunks=["Editing."], tool_calls=[ToolCallSpec("edit", {"file_path": str(path), "old_string": old, "new_string": new}, id=call_id)])


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def only_text_edit(edit: types.WorkspaceEdit) -> types.TextDocumentEdit:
    assert edit.document_changes is not None and len(edit.document_changes) == 1
    change = edit.document_changes[0]
    assert isinstance(change, types.TextDocumentEdit)
    return change


def tool_results(events: list[Any]) -> list[dict[str, Any]]:
    # without the output the expanded row shows (its text is each tool's own business)
    return [{k: v for k, v in as_dict(e)["tool"].items() if k != "output"} for e in events if as_dict(e)["kind"] == "toolResult"]


async def test_edit_asks_first_and_applies_through_the_editor_only_after_allow(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "api" / "x.py"
    scripted.enqueue(edit_call(target), Reply(chunks=["Done."]))
    async with editor(home, workspace, scripted, answers=["allow"]) as lsp:
        result = as_dict(await chat(lsp, "make f return 2"))
        assert [kind for kind, _ in lsp.ed.log] == ["permission", "applyEdit"]  # asked first, applied after
        asked = lsp.ed.of("permission")[0]
        assert asked["tool"] == "edit" and asked["toolCallId"] == "e1" and asked["sessionId"] == result["sessionId"]
        assert asked["path"] == str(target.resolve())
        assert "-    return 1" in asked["diff"] and "+    return 2" in asked["diff"]
        change = only_text_edit(lsp.ed.of("applyEdit")[0])
        assert change.text_document.version is None  # not open: replaces the file as on disk
        assert [e.new_text for e in change.edits] == ["def f():\n    return 2\n"]
        assert target.read_text() == ORIGINAL  # the server wrote nothing behind the editor's back
        assert tool_results(lsp.rec.chat_events) == [{"id": "e1", "name": "edit", "isError": False, "decision": "allow"}]
        await wait_for(lambda: any("api-helper" in as_dict(c)["activated"] for c in lsp.rec.skills_changed), "skill activation")
    assert "Successfully modified file" in tool_messages(scripted.chat_requests()[-1].body)[0]


async def test_deny_ends_the_turn_leaves_the_file_alone_and_the_next_turn_tells_the_model(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "api" / "x.py"
    scripted.enqueue(edit_call(target), Reply(chunks=["Still here."]))
    async with editor(home, workspace, scripted, asks="show", answers=["Deny"]) as lsp:
        result = as_dict(await chat(lsp, "make f return 2"))
        shown = lsp.ed.of("show")[0]
        assert [a.title for a in shown.actions] == ["Allow", "Allow always", "Deny"]
        # The question says what "Allow always" covers, in the server's words (the same the panel's card shows).
        assert shown.message.endswith("\n“Allow always” covers: Every edit (the edit tool) of src/api/x.py in this chat; other files and other tools still ask"), shown.message
        assert lsp.ed.of("applyEdit") == []
        assert tool_results(lsp.rec.chat_events)[0]["decision"] == "deny"
        sid = result["sessionId"]
        resumed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": sid, "recap": False}))
        assert resumed["sessionId"] == sid
        await chat(lsp, "and now?", sessionId=sid)
    assert target.read_text() == ORIGINAL
    # A plain "Deny" ends the turn, as in Qwen Code 0.24.4: one request for it, the next for "and now?".
    assert len(scripted.chat_requests()) == 2
    # After the resume the denied round is still in the history the model gets.
    again = scripted.chat_requests()[1].body["messages"]
    calls = [c for m in again if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert [c["function"]["name"] for c in calls] == ["edit"]
    assert "User did not allow tool call" in tool_messages(scripted.chat_requests()[1].body)[0]
    records = session_records(home, sid)
    results = [r for r in records if r["type"] == "tool_result"]
    assert len(results) == 1
    assert results[0]["toolCallResult"]["callId"] == "e1"
    assert results[0]["toolCallResult"]["status"] == "cancelled" and results[0]["toolCallResult"]["decision"] == "deny"
    assert results[0]["message"]["parts"][0]["functionResponse"]["response"]["error"].startswith("[Operation Cancelled]")


async def test_a_denial_with_a_reason_passes_the_reason_to_the_model(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "api" / "x.py"
    scripted.enqueue(edit_call(target), Reply(chunks=["OK."]))
    async with editor(home, workspace, scripted, answers=[{"decision": "deny", "reason": "return 3 instead"}]) as lsp:
        await chat(lsp, "make f return 2")
        assert lsp.ed.of("applyEdit") == []
    (message,) = tool_messages(scripted.chat_requests()[-1].body)
    assert message.startswith("[Operation Cancelled] Reason: User did not allow tool call") and message.endswith("The user said: return 3 instead")


async def test_allow_always_lasts_for_the_chat_and_tool(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "api" / "x.py"
    scripted.enqueue(edit_call(target), edit_call(target, "def f", "def g", "e2"), Reply(chunks=["Done."]))
    async with editor(home, workspace, scripted, answers=["allowAlways"]) as lsp:
        await chat(lsp, "two edits")
        assert len(lsp.ed.of("permission")) == 1
        assert len(lsp.ed.of("applyEdit")) == 2
        assert [r["decision"] for r in tool_results(lsp.rec.chat_events)] == ["allowAlways", "allowAlways"]


async def test_auto_edit_applies_without_asking(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "api" / "x.py"
    scripted.enqueue(edit_call(target), Reply(chunks=["Done."]))
    async with editor(home, workspace, scripted, mode="auto-edit") as lsp:
        await chat(lsp, "make f return 2")
        assert [kind for kind, _ in lsp.ed.log] == ["applyEdit"]
        assert tool_results(lsp.rec.chat_events)[0]["decision"] == "auto"


async def test_plan_offers_no_write_tool_and_default_does(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["plan"]))
    async with editor(home, workspace, scripted, mode="plan") as lsp:
        await chat(lsp, "hi")
    scripted.enqueue(Reply(chunks=["default"]))
    async with editor(home, workspace, scripted, mode="default") as lsp:
        await chat(lsp, "hi")
    plan, default = (tool_names(r.body) for r in scripted.chat_requests())
    assert "edit" not in plan and "write_file" not in plan and "read_file" in plan
    assert {"edit", "write_file"} <= set(default)
    assert "run_shell_command" in default and "run_shell_command" in plan  # on by default; in plan its plan-mode policy decides


async def test_shell_when_enabled_asks_with_the_command_then_runs_in_the_workspace(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    command = "pwd && ls src/api && touch made.txt"
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("run_shell_command", {"command": command}, id="r1")]), Reply(chunks=["Done."]))
    async with editor(home, workspace, scripted, mode="auto-edit", shell=True, answers=["allow"]) as lsp:
        await chat(lsp, "look around")
        asked = lsp.ed.of("permission")[0]
        assert asked["tool"] == "run_shell_command" and asked["command"] == command and "diff" not in asked
    assert "run_shell_command" in tool_names(scripted.chat_requests()[0].body)
    (output,) = tool_messages(scripted.chat_requests()[-1].body)
    assert str(workspace.resolve()) in output and "x.py" in output and "Exit Code: 0" in output and (workspace / "made.txt").exists()


async def test_a_client_that_cannot_ask_gets_plan_and_one_warning(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["a"]), Reply(chunks=["b"]))
    async with editor(home, workspace, scripted, asks=None) as lsp:
        await chat(lsp, "hi")
        await chat(lsp, "again")
        warnings = [m for m in lsp.messages if m.type == types.MessageType.Warning and "plan" in m.message]
        assert len(warnings) == 1
    assert all("edit" not in tool_names(r.body) for r in scripted.chat_requests())


async def test_an_open_buffer_with_unsaved_changes_is_what_gets_read_and_edited(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "api" / "x.py"
    unsaved = "def f():\n    return 1\n# typed, not saved\n"
    read = Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", {"file_path": str(target)}, id="r1")])
    scripted.enqueue(read, edit_call(target), Reply(chunks=["Done."]))
    async with editor(home, workspace, scripted, mode="auto-edit") as lsp:
        uri = target.as_uri()
        lsp.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=ORIGINAL)))
        lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=unsaved)],
            )
        )
        await chat(lsp, "make f return 2")
        change = only_text_edit(lsp.ed.of("applyEdit")[0])
        assert change.text_document.uri == uri and change.text_document.version == 2
        assert [e.new_text for e in change.edits] == [unsaved.replace("return 1", "return 2")]
        assert change.edits[0].range.end == types.Position(line=3, character=0)
    assert target.read_text() == ORIGINAL
    # read_file showed the model the buffer too, so what it read is what edit matched against
    assert "# typed, not saved" in tool_messages(scripted.chat_requests()[1].body)[0]


async def test_an_edit_the_editor_does_not_apply_is_an_error_for_the_model(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "api" / "x.py"
    scripted.enqueue(edit_call(target), Reply(chunks=["Hm."]))
    async with editor(home, workspace, scripted, mode="auto-edit") as lsp:
        lsp.ed.refuse = "document version mismatch"
        await chat(lsp, "make f return 2")
        assert len(lsp.ed.of("applyEdit")) == 1
        assert tool_results(lsp.rec.chat_events)[0]["isError"] is True
    (message,) = tool_messages(scripted.chat_requests()[-1].body)
    assert "did not apply" in message and "document version mismatch" in message


async def test_write_file_creates_a_new_file_with_a_create_operation(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    new = workspace / "src" / "api" / "new.py"
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(new), "content": "X = 1\n"}, id="w1")]), Reply(chunks=["Done."]))
    async with editor(home, workspace, scripted, answers=["allow"]) as lsp:
        await chat(lsp, "create it")
        assert lsp.ed.of("permission")[0]["diff"].startswith("--- /dev/null")
        edit = lsp.ed.of("applyEdit")[0]
        create, insert = edit.document_changes
        assert isinstance(create, types.CreateFile) and create.uri == new.as_uri()
        assert isinstance(insert, types.TextDocumentEdit) and insert.edits[0].new_text == "X = 1\n"
    assert not new.exists()


async def test_paths_outside_the_workspace_are_refused_also_through_a_symlink(home: Path, workspace: Path, scripted: ScriptedOpenAI, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "y.py").write_text("return 1\n")
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("edit", {"file_path": str(outside / "y.py"), "old_string": "return 1", "new_string": "x"}, id="o1")]),
        Reply(chunks=[], tool_calls=[ToolCallSpec("edit", {"file_path": str(workspace / "link" / "y.py"), "old_string": "return 1", "new_string": "x"}, id="o2")]),
        Reply(chunks=["Done."]),
    )
    async with editor(home, workspace, scripted, mode="yolo") as lsp:
        await chat(lsp, "edit outside")
        assert lsp.ed.log == []
        assert [r["isError"] for r in tool_results(lsp.rec.chat_events)] == [True, True]
    messages = tool_messages(scripted.chat_requests()[-1].body)
    assert all("outside the workspace" in m for m in messages), messages
    assert (outside / "y.py").read_text() == "return 1\n"


async def test_cancel_withdraws_an_open_permission_request(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "api" / "x.py"
    scripted.enqueue(edit_call(target))
    client, _rec = await start_client(server_env(home, scripted.base_url))
    asked: list[Any] = []
    withdrawn: list[bool] = []

    @client.feature("qwen/permission")
    async def permission(params: Any) -> dict[str, str]:
        asked.append(params)
        try:
            await asyncio.sleep(3600)  # the user has not answered yet
        except asyncio.CancelledError:  # pygls cancels the handler when $/cancelRequest arrives
            withdrawn.append(True)
            raise
        return {"decision": "allow"}

    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(apply_edit=True), experimental={"qwen": {"permissionRequests": True}}),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)],
            )
        )
        task = asyncio.ensure_future(client.protocol.send_request_async("qwen/chat", {"prompt": "edit"}, msg_id=4243))
        await wait_for(lambda: bool(asked), "the permission request")
        client.cancel_request(types.CancelParams(id=4243))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(task, 10)
        await wait_for(lambda: bool(withdrawn), "the permission request to be withdrawn")
    finally:
        await client.shutdown_session()
        await client.stop()
    assert target.read_text() == ORIGINAL


@pytest.mark.parametrize("answer", [{"decision": "Allow"}, {"decision": "allow", "reason": 7}, {"ok": True}, ["allow"]])
async def test_an_answer_that_is_not_a_permission_answer_is_a_denial(home: Path, workspace: Path, scripted: ScriptedOpenAI, answer: Any) -> None:
    """``qwen/permission`` answers are parsed with the protocol's model: anything but ``{decision, reason?}`` allows nothing."""
    target = workspace / "src" / "api" / "x.py"
    scripted.enqueue(edit_call(target), Reply(chunks=["Understood."]))
    async with editor(home, workspace, scripted, answers=[answer]) as lsp:
        await chat(lsp, "make f return 2")
        assert [kind for kind, _ in lsp.ed.log] == ["permission"]
        assert tool_results(lsp.rec.chat_events)[0]["decision"] == "deny"
    assert target.read_text() == ORIGINAL

