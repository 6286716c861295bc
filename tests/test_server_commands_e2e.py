"""Slash commands over LSP (``qwen/commands/list``, ``qwen/command``): the real server, the scripted model.

Each command is checked by what it does — the file it writes, the request the model gets, the
chat the client is moved to — as Qwen Code 0.24.4's command of the same name (docs/commands.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, server_env, start_client, wait_for

SUMMARY = "<analysis>draft</analysis><state_snapshot>the user said hello twice</state_snapshot>"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# demo\n")
    return ws


class Editor:
    def __init__(self) -> None:
        self.permissions: list[dict[str, Any]] = []
        self.edits: list[Any] = []


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    client, rec = await start_client(server_env(home, scripted.base_url))
    ed = Editor()

    @client.feature("qwen/permission")
    def permission(params: Any) -> dict[str, str]:
        ed.permissions.append(as_dict(params))
        return {"decision": "allow"}

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        ed.edits.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    caps = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True, resource_operations=[types.ResourceOperationKind.Create]),
        ),
        experimental={"qwen": {"permissionRequests": True}},
    )
    await client.initialize_session(
        types.InitializeParams(capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")])
    )
    client.rec, client.editor = rec, ed
    try:
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


async def command(client: Any, text: str, **params: Any) -> dict[str, Any]:
    return as_dict(await client.protocol.send_request_async("qwen/command", {"text": text, **params}))


def last_user_text(scripted: ScriptedOpenAI) -> str:
    messages = scripted.chat_requests()[-1].body["messages"]
    user = [m for m in messages if m["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


async def test_the_list_names_each_command_with_its_description(lsp: Any) -> None:
    listed = as_dict(await lsp.protocol.send_request_async("qwen/commands/list", {}))["commands"]
    names = {c["name"]: c for c in listed}
    for name in ("init", "remember", "forget", "memory", "dream", "compress", "recap", "resume", "clear", "context", "skills", "model", "approval-mode", "plan", "export"):
        assert names[name]["description"], name
    assert names["clear"]["altNames"] == ["reset", "new"]
    assert names["remember"]["argumentHint"] == "<text to remember>"


@pytest.mark.parametrize("line", ["/nosuch", "/nosuch with words", "/NOSUCH", "/ ", "/compres"])
async def test_an_unknown_command_says_so_lists_the_commands_and_never_reaches_the_model(lsp: Any, scripted: ScriptedOpenAI, line: str) -> None:
    result = await command(lsp, line)
    assert result["status"] == "error" and result["text"].startswith("Unknown command: ")
    assert "/compress" in result["text"] and any(c["name"] == "init" for c in result["commands"])
    assert scripted.chat_requests() == []


@pytest.mark.parametrize("line", ["/usr/lib is missing", "/tmp/x.log: what is this?", "// a comment", "/* block */", "/src\\main.c fails"])
async def test_a_line_that_only_starts_with_a_slash_goes_to_the_model(lsp: Any, scripted: ScriptedOpenAI, line: str) -> None:
    scripted.enqueue(Reply(chunks=["looked at it"]))
    result = await command(lsp, line)
    assert result["status"] == "done" and "command" not in result
    assert result["chat"]["text"] == "looked at it" and result["sessionId"] == result["chat"]["sessionId"]
    assert last_user_text(scripted).endswith(line)
    assert any(e for e in lsp.rec.chat_events if as_dict(e)["sessionId"] == result["sessionId"])


async def test_compress_clear_and_resume(lsp: Any, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["hello back"], usage={"prompt_tokens": 4_000, "completion_tokens": 5, "total_tokens": 4_005}))
    sid = as_dict(await chat(lsp, "hello"))["sessionId"]
    scripted.enqueue(Reply(chunks=["again"], usage={"prompt_tokens": 4_100, "completion_tokens": 5, "total_tokens": 4_105}))
    await chat(lsp, "hello again", sessionId=sid)

    assert (await command(lsp, "/compress"))["status"] == "error"  # no chat named: nothing to compress
    scripted.enqueue(Reply(chunks=[SUMMARY], usage={"prompt_tokens": 4_000, "completion_tokens": 30, "total_tokens": 4_030}))
    compressed = await command(lsp, "/compress", sessionId=sid)
    assert compressed["status"] == "done" and compressed["text"].startswith("Chat history compressed from ")
    assert "the user said" not in compressed["text"] and compressed["sessionId"] == sid

    cleared = await command(lsp, "/clear", sessionId=sid)
    assert cleared["status"] == "done" and cleared["sessionId"] != sid
    scripted.enqueue(Reply(chunks=["fresh"]))
    await chat(lsp, "new start", sessionId=cleared["sessionId"])
    history = scripted.chat_requests()[-1].body["messages"]
    assert not any("hello again" in json.dumps(m) for m in history)  # the new chat holds none of the old one
    assert (await command(lsp, "/new", sessionId=sid))["command"] == "clear"

    listed = await command(lsp, "/resume")
    assert sid in listed["text"]
    resumed = await command(lsp, f"/resume {sid}", sessionId=cleared["sessionId"])
    assert resumed["sessionId"] == sid and [m["text"] for m in resumed["resumed"]["messages"]][:2] == ["hello", "hello back"]


async def test_model_approval_mode_and_plan(lsp: Any, scripted: ScriptedOpenAI) -> None:
    assert "scripted-model" in (await command(lsp, "/model"))["text"]
    switched = await command(lsp, "/model other-model")
    assert switched["status"] == "done" and "other-model" in switched["text"]
    scripted.enqueue(Reply(chunks=["hi"]))
    await chat(lsp, "which model?")
    assert scripted.chat_requests()[-1].body["model"] == "other-model"
    for bad in ("/model --fast x", "/model a b", "/model " + "x" * 300):
        assert (await command(lsp, bad))["status"] == "error"

    assert (await command(lsp, "/approval-mode sideways"))["text"] == 'Invalid approval mode "sideways". Valid modes: plan, default, auto-edit, auto, yolo'
    assert (await command(lsp, "/approval-mode AUTO-EDIT"))["text"] == 'Approval mode set to "auto-accept edits"'
    assert '"auto-accept edits" (auto-edit)' in (await command(lsp, "/approval-mode"))["text"]

    assert (await command(lsp, "/plan exit"))["status"] == "error"
    assert (await command(lsp, "/plan"))["text"].startswith("Enabled plan mode.")
    assert (await command(lsp, "/plan"))["text"].startswith("Already in plan mode.")
    scripted.enqueue(Reply(chunks=["a plan"]))
    planned = await command(lsp, "/plan refactor the parser")
    assert planned["chat"]["text"] == "a plan" and last_user_text(scripted).endswith("refactor the parser")
    tools = {t["function"]["name"] for t in scripted.chat_requests()[-1].body["tools"]}
    assert "exit_plan_mode" in tools and "write_file" not in tools
    assert (await command(lsp, "/plan exit"))["text"] == "Exited plan mode. Previous approval mode restored."
    assert "(auto-edit)" in (await command(lsp, "/approval-mode"))["text"]


async def test_init_writes_an_empty_file_then_asks_the_model_and_asks_before_replacing_one(lsp: Any, scripted: ScriptedOpenAI, workspace: Path) -> None:
    scripted.enqueue(Reply(chunks=["Written."]))
    started = await command(lsp, "/init")
    assert started["status"] == "done" and started["text"] == "Empty QWEN.md created. Now analyzing the project to populate it."
    assert (workspace / "QWEN.md").read_text() == "" and started["path"] == str(workspace / "QWEN.md")
    prompt = last_user_text(scripted)
    assert "write a QWEN.md file" in prompt and "README" in prompt

    (workspace / "QWEN.md").write_text("# kept\n")
    asked = await command(lsp, "/init")
    assert asked["status"] == "confirm" and asked["text"] == "A QWEN.md file already exists in this directory. Do you want to regenerate it?"
    assert (workspace / "QWEN.md").read_text() == "# kept\n"
    requests = len(scripted.chat_requests())
    for token in ("0" * 32, asked["confirm"] + "x"):
        assert (await command(lsp, "/init", confirm=token))["status"] == "error"
    assert (await command(lsp, "/remember x", confirm=asked["confirm"]))["status"] == "error"  # a token is for its own line
    assert (workspace / "QWEN.md").read_text() == "# kept\n" and len(scripted.chat_requests()) == requests
    scripted.enqueue(Reply(chunks=["Regenerated."]))
    went = await command(lsp, "/init", confirm=asked["confirm"])
    assert went["status"] == "done" and went["chat"]["text"] == "Regenerated." and (workspace / "QWEN.md").read_text() == ""
    assert (await command(lsp, "/init", confirm=asked["confirm"]))["status"] == "error"  # single use


async def test_remember_asks_the_model_to_save_into_the_memory_folders(lsp: Any, scripted: ScriptedOpenAI, home: Path) -> None:
    assert (await command(lsp, "/remember"))["text"] == "Usage: /remember <text to remember>"
    scripted.enqueue(Reply(chunks=["Saved."]))
    result = await command(lsp, "/remember we deploy on Fridays")
    assert result["chat"]["text"] == "Saved."
    prompt = last_user_text(scripted)
    assert prompt.endswith("we deploy on Fridays") and "Please save the following to your memory system." in prompt
    assert str(home / ".qwen") in prompt


async def test_forget_shows_what_it_would_remove_and_removes_only_after_yes(lsp: Any, scripted: ScriptedOpenAI) -> None:
    saved = as_dict(await lsp.protocol.send_request_async("qwen/memory/remember", {"text": "Tabs are forbidden in this repo", "type": "feedback"}))
    kept = as_dict(await lsp.protocol.send_request_async("qwen/memory/remember", {"text": "Deploys happen on Fridays", "type": "project"}))
    scripted.enqueue(Reply(chunks=["not json"]))  # the selector's answer is unusable: the text match decides
    asked = await command(lsp, "/forget tabs are forbidden")
    assert asked["status"] == "confirm" and saved["path"] in asked["text"] and kept["path"] not in asked["text"]
    assert Path(saved["path"]).exists()
    gone = await command(lsp, "/forget tabs are forbidden", confirm=asked["confirm"])
    assert gone["status"] == "done" and saved["path"] in gone["text"]
    assert not Path(saved["path"]).exists() and Path(kept["path"]).exists()
    listed = await command(lsp, "/memory")
    assert "Deploys happen on Fridays" in listed["text"] and "Tabs" not in listed["text"]
    scripted.enqueue(Reply(chunks=["not json"]))
    assert (await command(lsp, "/forget nothing like this"))["text"] == "No managed auto-memory entries matched: nothing like this"


async def test_export_context_recap_skills(lsp: Any, scripted: ScriptedOpenAI, workspace: Path) -> None:
    scripted.enqueue(Reply(chunks=["hello back"]))
    sid = as_dict(await chat(lsp, "hello there"))["sessionId"]
    md = await command(lsp, "/export md", sessionId=sid)
    assert md["status"] == "done" and md["text"].startswith("Session exported to markdown: qwen-code-export-")
    text = Path(md["path"]).read_text()
    assert Path(md["path"]).parent == workspace and "## User" in text and "hello there" in text and "hello back" in text
    assert Path(md["path"]).stat().st_mode & 0o777 == 0o600
    (workspace / "out").mkdir()
    js = await command(lsp, "/export json out", sessionId=sid)
    data = json.loads(Path(js["path"]).read_text())
    assert Path(js["path"]).parent == workspace / "out" and [m["text"] for m in data["messages"]] == ["hello there", "hello back"]
    (workspace / "link").symlink_to(workspace.parent)
    for bad in ("/export md ..", "/export md /tmp", "/export md link", "/export html", "/export"):
        assert (await command(lsp, bad, sessionId=sid))["status"] == "error", bad
    assert sorted(p.name for p in workspace.parent.iterdir() if p.name.startswith("qwen-code-export")) == []

    context = await command(lsp, "/context", sessionId=sid)
    assert context["text"].startswith("Context: ") and "tokens" in context["text"]
    scripted.enqueue(Reply(chunks=["<recap>Said hello.</recap>"]))
    recap = await command(lsp, "/recap", sessionId=sid)
    assert recap["text"] == "Said hello."
    assert (await command(lsp, "/recap"))["text"] == "Not enough conversation context for a recap yet."
    assert (await command(lsp, "/skills"))["status"] == "done"
    assert (await command(lsp, "/help"))["commands"]


async def test_dream_runs_the_consolidation_now_and_says_what_it_touched(lsp: Any, scripted: ScriptedOpenAI) -> None:
    result = await command(lsp, "/dream")
    assert result == {"status": "done", "text": "Memory consolidation noop; touched: nothing.", "command": "dream"}
    [request] = scripted.chat_requests()  # the consolidation run, the schedule's gates not applied
    assert "consolidat" in json.dumps(request.body).lower()
