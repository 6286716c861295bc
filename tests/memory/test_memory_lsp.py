"""qwen/memory/* and "Remember this convention" over LSP, against the real server subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from support.scripted_openai import ScriptedOpenAI

from lsp_harness import as_dict, open_doc, running_server, wait_for

GITHUB_TOKEN = "ghp_" + "R4nd0mT0k3n" * 3 + "abc"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "conventions.py").write_text("# tests here never mock the database\nx = 1\n")
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    options = {"memory": {"autoExtract": False, "autoDream": False}}
    async with running_server(home, workspace, scripted.base_url, options) as client:
        yield client


async def test_remember_this_convention_code_action_writes_a_memory_and_notifies(lsp, workspace: Path):
    path = workspace / "conventions.py"
    open_doc(lsp, path)
    rng = types.Range(start=types.Position(line=0, character=2), end=types.Position(line=0, character=38))
    actions = await lsp.text_document_code_action_async(
        types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()), range=rng, context=types.CodeActionContext(diagnostics=[]))
    )
    titles = [a.title for a in actions or []]
    assert "Qwen: Remember this convention" in titles
    remember = next(a for a in actions if a.title == "Qwen: Remember this convention")
    command = remember.command if isinstance(remember, types.CodeAction) else remember
    result = as_dict(await lsp.workspace_execute_command_async(types.ExecuteCommandParams(command=command.command, arguments=command.arguments)))
    saved = Path(result["path"])
    assert (result["scope"], result["type"]) == ("project", "feedback")
    # A client that sends no words (Neovim's code action) gets the selection remembered, and is told its name.
    assert (result["name"], result["description"]) == ("tests here never mock the database", "tests here never mock the database")
    assert "tests here never mock the database" in saved.read_text()
    assert saved.name in (saved.parent.parent / "MEMORY.md").read_text()
    await wait_for(lambda: lsp.rec.memory_changed, "qwen/memoryChanged")
    assert as_dict(lsp.rec.memory_changed[0]) == {"scope": "project", "paths": [str(saved)]}

    listed = as_dict(await lsp.protocol.send_request_async("qwen/memory/list", {}))["memories"]
    assert [(m["path"], m["type"], m["age"]) for m in listed] == [(str(saved), "feedback", "today")]


async def test_remember_this_convention_with_the_users_words_saves_the_words_and_says_what_it_wrote(lsp, workspace: Path):
    """VS Code asks for the convention in words: the memory is those words, not the selected code line."""
    path = workspace / "conventions.py"
    words = "Module constants are UPPER_CASE"
    args = [{"text": "x = 1", "uri": path.as_uri(), "convention": f"  {words}\n"}]
    result = as_dict(await lsp.workspace_execute_command_async(types.ExecuteCommandParams(command="qwen.rememberSelection", arguments=args)))
    saved = Path(result["path"])
    assert (result["name"], result["description"], result["scope"]) == (words, words, "project")
    assert saved.name == "module-constants-are-upper-case.md"
    assert saved.read_text() == f"---\nname: {words}\ndescription: {words}\ntype: feedback\n---\n\n{words}\n"
    # Undo in the editor is qwen/memory/forget with the path the result named.
    removed = as_dict(await lsp.protocol.send_request_async("qwen/memory/forget", {"paths": [result["path"]]}))["removed"]
    assert removed == [result["path"]] and not saved.exists()
    assert saved.name not in (saved.parent.parent / "MEMORY.md").read_text()
    # Blank words are no words: the selection is remembered, as for a client that sends none.
    blank = as_dict(await lsp.workspace_execute_command_async(types.ExecuteCommandParams(command="qwen.rememberSelection", arguments=[{"text": "keep x at 1", "convention": "   "}])))
    assert blank["name"] == "keep x at 1"


async def test_memory_requests_round_trip_and_refuse_a_team_secret(lsp):
    saved = as_dict(await lsp.protocol.send_request_async("qwen/memory/remember", {"text": "Prefer pathlib over os.path.", "type": "reference", "scope": "user"}))
    assert (saved["scope"], saved["type"], saved["name"]) == ("user", "reference", "Prefer pathlib over os.path.")
    with pytest.raises(JsonRpcException) as info:
        await lsp.protocol.send_request_async("qwen/memory/remember", {"text": f"token {GITHUB_TOKEN}", "scope": "team"})
    assert info.value.code == -31010 and "GitHub PAT" in info.value.message and GITHUB_TOKEN not in info.value.message
    candidates = as_dict(await lsp.protocol.send_request_async("qwen/memory/forgetCandidates", {"query": "pathlib"}))["candidates"]
    assert [c["path"] for c in candidates] == [saved["path"]]
    removed = as_dict(await lsp.protocol.send_request_async("qwen/memory/forget", {"paths": [saved["path"]]}))["removed"]
    assert removed == [saved["path"]] and not Path(saved["path"]).exists()
    with pytest.raises(JsonRpcException) as bad:
        await lsp.protocol.send_request_async("qwen/memory/remember", {"text": "   "})
    assert bad.value.code == -32602 and "text" in bad.value.message
