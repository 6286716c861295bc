"""The Context picture and the context chips, over LSP, against the requests the scripted endpoint received.

Every request a chat sends is pictured part by part (``qwen/context``'s ``requests``); each answered turn
ends with a ``contextChanges`` chat event. Both are checked here against the HTTP bodies the scripted
OpenAI-compatible server logged: the parts add up to the server's count of the request, and that count is
recomputed here from the body alone; a chip appears on the turn whose request first holds what it names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.request_tokens import body_tokens, texts
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, open_doc, running_server
from qwen_lsp.llm.tokens import TokenCounter

SUMMARY = "<analysis>draft</analysis><state_snapshot>the user asked about users.py</state_snapshot>"
SKILL_BODY = "Every handler returns a typed UsersResponse; never a bare dict."
ROWS = ["system", "context files", "memory", "skills", "editor context", "history", "tools"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "api").mkdir(parents=True)
    (ws / "src" / "api" / "users.py").write_text("def get_user():\n    return {}\n")
    (ws / ".git").mkdir()
    (ws / "QWEN.md").write_text("Project rules: keep handlers small.\n")
    skill = ws / ".qwen" / "skills" / "api-conventions"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: api-conventions\ndescription: How API handlers are written here\n---\n{SKILL_BODY}\n")
    conditional = ws / ".qwen" / "skills" / "users-api"
    conditional.mkdir(parents=True)
    (conditional / "SKILL.md").write_text('---\nname: users-api\ndescription: The users endpoints\npaths: ["src/api/**"]\n---\nUsers live in src/api.\n')
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    (home / ".qwen").mkdir(exist_ok=True)
    (home / ".qwen" / "QWEN.md").write_text("User rules: answer briefly.\n")
    options = {
        "model": {"contextWindow": 30_000},
        "context": {"autoCompactThreshold": 0.7},
        "memory": {"autoExtract": False, "autoDream": False},
    }
    async with running_server(home, workspace, scripted.base_url, options) as client:
        yield client


def is_side_query(body: dict[str, Any]) -> bool:
    return "tools" not in body and body.get("response_format") is not None


def main_requests(scripted: ScriptedOpenAI) -> list[dict[str, Any]]:
    """The chat's own requests (not the memory selector's, not the compression's summary request)."""
    return [r.body for r in scripted.chat_requests() if not is_side_query(r.body) and "state_snapshot" not in json.dumps(r.body["messages"][-1])]


def changes_of(lsp: Any, turn_id: str) -> list[dict[str, Any]]:
    events = [as_dict(e) for e in lsp.rec.chat_events]
    found = [e for e in events if e["turnId"] == turn_id and e["kind"] == "contextChanges"]
    assert len(found) <= 1 and all(e["changes"] for e in found)  # one event, and only when something changed
    return found[0]["changes"] if found else []


async def turn(lsp: Any, prompt: str, sid: str | None = None) -> dict[str, Any]:
    return as_dict(await chat(lsp, prompt, **({"sessionId": sid} if sid else {})))


