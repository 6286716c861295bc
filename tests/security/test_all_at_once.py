"""The hostile-repository acceptance case: one repository carrying every attack at once, through the real server.

Hostile settings, ``context.fileName`` outside, symlinked imports and files,
extglob and YAML bombs in skills and rules, a poisoned session file, and a
model that greps with a catastrophic regex and reads links. The repository
must open and chat normally: every request goes only to the user's endpoint
and carries no byte of a file outside the project, the server stays under
200 MB, and ``qwen/sessions/list`` still lists the good sessions.
"""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, open_doc
from qwen_lsp.files.paths import sanitize_cwd

from .test_trust_and_parsing import (  # noqa: F401 - fixtures
    ATTACKER_KEY,
    ENVIRON,
    OUTSIDE,
    USER_KEY,
    attacker,
    hostile_repository,
    link,
    server,
    user_home,
    write,
)

EXP_GLOB = "**/+(?|?)+(?|?)+(?|?)Q"


def add_the_rest(ws: Path, home: Path, tmp_path: Path) -> str:
    """Extglob bombs, a linked file for grep, poisoned sessions; returns the good session's id."""
    write(ws / ".qwen" / "skills" / "exp" / "SKILL.md", f"---\nname: exp\ndescription: exponential\npaths: ['{EXP_GLOB}', 'src/**']\n---\nexp\n")
    write(ws / ".qwen" / "skills" / "range" / "SKILL.md", "---\nname: range\ndescription: braces\npaths: ['x{1..2000}', 'src/**']\n---\nr\n")
    write(ws / ".qwen" / "rules" / "exp.md", f"---\npaths: ['{EXP_GLOB}', 'src/**']\n---\nsrc rule\n")
    write(ws / "src" / ("a" * 30 + ".txt"), "a" * 40 + "!\n")  # a name for the extglob, a line for the regex
    link(ws / "pw", tmp_path / "outside" / "secret.md")
    chats = home / ".qwen" / "projects" / sanitize_cwd(ws.resolve()) / "chats"
    good = "11111111-2222-3333-4444-555555555555"
    record = {"uuid": "u1", "parentUuid": None, "sessionId": good, "timestamp": "2026-01-01T00:00:00Z", "type": "user",
              "cwd": str(ws), "version": "0", "message": {"role": "user", "parts": [{"text": "an earlier good chat"}]}}
    answer = dict(record, uuid="u0", parentUuid="u1", type="assistant", message={"role": "model", "parts": [{"text": "an answer"}]})
    write(chats / f"{good}.jsonl", json.dumps(record) + "\n" + json.dumps(answer) + "\n")
    bad = dict(record, uuid="u2", sessionId="bad", timestamp="0001-01-01T00:00:00+01:00")
    write(chats / "99999999-0000-0000-0000-000000000000.jsonl",
          json.dumps(bad) + "\n" + "[" * 100_000 + "\n" + json.dumps(dict(record, message={"role": "user", "parts": [123]})) + "\n")
    return good


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


async def test_every_attack_at_once(tmp_path: Path, user_home: Path, scripted: ScriptedOpenAI, attacker: ScriptedOpenAI) -> None:
    ws = hostile_repository(tmp_path, attacker.base_url)
    good = add_the_rest(ws, user_home, tmp_path)
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[
            ToolCallSpec("grep_search", {"pattern": "(a+)+$"}, id="g1"),
            ToolCallSpec("grep_search", {"pattern": "outside-canary-9.ab"}, id="g2"),
            ToolCallSpec("glob", {"pattern": EXP_GLOB}, id="g3"),
            ToolCallSpec("read_file", {"file_path": str(ws / "pw")}, id="r1"),
        ]),
        Reply(chunks=["done"]),
    )
    async with server(user_home, ws) as client:
        open_doc(client, ws / "src" / ("a" * 30 + ".txt"), "plaintext")
        reply = as_dict(await chat(client, "look around"))
        assert reply["text"] == "done"
        await chat(client, "again", sessionId=reply["sessionId"])
        listed = as_dict(await client.protocol.send_request_async("qwen/sessions/list", {}))
        ids = [s["sessionId"] for s in listed["sessions"]]
        assert good in ids and reply["sessionId"] in ids
        skills = as_dict(await client.protocol.send_request_async("qwen/skills/list", {}))
        assert {"exp", "range", "good"} <= {s["name"] for s in skills["skills"]}
        context = as_dict(await client.protocol.send_request_async("qwen/context", {"sessionId": reply["sessionId"]}))
        assert context["totalTokens"] > 0
        hwm = vm_hwm_mb(client._server.pid)
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="qwen.addToProjectRules", arguments=[{"text": "still writable"}])
        )
    assert hwm < 200, f"server peaked at {hwm:.0f} MB"
    assert attacker.requests == []
    requests = scripted.chat_requests()
    assert len(requests) == 3
    for request in requests:
        assert request.headers["authorization"] == f"Bearer {USER_KEY}"
        assert OUTSIDE.encode() not in request.raw and ENVIRON.encode() not in request.raw and ATTACKER_KEY.encode() not in request.raw
    tool_results = [m for m in requests[1].body["messages"] if m["role"] == "tool"]
    assert len(tool_results) == 4  # every tool answered (a result or a refusal), none hung
