"""The team-memory secret guard holds for the chat's own write_file/edit, in yolo too, whatever the path's spelling.

Before, only the memory store scanned: the chat's ``write_file`` into
``.qwen/team-memory/`` was written unscanned, a DashScope key (``sk-`` and
32 hex digits) matched no rule, and a ``ghp_`` token with a U+200B inside
passed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, running_server, server_env
from qwen_lsp.agent.tools.approved import PRE_EXISTING_NOTE
from qwen_lsp.memory.team_guard import is_team_memory_file
from qwen_lsp.files.paths import sanitize_cwd
from security.permission_client import permission_client

DASHSCOPE = "sk-" + "0123456789abcdef" * 2
GHP_SPLIT = "ghp_" + "A1b2" * 4 + "\u200b" + "A1b2" * 5


def test_team_memory_paths_are_recognised_lexically_and_through_links(tmp_path: Path) -> None:
    team = tmp_path / "repo" / ".qwen" / "team-memory"
    team.mkdir(parents=True)
    (tmp_path / "repo" / "alias").symlink_to(team)
    assert is_team_memory_file(team / "a.md") and is_team_memory_file(tmp_path / "repo" / "alias" / "new.md")
    assert is_team_memory_file(tmp_path / "repo" / "sub" / ".QWEN" / "Team-Memory" / "x.md")
    assert not is_team_memory_file(tmp_path / "repo" / ".qwen" / "rules" / "x.md")


async def test_the_chats_own_writes_into_team_memory_are_scanned_in_yolo(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    team = ws / ".qwen" / "team-memory"
    team.mkdir(parents=True)
    (team / "notes.md").write_text("# Team notes\n")
    calls = [
        ToolCallSpec("write_file", {"file_path": str(team / "keys.md"), "content": f"DASHSCOPE_API_KEY={DASHSCOPE}\n"}, id="w1"),
        ToolCallSpec("write_file", {"file_path": str(team / "gh.md"), "content": f"token {GHP_SPLIT}\n"}, id="w2"),
        ToolCallSpec("edit", {"file_path": str(team / "notes.md"), "old_string": "# Team notes", "new_string": f"# Team notes {DASHSCOPE}"}, id="e1"),
    ]
    scripted.enqueue(Reply(chunks=[], tool_calls=calls), Reply(chunks=["done"]))
    async with running_server(home, ws, scripted.base_url, {"tools": {"approvalMode": "yolo"}}) as client:
        assert as_dict(await chat(client, "save the keys for the team"))["text"] == "done"
    answers = {m["tool_call_id"]: m["content"] for m in scripted.chat_requests()[1].body["messages"] if m.get("role") == "tool"}
    assert answers["w1"].startswith("Content contains potential secrets (DashScope API Key) and cannot be written to team memory.")
    assert answers["w2"].startswith("Content contains potential secrets (GitHub PAT)")
    assert answers["e1"].startswith("Content contains potential secrets (DashScope API Key)")
    assert not (team / "keys.md").exists() and not (team / "gh.md").exists() and (team / "notes.md").read_text() == "# Team notes\n"
    assert not any(DASHSCOPE in a or GHP_SPLIT in a for a in answers.values())  # the refusal never quotes the secret


async def test_opening_a_project_does_not_rewrite_its_committed_team_memory_index(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    team = ws / ".qwen" / "team-memory"
    (team / "project").mkdir(parents=True)
    hand_written = "# Our team memory\n\nWritten by hand; see project/release.md.\n"
    (team / "MEMORY.md").write_text(hand_written)
    (team / "project" / "release.md").write_text("---\nname: Releases\ndescription: Tuesdays\ntype: project\n---\n\nReleases go out on Tuesdays.\n")
    project_memory = home / ".qwen" / "projects" / sanitize_cwd(ws) / "memory"
    (project_memory / "feedback").mkdir(parents=True)
    (project_memory / "feedback" / "x.md").write_text("---\nname: X\ndescription: x\ntype: feedback\n---\n\nx\n")
    scripted.default = Reply(chunks=["hi"])  # the chat, and recall's side query over the memories
    async with running_server(home, ws, scripted.base_url) as client:
        assert as_dict(await chat(client, "hello"))["sessionId"]
    # shutdown drained the startup work: the project index was brought in line, the team's was not touched
    assert "x.md" in (project_memory / "MEMORY.md").read_text()
    assert (team / "MEMORY.md").read_text() == hand_written


GHP = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
CLI_REFUSAL = (
    "Content contains potential secrets (GitHub PAT) and cannot be written to team memory. Team memory is shared "
    "with all repository collaborators. Remove the sensitive content and try again."
)


@pytest.mark.parametrize("team_on", [False, True])
async def test_odd_spellings_and_linked_folders_get_the_clis_refusal_unasked(tmp_path: Path, home: Path, scripted: ScriptedOpenAI, team_on: bool) -> None:
    """As Qwen Code 0.24.4 (run against the scripted model): ``<repo>/./.qwen//team-memory/…`` and a write through a
    linked folder get its exact message, and an edit of a file that already holds a secret gets its note.
    With team memory in use the folder is a managed one (written through the store); the refusal is the same."""
    ws = tmp_path / "ws"
    team = ws / ".qwen" / "team-memory"
    (team / "reference").mkdir(parents=True)
    (ws / "notes").symlink_to(team / "reference")
    committed = f"---\nname: Deploy\ndescription: deploy token\ntype: reference\n---\nToken {GHP}\n"
    (team / "reference" / "deploy.md").write_text(committed)
    memory = "---\nname: D\ndescription: d\ntype: reference\n---\nToken " + GHP + "\n"
    calls = [
        ToolCallSpec("write_file", {"file_path": f"{ws}/./.qwen//team-memory/reference/odd.md", "content": memory}, id="w1"),
        ToolCallSpec("write_file", {"file_path": str(ws / "notes" / "linked.md"), "content": memory}, id="w2"),
        ToolCallSpec("edit", {"file_path": str(team / "reference" / "deploy.md"), "old_string": "deploy token", "new_string": "the deploy token"}, id="e1"),
        ToolCallSpec("edit", {"file_path": str(team / "reference" / "deploy.md"), "old_string": "Token", "new_string": f"Token {GHP}"}, id="e2"),
    ]
    scripted.enqueue(Reply(chunks=[], tool_calls=calls), Reply(chunks=["done"]))
    env = server_env(home, scripted.base_url, QWEN_CODE_MEMORY_TEAM="1" if team_on else "0")
    async with permission_client(env, ws, None) as client:
        assert as_dict(await chat(client, "save the token for the team"))["text"] == "done"
        assert client.log.asked == [] and client.log.applied == []  # refused before anyone was asked
    answers = {m["tool_call_id"]: m["content"] for m in scripted.chat_requests()[1].body["messages"] if m.get("role") == "tool"}
    assert answers["w1"] == answers["w2"] == answers["e2"] == CLI_REFUSAL
    assert answers["e1"] == CLI_REFUSAL + PRE_EXISTING_NOTE
    assert sorted(p.name for p in (team / "reference").iterdir()) == ["deploy.md"] and (team / "reference" / "deploy.md").read_text() == committed