async def test_pictures_and_chips_match_what_the_endpoint_received(lsp: Any, scripted: ScriptedOpenAI, workspace: Path, home: Path) -> None:
    count = TokenCounter().count
    saved = as_dict(await lsp.protocol.send_request_async("qwen/memory/remember", {"text": "User ids are UUIDs, never integers."}))

    def route(body: dict[str, Any]) -> Any:
        if is_side_query(body):
            return Reply(chunks=[json.dumps({"selected_memories": [saved["path"]]})])
        return Reply(chunks=["ok"], usage={"prompt_tokens": 2_000, "completion_tokens": 2, "total_tokens": 2_002})

    scripted.default = route

    # Turn 1: a memory is recalled.
    first = await turn(lsp, "how are user ids stored?")
    sid = first["sessionId"]
    # Turn 2: the model loads the skill (its instructions reach the second request of the turn).
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("skill", {"skill": "api-conventions"})]), Reply(chunks=["done"]))
    second = await turn(lsp, "write a handler", sid)
    # Turn 3: the editor shows users.py with a selection; the answer's usage makes the next turn compress.
    users = workspace / "src" / "api" / "users.py"
    open_doc(lsp, users)
    lsp.protocol.notify("qwen/editorContext", {"activeFile": {"uri": users.as_uri(), "cursor": {"line": 1, "character": 0},
                                                               "selection": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}}})
    scripted.enqueue(Reply(chunks=["big answer"], usage={"prompt_tokens": 22_000, "completion_tokens": 5, "total_tokens": 22_005}))
    third = await turn(lsp, "is this right?", sid)
    # Turn 4: past auto-compression: the history is compressed before its request.
    scripted.enqueue(Reply(chunks=[SUMMARY], usage={"prompt_tokens": 21_800, "completion_tokens": 30, "total_tokens": 21_830}))
    fourth = await turn(lsp, "and now?", sid)

    report = as_dict(await lsp.protocol.send_request_async("qwen/context", {"sessionId": sid}))
    pictures = report["requests"]
    bodies = main_requests(scripted)
    assert [(p["turnId"], p["round"]) for p in pictures] == [
        (first["turnId"], 1), (second["turnId"], 1), (second["turnId"], 2), (third["turnId"], 1), (fourth["turnId"], 1)
    ]
    assert len(bodies) == len(pictures)
    for picture, body in zip(pictures, bodies):
        parts = {p["name"]: p["tokens"] for p in picture["parts"]}
        assert list(parts) == ROWS
        assert sum(parts.values()) == picture["totalTokens"] == body_tokens(body, count)
        # The system message as received, the environment prelude and the recalled memory are exactly the
        # system, context-file and memory rows.
        carried = [t for m in body["messages"][1:] for t in texts(m) if t.startswith("## Relevant memory") or "setting up the context" in t]
        assert parts["system"] + parts["context files"] + parts["memory"] == count(body["messages"][0]["content"]) + sum(count(t) for t in carried)
        assert parts["tools"] == count(json.dumps(body["tools"], separators=(",", ":"), ensure_ascii=False))
        assert all(n >= 0 for n in parts.values())
    assert pictures[-1]["reportedTokens"] == 2_000 and report["lastReported"] == 2_000

    def has(body: dict[str, Any], needle: str) -> bool:
        return any(needle in t for m in body["messages"][1:] for t in texts(m))

    # The skill chip: exactly on the turn whose request first holds the skill's instructions.
    holding = [i for i, b in enumerate(bodies) if has(b, SKILL_BODY)]
    assert holding and holding[0] == 2  # turn 2's second request
    chips = {t["turnId"]: changes_of(lsp, t["turnId"]) for t in (first, second, third, fourth)}
    skill_chips = {tid: [c for c in cs if c["kind"] == "skill"] for tid, cs in chips.items()}
    assert skill_chips[second["turnId"]] == [
        {"kind": "skill", "label": "skill api-conventions", "sources": [str(workspace / ".qwen" / "skills" / "api-conventions" / "SKILL.md")]}
    ]
    # A conditional skill switched on by the file the editor opened: on the turn whose listing first names it.
    # (The listing names it with its description; the folder listing names the folder from the start.)
    assert not any("The users endpoints" in t for b in bodies[:3] for m in b["messages"] for t in texts(m))
    assert any("The users endpoints" in t for t in texts(bodies[3]["messages"][-1]))
    users_skill = str(workspace / ".qwen" / "skills" / "users-api" / "SKILL.md")
    assert skill_chips[third["turnId"]] == [{"kind": "skill", "label": "skill users-api (opened src/api/users.py)", "sources": [users_skill]}]
    assert not skill_chips[first["turnId"]] and not skill_chips[fourth["turnId"]]
    skills_rows = [{p["name"]: p["tokens"] for p in pic["parts"]}["skills"] for pic in pictures]
    assert skills_rows[2] > skills_rows[1]  # the instructions count under skills, not history

    # The memory chip: on the turn whose request carries the recalled memory.
    assert has(bodies[0], "User ids are UUIDs")
    assert all(not any(t.startswith("## Relevant memory") for t in texts(b["messages"][-1])) for b in bodies[1:])
    assert [c for c in chips[first["turnId"]] if c["kind"] == "memory"] == [{"kind": "memory", "label": "1 memory recalled", "sources": [saved["path"]]}]
    assert all(c["kind"] != "memory" for tid in (second["turnId"], third["turnId"], fourth["turnId"]) for c in chips[tid])
    memory_row = {p["name"]: p["tokens"] for p in pictures[0]["parts"]}["memory"]
    recalled = next(t for t in texts(bodies[0]["messages"][-1]) if t.startswith("## Relevant memory"))
    assert memory_row >= count(recalled)

    # The editor chip: the turn whose message told the editor's state.
    assert has(bodies[3], str(users))
    assert [c for c in chips[third["turnId"]] if c["kind"] == "editor"] == [{"kind": "editor", "label": "editor: users.py, selection", "sources": [str(users)]}]
    assert {p["name"]: p["tokens"] for p in pictures[3]["parts"]}["editor context"] > 0

    # The compression chip: the turn whose history was compressed before its request.
    assert has(bodies[4], "the user asked about users.py") and not has(bodies[3], "the user asked about users.py")
    [compressed] = [c for c in chips[fourth["turnId"]] if c["kind"] == "compression"]
    assert compressed["label"].startswith("history compressed ") and "→" in compressed["label"]
    assert all(c["kind"] != "compression" for tid in (first["turnId"], second["turnId"], third["turnId"]) for c in chips[tid])


async def test_the_report_adds_up_and_names_home_files_with_a_tilde(lsp: Any, home: Path, workspace: Path) -> None:
    report = as_dict(await lsp.protocol.send_request_async("qwen/context", {}))
    assert report["totalTokens"] == sum(s["tokens"] for s in report["sections"])
    names = [s["name"] for s in report["sections"]]
    assert "history" in names and report["requests"] == [] and report.get("lastReported") is None
    files = {s["source"]: s.get("path") for s in report["sections"] if s["name"] == "context file"}
    assert files["~/.qwen/QWEN.md"] == str(home / ".qwen" / "QWEN.md") and files["QWEN.md"] == str(workspace / "QWEN.md")
    assert not any((s.get("source") or "").startswith("../") for s in report["sections"])
