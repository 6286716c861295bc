"""Follow-up suggestions and speculation over LSP, against the real server and a scripted model.

The fake editor records ``qwen/suggestion``, ``qwen/permission`` and every
``workspace/applyEdit``; nothing here reaches into the server: what the
workspace, the overlay directory and the session file hold is read from
disk, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from support.scripted_openai import Reply, ScriptedOpenAI, Stall, ToolCallSpec

from lsp_harness import as_dict, chat, server_env, start_client, wait_for

ORIGINAL = "def f():\n    return 1\n"
SUGGESTION = "make f return 2"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "x.py").write_text(ORIGINAL)
    (ws / "README.md").write_text("# demo\n")
    (ws / ".git").mkdir()
    return ws


@asynccontextmanager
async def editor(
    home: Path, ws: Path, scripted: ScriptedOpenAI, *, mode: str = "auto-edit", shell: bool = False, speculate: bool | None = True
) -> AsyncIterator[Any]:
    client, rec = await start_client(server_env(home, scripted.base_url))
    client.suggestions = []
    client.permissions = []
    client.edits = []

    @client.feature("qwen/suggestion")
    def suggestion(params: Any) -> None:
        client.suggestions.append(as_dict(params))

    @client.feature("qwen/permission")
    def permission(params: Any) -> dict[str, str]:
        client.permissions.append(as_dict(params))
        # With a reason, so the turn goes on to its answer (a plain "deny" ends it, as in Qwen Code 0.24.4).
        return {"decision": "deny", "reason": "not now"}

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        client.edits.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    caps = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True, resource_operations=[types.ResourceOperationKind.Create]),
        ),
        experimental={"qwen": {"permissionRequests": True}},
    )
    followup: dict[str, Any] = {"enabled": True} if speculate is None else {"enabled": True, "speculate": speculate}
    options = {"followup": followup, "tools": {"approvalMode": mode, "shell": {"enabled": shell}}}
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name=ws.name)], initialization_options=options
            )
        )
        client.rec = rec
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


def suggestion_reply(text: str = SUGGESTION) -> Reply:
    return Reply(chunks=[json.dumps({"suggestion": text})])


def edit_reply(path: Path) -> Reply:
    return Reply(chunks=["Editing."], tool_calls=[ToolCallSpec("edit", {"file_path": str(path), "old_string": "return 1", "new_string": "return 2"}, id="s1")])


def workspace_bytes(ws: Path) -> dict[str, bytes]:
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in sorted(ws.rglob("*")) if p.is_file()}


def session_file(home: Path, session_id: str) -> Path:
    files = list((home / ".qwen" / "projects").glob(f"*/chats/{session_id}.jsonl"))
    assert len(files) == 1, files
    return files[0]


def overlay_root(home: Path) -> Path:
    roots = list((home / ".qwen" / "projects").glob("*/tmp/speculation"))
    assert len(roots) == 1, roots
    return roots[0]


def ready(client: Any) -> list[dict[str, Any]]:
    return [s for s in client.suggestions if "ready" in s]


async def speculated(client: Any, scripted: ScriptedOpenAI, target: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """One chat turn, its suggestion, and a speculation that edits ``target``; returns (chat result, ready notice)."""
    scripted.enqueue(Reply(chunks=["f returns 1 today."]), suggestion_reply(), edit_reply(target), Reply(chunks=["f now returns 2."]))
    result = as_dict(await chat(client, "what does f return?"))
    await wait_for(lambda: ready(client), "the speculation to finish")
    notice = ready(client)[0]
    assert notice["ready"] is True, notice
    return result, notice


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return as_dict(await client.protocol.send_request_async(method, params))


async def test_a_suggestion_is_speculated_and_accepting_applies_it_through_the_editor(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "x.py"
    async with editor(home, workspace, scripted) as lsp:
        result, notice = await speculated(lsp, scripted, target)
        first = lsp.suggestions[0]
        assert first == {"sessionId": result["sessionId"], "suggestionId": notice["suggestionId"], "text": SUGGESTION}
        assert notice["cost"]["requests"] == 2 and notice["cost"]["promptTokens"] > 0

        # Before accept: the workspace is untouched, the shadow holds the change, the editor got nothing.
        assert target.read_text() == ORIGINAL and lsp.edits == [] and lsp.permissions == []
        shadow = overlay_root(home) / notice["suggestionId"] / "src" / "x.py"
        assert shadow.read_text() == "def f():\n    return 2\n"

        # The fork re-sent the parent's exact prefix (cache-safe): same tools, same messages, then the suggestion.
        requests = scripted.chat_requests()
        parent, side, fork = requests[0].body, requests[1].body, requests[2].body
        assert fork["tools"] == parent["tools"] and "tools" not in side
        assert fork["messages"][: len(parent["messages"])] == parent["messages"]
        assert fork["messages"][len(parent["messages"])]["content"] == "f returns 1 today."
        assert fork["messages"][-1] == {"role": "user", "content": SUGGESTION}

        accepted = await request(lsp, "qwen/suggestion/accept", {"suggestionId": notice["suggestionId"]})
        assert accepted["applied"] is True and accepted["turnId"]
        assert accepted["cost"] == notice["cost"]
        assert len(lsp.edits) == 1
        change = lsp.edits[0].document_changes[0]
        assert change.text_document.uri == target.as_uri() and change.edits[0].new_text == "def f():\n    return 2\n"
        assert not (overlay_root(home) / notice["suggestionId"]).exists()
        assert len(scripted.chat_requests()) == 4  # applying cost no model request
        # The panel saw the speculative turn as chat events of the accept's turn.
        texts = [as_dict(e)["text"] for e in lsp.rec.chat_events if as_dict(e)["turnId"] == accepted["turnId"] and as_dict(e)["kind"] == "text"]
        assert "".join(texts) == "Editing.f now returns 2."

        # The session shows the turn: on disk, and in the chat's next request.
        records = [json.loads(line) for line in session_file(home, result["sessionId"]).read_text().splitlines()]
        users = [r["message"]["parts"][-1].get("text") for r in records if r["type"] == "user"]
        assert users[-1] == SUGGESTION
        assert [r["type"] for r in records[-4:]] == ["user", "assistant", "tool_result", "assistant"]
        resumed = await request(lsp, "qwen/sessions/resume", {"sessionId": result["sessionId"]})
        assert [m["text"] for m in resumed["messages"]][-2:] == [SUGGESTION, "Editing.f now returns 2."]  # a turn's rounds are one answer
        scripted.enqueue(Reply(chunks=["ok"]), Reply(chunks=["{}"]))
        await chat(lsp, "thanks", sessionId=result["sessionId"])
        sent = [m for m in scripted.chat_requests()[4].body["messages"] if m["role"] in ("user", "assistant", "tool")]
        assert {"role": "user", "content": SUGGESTION} in sent and any(m.get("content") == "f now returns 2." for m in sent)

        with pytest.raises(JsonRpcInvalidParams, match="suggestionId"):
            await request(lsp, "qwen/suggestion/accept", {"suggestionId": notice["suggestionId"]})  # accepted once


async def assert_voided_without_trace(home: Path, workspace: Path, lsp: Any, result: dict[str, Any], notice: dict[str, Any], before: tuple[dict[str, bytes], bytes]) -> None:
    directory = overlay_root(home) / notice["suggestionId"]
    await wait_for(lambda: not directory.exists(), "the overlay to be deleted")
    assert workspace_bytes(workspace) == before[0]
    assert lsp.edits == [] and lsp.permissions == []
    with pytest.raises(JsonRpcInvalidParams, match="suggestionId"):
        await request(lsp, "qwen/suggestion/accept", {"suggestionId": notice["suggestionId"]})


async def test_dismissing_leaves_workspace_overlay_and_session_as_before(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    async with editor(home, workspace, scripted) as lsp:
        result, notice = await speculated(lsp, scripted, workspace / "src" / "x.py")
        session = session_file(home, result["sessionId"])
        before = (workspace_bytes(workspace), session.read_bytes())
        assert (overlay_root(home) / notice["suggestionId"]).is_dir()
        assert await request(lsp, "qwen/suggestion/dismiss", {"suggestionId": notice["suggestionId"]}) == {}
        await assert_voided_without_trace(home, workspace, lsp, result, notice, before)
        assert session.read_bytes() == before[1]
        assert list(overlay_root(home).iterdir()) == []


async def test_a_new_prompt_throws_the_speculation_away(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    async with editor(home, workspace, scripted) as lsp:
        result, notice = await speculated(lsp, scripted, workspace / "src" / "x.py")
        session = session_file(home, result["sessionId"])
        before = (workspace_bytes(workspace), session.read_bytes())
        scripted.enqueue(Reply(chunks=["Something else."]), Reply(chunks=['{"suggestion": ""}']))
        await chat(lsp, "do something else", sessionId=result["sessionId"])
        await assert_voided_without_trace(home, workspace, lsp, result, notice, before)
        after = session.read_bytes()
        assert after.startswith(before[1])  # the new turn was appended; nothing of the speculation
        assert SUGGESTION.encode() not in after and b"f now returns 2" not in after


async def test_editing_a_file_the_overlay_touched_aborts_it(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "x.py"
    async with editor(home, workspace, scripted) as lsp:
        result, notice = await speculated(lsp, scripted, target)
        session = session_file(home, result["sessionId"])
        before = (workspace_bytes(workspace), session.read_bytes())
        uri = target.as_uri()
        lsp.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=ORIGINAL)))
        lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="def f():\n    return 3\n")],
            )
        )
        await assert_voided_without_trace(home, workspace, lsp, result, notice, before)
        assert session.read_bytes() == before[1]


async def test_editing_an_untouched_file_keeps_the_speculation(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    async with editor(home, workspace, scripted) as lsp:
        _result, notice = await speculated(lsp, scripted, workspace / "src" / "x.py")
        readme = workspace / "README.md"
        lsp.text_document_did_open(
            types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=readme.as_uri(), language_id="markdown", version=1, text="# demo\n"))
        )
        lsp.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=readme.as_uri())))
        accepted = await request(lsp, "qwen/suggestion/accept", {"suggestionId": notice["suggestionId"]})
        assert accepted["applied"] is True and len(lsp.edits) == 1


async def test_a_write_to_a_real_path_lands_in_the_overlay_and_outside_the_workspace_stops(home: Path, workspace: Path, scripted: ScriptedOpenAI, tmp_path: Path) -> None:
    target = workspace / "src" / "x.py"
    outside = tmp_path / "outside.txt"
    scripted.enqueue(
        Reply(chunks=["Looked."]),
        suggestion_reply("rewrite x.py"),
        Reply(tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": "hacked = True\n"}, id="w1")]),
        Reply(tool_calls=[ToolCallSpec("write_file", {"file_path": str(outside), "content": "escaped\n"}, id="w2")]),
    )
    async with editor(home, workspace, scripted, mode="yolo") as lsp:
        before = workspace_bytes(workspace)
        await chat(lsp, "look at x.py")
        await wait_for(lambda: ready(lsp), "the speculation to end")
        notice = ready(lsp)[0]
        assert notice["ready"] is False and "outside the workspace" in notice["stoppedAt"]
        assert workspace_bytes(workspace) == before and not outside.exists()
        assert lsp.edits == [] and lsp.permissions == []
        # Round 1 completed (its write is in the overlay, kept for accept to continue from); round 2 stopped.
        directory = overlay_root(home) / notice["suggestionId"]
        assert sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()) == ["src/x.py"]
        fork_last = scripted.chat_requests()[-1].body["messages"]
        assert fork_last[-1]["role"] == "tool" and "hacked" not in target.read_text()
        assert await request(lsp, "qwen/suggestion/dismiss", {"suggestionId": notice["suggestionId"]}) == {}
        assert not directory.exists() and workspace_bytes(workspace) == before


async def test_a_speculation_stops_at_a_shell_command_without_asking_and_accept_runs_a_normal_turn(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    marker = workspace / "ran.txt"
    scripted.enqueue(
        Reply(chunks=["Tests exist."]),
        suggestion_reply("run the tests"),
        Reply(tool_calls=[ToolCallSpec("run_shell_command", {"command": f"touch {marker}"}, id="sh1")]),
    )
    async with editor(home, workspace, scripted, shell=True) as lsp:
        result = as_dict(await chat(lsp, "are there tests?"))
        await wait_for(lambda: ready(lsp), "the speculation to stop")
        notice = ready(lsp)[0]
        assert notice["ready"] is False and notice["stoppedAt"].startswith("run_shell_command")
        assert lsp.permissions == [] and not marker.exists()
        assert len(scripted.chat_requests()) == 3  # it stopped: no further model turn

        scripted.enqueue(Reply(chunks=["Running them."], tool_calls=[ToolCallSpec("run_shell_command", {"command": f"touch {marker}"}, id="sh2")]), Reply(chunks=["Denied."]))
        accepted = await request(lsp, "qwen/suggestion/accept", {"suggestionId": notice["suggestionId"]})
        assert accepted["applied"] is False and accepted["turnId"]
        assert [p["tool"] for p in lsp.permissions] == ["run_shell_command"]  # the normal turn asks as usual
        assert not marker.exists()
        normal = scripted.chat_requests()[3].body
        assert "response_format" not in normal and SUGGESTION not in json.dumps(normal)
        assert "run the tests" in json.dumps(normal["messages"][-1])  # the suggestion, sent as the user's prompt
        events = [as_dict(e) for e in lsp.rec.chat_events if as_dict(e)["turnId"] == accepted["turnId"]]
        assert events and events[0]["sessionId"] == result["sessionId"]


async def test_followups_off_and_default_speculation_follow_settings(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    """Speculation is off unless set (Qwen Code 0.24.4's ui.enableSpeculation), even in yolo."""
    async with editor(home, workspace, scripted, mode="yolo", speculate=None) as lsp:
        scripted.enqueue(Reply(chunks=["Hi."]), suggestion_reply("say more"))
        await chat(lsp, "hello")
        await wait_for(lambda: lsp.suggestions, "the suggestion")
        lsp.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"qwen": {"followup": {"enabled": False}}}))
        scripted.enqueue(Reply(chunks=["Bye."]))
        await chat(lsp, "bye")
        await chat(lsp, "again")  # a later request proves the earlier turn's background work had its chance
        assert len(lsp.suggestions) == 1
        assert all("response_format" not in r.body for r in scripted.chat_requests()[2:])
        assert all("say more" not in json.dumps(r.body["messages"][-1]) for r in scripted.chat_requests())  # not set: never speculated


