"""End-to-end: skills, rules and context files as an editor sees them through the real server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, open_doc, running_server, wait_for

WAIT = 10.0  # an upper bound for polling, never an assertion about speed


def skill(root: Path, name: str, description: str, extra: str = "", body: str | None = None) -> Path:
    d = root / ".qwen" / "skills" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body or 'Steps for ' + name}\n")
    return d


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "api").mkdir(parents=True)
    (ws / "src" / "api" / "users.py").write_text("def get_user(): ...\n")
    (ws / "notes.md").write_text("just notes\n")
    (ws / ".git").mkdir()
    (ws / "QWEN.md").write_text("Root rules. @./docs/style.md\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "style.md").write_text("Style: short functions.\n")
    skill(ws, "api-helper", "Helps with API handlers", 'paths: ["src/api/**"]\n')
    skill(ws, "always-on", "Always available")
    broken = ws / ".qwen" / "skills" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: broken\ndescription: [unclosed\n---\nbody\n")
    rules = ws / ".qwen" / "rules"
    rules.mkdir(parents=True)
    (rules / "python.md").write_text('---\npaths: ["**/*.py"]\n---\nUse type hints in Python files.\n')
    (rules / "general.md").write_text("Always write tests.\n")
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url) as client:
        yield client


def user_texts(request_body: dict) -> list[str]:
    last_user = [m for m in request_body["messages"] if m["role"] == "user"][-1]
    content = last_user["content"]
    return [content] if isinstance(content, str) else [p["text"] for p in content]


async def skills_list(client) -> dict:
    return as_dict(await client.protocol.send_request_async("qwen/skills/list", {}))


async def test_opening_a_matching_file_activates_the_skill_and_keeps_tools_identical(lsp, scripted, workspace):
    first = as_dict(await chat(lsp, "hello"))
    req1 = scripted.chat_requests()[-1].body
    listing = next(t for t in user_texts(req1) if "<available_skills>" in t)
    assert "always-on" in listing
    assert "api-helper" not in listing  # conditional: hidden until a matching file is opened

    open_doc(lsp, workspace / "notes.md", "markdown")
    open_doc(lsp, workspace / "src" / "api" / "users.py")
    await wait_for(lambda: any("api-helper" in as_dict(c)["activated"] for c in lsp.rec.skills_changed), "skillsChanged")
    change = next(as_dict(c) for c in lsp.rec.skills_changed if "api-helper" in as_dict(c)["activated"])
    assert change["trigger"] == (workspace / "src" / "api" / "users.py").as_uri()

    await chat(lsp, "and now?", sessionId=first["sessionId"])
    req2 = scripted.chat_requests()[-1].body
    second_turn = "\n".join(user_texts(req2))
    assert "became available" in second_turn and "api-helper" in second_turn
    assert "Use type hints in Python files." in second_turn  # the conditional rule, injected once
    assert json.dumps(req1["tools"]) == json.dumps(req2["tools"])
    assert req1["messages"][0] == req2["messages"][0]  # system prompt unchanged too

    await chat(lsp, "third", sessionId=first["sessionId"])
    third_turn = "\n".join(user_texts(scripted.chat_requests()[-1].body))
    assert "api-helper" not in third_turn and "type hints" not in third_turn  # deltas only once


async def test_broken_skill_is_listed_with_its_error_and_others_still_work(lsp, workspace):
    listed = await skills_list(lsp)
    names = {s["name"] for s in listed["skills"]}
    assert {"always-on", "api-helper", "code-review"} <= names
    assert any("broken" in e["path"] and "Failed to parse" in e["message"] for e in listed["errors"])
    api = next(s for s in listed["skills"] if s["name"] == "api-helper")
    assert api["conditional"] and not api["active"] and api["level"] == "project"


async def test_skill_created_while_running_is_listed_and_announced(lsp, workspace):
    skill(workspace, "late-comer", "Created while the server runs")

    async def listed() -> bool:
        return "late-comer" in {s["name"] for s in (await skills_list(lsp))["skills"]}

    deadline = asyncio.get_running_loop().time() + WAIT
    while not await listed():
        assert asyncio.get_running_loop().time() < deadline, "skill never listed"
        await asyncio.sleep(0.05)
    await wait_for(lambda: any("late-comer" in as_dict(c)["activated"] for c in lsp.rec.skills_changed), "skillsChanged")


async def test_tool_call_round_trip_streams_events_and_activates_by_touch(lsp, scripted, workspace):
    target = workspace / "src" / "api" / "users.py"
    scripted.enqueue(
        Reply(chunks=["Let me look."], tool_calls=[ToolCallSpec("read_file", {"file_path": str(target)}, id="call_1")]),
        Reply(chunks=["It defines get_user."]),
    )
    res = as_dict(await chat(lsp, "what is in users.py?"))
    assert res["text"] == "Let me look.It defines get_user."
    events = [as_dict(e) for e in lsp.rec.chat_events]
    kinds = [e["kind"] for e in events]
    assert kinds.index("toolCall") < kinds.index("toolResult")
    call = next(e for e in events if e["kind"] == "toolCall")
    assert call["tool"]["name"] == "read_file" and call["tool"]["id"] == "call_1"
    result = next(e for e in events if e["kind"] == "toolResult")
    assert result["tool"]["isError"] is False
    assert [e["seq"] for e in events] == list(range(len(events)))
    second = scripted.chat_requests()[-1].body["messages"]
    tool_msg = next(m for m in second if m["role"] == "tool")
    assert tool_msg["tool_call_id"] == "call_1" and "get_user" in tool_msg["content"]
    # reading the file through a tool counts as touching it
    await wait_for(lambda: any("api-helper" in as_dict(c)["activated"] for c in lsp.rec.skills_changed), "activation by tool")


async def test_skill_tool_loads_the_body_lazily(lsp, scripted, workspace):
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("skill", {"skill": "always-on"}, id="s1")]),
        Reply(chunks=["done"]),
    )
    await chat(lsp, "use the skill")
    tool_msg = next(m for m in scripted.chat_requests()[-1].body["messages"] if m["role"] == "tool")
    assert "Base directory for this skill:" in tool_msg["content"] and "Steps for always-on" in tool_msg["content"]


async def test_editing_an_imported_file_changes_the_next_system_message(lsp, scripted, workspace):
    first = as_dict(await chat(lsp, "one"))
    system1 = scripted.chat_requests()[-1].body["messages"][0]["content"]
    assert "Style: short functions." in system1 and "Always write tests." in system1
    (workspace / "docs" / "style.md").write_text("Style: tiny functions.\n")

    async def system_now() -> str:
        await chat(lsp, "again", sessionId=first["sessionId"])
        return scripted.chat_requests()[-1].body["messages"][0]["content"]

    deadline = asyncio.get_running_loop().time() + WAIT
    while "tiny functions" not in (system := await system_now()):
        assert asyncio.get_running_loop().time() < deadline, "import edit never reached the system prompt"
        await asyncio.sleep(0.1)
    assert "short functions" not in system


async def test_add_to_qwen_md_code_action_and_command(lsp, workspace):
    doc = workspace / "notes.md"
    open_doc(lsp, doc, "markdown")
    actions = await lsp.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc.as_uri()),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=10)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    command = next(a for a in actions if a.title == "Qwen: Add to QWEN.md")  # a bare Command: no literal support declared
    assert command.command == "qwen.addToProjectRules"
    await lsp.workspace_execute_command_async(types.ExecuteCommandParams(command=command.command, arguments=command.arguments))
    text = (workspace / "QWEN.md").read_text()
    assert "## Qwen Added Memories" in text and "just notes" in text
    empty = await lsp.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc.as_uri()),
            range=types.Range(start=types.Position(line=0, character=3), end=types.Position(line=0, character=3)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not empty


async def test_context_inspector_total_matches_sections_and_lists_each_file(lsp, workspace):
    res = as_dict(await lsp.protocol.send_request_async("qwen/context", {}))
    sources = [s.get("source") for s in res["sections"]]
    assert "QWEN.md" in sources
    names = [s["name"] for s in res["sections"]]
    assert "base prompt" in names and "tools" in names and "skills" in names
    assert res["totalTokens"] == sum(s["tokens"] for s in res["sections"])


async def test_attachments_are_sent_as_referenced_files_and_count_as_touched(lsp, scripted, workspace):
    target = workspace / "src" / "api" / "users.py"
    target.write_text("line0\nline1\nline2\nline3\n")
    rng = {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 3}}
    await chat(lsp, "explain", attachments=[{"uri": target.as_uri(), "range": rng}])
    texts = user_texts(scripted.chat_requests()[-1].body)
    block = next(t for t in texts if t.startswith("--- Content from referenced files ---"))
    assert "Content from @src/api/users.py:\nline1\nline2\n--- End of content ---" in block
    assert "line0" not in block and texts[-1] == "explain"
    await wait_for(lambda: any("api-helper" in as_dict(c)["activated"] for c in lsp.rec.skills_changed), "activation by attachment")


async def test_files_opened_before_the_first_chat_shape_its_first_request(lsp, scripted, workspace):
    open_doc(lsp, workspace / "src" / "api" / "users.py")
    await wait_for(lambda: lsp.rec.skills_changed, "skillsChanged")
    await chat(lsp, "first question")
    texts = user_texts(scripted.chat_requests()[-1].body)
    listing = next(t for t in texts if "<available_skills>" in t)
    assert "api-helper" in listing
    assert any("Use type hints in Python files." in t for t in texts), texts


async def test_an_edit_right_before_a_turn_reaches_that_turn(lsp, scripted, workspace):
    first = as_dict(await chat(lsp, "one"))
    for n in range(3):
        (workspace / "QWEN.md").write_text(f"Root rules v{n}. @./docs/style.md\n")
        (workspace / "docs" / "style.md").write_text(f"Style v{n}.\n")
        await chat(lsp, f"turn {n}", sessionId=first["sessionId"])  # no pause, no didSave
        system = scripted.chat_requests()[-1].body["messages"][0]["content"]
        assert f"Root rules v{n}." in system and f"Style v{n}." in system


async def test_adding_a_conditional_skill_or_fixing_a_broken_one_tells_the_editor(lsp, workspace):
    before = len(lsp.rec.skills_changed)
    skill(workspace, "later-conditional", "Only for docs", 'paths: ["docs/**"]\n')
    await wait_for(lambda: len(lsp.rec.skills_changed) > before, "skillsChanged for a conditional skill")
    assert as_dict(lsp.rec.skills_changed[-1]) == {"activated": [], "deactivated": []}
    listed = await skills_list(lsp)
    assert any(s["name"] == "later-conditional" and not s["active"] for s in listed["skills"])
    before = len(lsp.rec.skills_changed)
    (workspace / ".qwen" / "skills" / "broken" / "SKILL.md").write_text("---\nname: broken\ndescription: fixed now\n---\nbody\n")
    await wait_for(lambda: any("broken" in as_dict(c)["activated"] for c in lsp.rec.skills_changed[before:]), "fixed skill")