async def test_unknown_suggestion_ids_are_invalid_params(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    async with editor(home, workspace, scripted) as lsp:
        for method in ("qwen/suggestion/accept", "qwen/suggestion/dismiss"):
            with pytest.raises(JsonRpcInvalidParams, match="suggestionId"):
                await request(lsp, method, {"suggestionId": "nope"})
            with pytest.raises(JsonRpcInvalidParams):
                await request(lsp, method, {})


CONTINUED = "make f return 2 and run the tests"


def session_records(home: Path, session_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session_file(home, session_id).read_text().splitlines()]


def call_ids(records: list[dict[str, Any]]) -> list[str]:
    return [p["functionCall"]["id"] for r in records if r["type"] == "assistant" for p in r["message"]["parts"] if "functionCall" in p]


def turn_events(lsp: Any, turn_id: str) -> list[dict[str, Any]]:
    return [as_dict(e) for e in lsp.rec.chat_events if as_dict(e)["turnId"] == turn_id]


async def test_accepting_a_stopped_speculation_continues_from_its_last_complete_round(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target, readme, marker = workspace / "src" / "x.py", workspace / "README.md", workspace / "ran.txt"
    scripted.enqueue(
        Reply(chunks=["f returns 1 today."]),
        suggestion_reply(CONTINUED),
        edit_reply(target),  # round 1: completes (the edit lands in the overlay)
        Reply(  # round 2: a write the overlay takes, then a shell command: stopped, the whole round is dropped
            chunks=["Now the tests."],
            tool_calls=[
                ToolCallSpec("write_file", {"file_path": str(readme), "content": "# changed\n"}, id="w2"),
                ToolCallSpec("run_shell_command", {"command": f"touch {marker}"}, id="sh1"),
            ],
        ),
    )
    async with editor(home, workspace, scripted, shell=True) as lsp:
        result = as_dict(await chat(lsp, "what does f return?"))
        await wait_for(lambda: ready(lsp), "the speculation to stop")
        notice = ready(lsp)[0]
        assert notice["ready"] is False and notice["stoppedAt"].startswith("run_shell_command")
        assert lsp.permissions == [] and lsp.edits == [] and not marker.exists()
        directory = overlay_root(home) / notice["suggestionId"]
        assert sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()) == ["src/x.py"]  # README's write undone
        fork_round2 = scripted.chat_requests()[3].body
        before = session_file(home, result["sessionId"]).read_bytes()

        scripted.enqueue(
            Reply(chunks=["Running them."], tool_calls=[ToolCallSpec("run_shell_command", {"command": f"touch {marker}"}, id="sh2")]),
            Reply(chunks=["The shell was denied; f returns 2."]),
            Reply(chunks=['{"suggestion": ""}']),  # the continued turn's own follow-up: none
        )
        accepted = await request(lsp, "qwen/suggestion/accept", {"suggestionId": notice["suggestionId"]})
        assert accepted["applied"] is False and accepted["continued"] is True and accepted["turnId"]

        # Round 1's edit went through the editor; the dropped round's README write did not.
        assert len(lsp.edits) == 1
        change = lsp.edits[0].document_changes[0]
        assert change.text_document.uri == target.as_uri() and change.edits[0].new_text == "def f():\n    return 2\n"
        assert readme.read_text() == "# demo\n" and not directory.exists()

        # The model was asked again from round 1's tool results: exactly what the fork sent before round 2.
        continued = scripted.chat_requests()[4].body
        assert continued["messages"] == fork_round2["messages"] and continued["tools"] == fork_round2["tools"]
        sent = json.dumps(continued["messages"])
        assert sent.count(CONTINUED) == 1 and "sh1" not in sent and "w2" not in sent and "# changed" not in sent
        assert continued["messages"][-1]["role"] == "tool" and continued["messages"][-1]["tool_call_id"] == "s1"

        # The re-issued shell call asked through qwen/permission (the editor denied); the turn finished.
        assert [p["tool"] for p in lsp.permissions] == ["run_shell_command"] and not marker.exists()
        last = scripted.chat_requests()[5].body["messages"]
        assert last[-1]["role"] == "tool" and last[-1]["tool_call_id"] == "sh2"

        # The panel saw round 1 (replayed) and the continuation, nothing of the dropped round.
        events = turn_events(lsp, accepted["turnId"])
        assert [e["tool"]["id"] for e in events if e["kind"] == "toolCall"] == ["s1", "sh2"]
        text = "".join(e["text"] for e in events if e["kind"] == "text")
        assert text == "Editing.Running them.The shell was denied; f returns 2."
        assert all(e["sessionId"] == result["sessionId"] for e in events)

        # The session file holds everything once, appended after what was there.
        after = session_file(home, result["sessionId"]).read_bytes()
        assert after.startswith(before)
        records = session_records(home, result["sessionId"])
        new = records[len(before.splitlines()) :]
        assert [r["type"] for r in new] == ["user", "assistant", "tool_result", "assistant", "tool_result", "assistant"]
        assert new[0]["message"]["parts"] == [{"text": CONTINUED}]
        assert call_ids(records) == ["s1", "sh2"]
        assert after.count(CONTINUED.encode()) == 1 and b"sh1" not in after and b"# changed" not in after

        resumed = await request(lsp, "qwen/sessions/resume", {"sessionId": result["sessionId"]})
        assert [m["text"] for m in resumed["messages"]][-2:] == [CONTINUED, "Editing.Running them.The shell was denied; f returns 2."]  # one answer per turn
        scripted.enqueue(Reply(chunks=["ok"]), Reply(chunks=['{"suggestion": ""}']))
        await chat(lsp, "thanks", sessionId=result["sessionId"])
        [typed] = [r.body for r in scripted.chat_requests() if "tools" in r.body and "thanks" in json.dumps(r.body["messages"][-1])]  # not the side query
        history = json.dumps(typed["messages"])
        assert history.count(CONTINUED) == 1 and history.count('"s1"') == 2 and history.count('"sh2"') == 2  # a call and its result each


async def test_accepting_a_running_speculation_cancels_it_and_continues_from_its_complete_rounds(home: Path, workspace: Path, scripted: ScriptedOpenAI) -> None:
    target = workspace / "src" / "x.py"
    scripted.enqueue(Reply(chunks=["f returns 1 today."]), suggestion_reply(), edit_reply(target), Stall(chunks=["Still think"]))
    async with editor(home, workspace, scripted) as lsp:
        result = as_dict(await chat(lsp, "what does f return?"))
        await wait_for(lambda: len(scripted.chat_requests()) == 4, "the speculation's second round to start")
        notice = lsp.suggestions[0]
        assert ready(lsp) == []
        scripted.enqueue(Reply(chunks=["f now returns 2."]), Reply(chunks=['{"suggestion": ""}']))
        accepted = await request(lsp, "qwen/suggestion/accept", {"suggestionId": notice["suggestionId"]})
        assert accepted["applied"] is False and accepted["continued"] is True
        assert len(lsp.edits) == 1 and lsp.edits[0].document_changes[0].edits[0].new_text == "def f():\n    return 2\n"
        stalled, continued = scripted.chat_requests()[3].body, scripted.chat_requests()[4].body
        assert continued["messages"] == stalled["messages"]
        text = "".join(e["text"] for e in turn_events(lsp, accepted["turnId"]) if e["kind"] == "text")
        assert text == "Editing.f now returns 2."  # the cancelled round's "Still think" is not replayed
        records = session_records(home, result["sessionId"])
        assert [r["type"] for r in records[-4:]] == ["user", "assistant", "tool_result", "assistant"]
        assert b"Still think" not in session_file(home, result["sessionId"]).read_bytes()
        assert list(overlay_root(home).iterdir()) == []
