"""A workspace folder added while a chat streams in another: the chat goes on, the new folder answers for itself.

The server builds the new folder's workspace (here 300 skills) on a worker
thread. A request naming that folder, sent right after
``workspace/didChangeWorkspaceFolders``, waits until it is ready and is
answered by it, not by the first folder; the chat in the first folder
streams to its end. (``tests/test_setup_off_loop.py`` proves by order that
the build never holds the loop.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_harness import as_dict, chat, running_server, wait_for
from lsprotocol import types
from support.scripted_openai import Reply, ScriptedOpenAI


async def test_a_folder_added_mid_stream_is_ready_for_its_requests_and_the_chat_finishes(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    (first / ".git").mkdir(parents=True)
    (second / ".git").mkdir(parents=True)
    for i in range(300):
        d = second / ".qwen" / "skills" / f"skill-{i}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"---\nname: skill-{i}\ndescription: Skill {i}\n---\n\nDo {i}.\n")
    scripted.enqueue(Reply(chunks=[f"c{i} " for i in range(100)], delay=0.01))
    async with running_server(home, first, scripted.base_url) as client:
        streaming = asyncio.ensure_future(chat(client, "stream", workspaceUri=first.as_uri()))
        await wait_for(lambda: client.rec.chat_events, "the first chunk")
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(uri=second.as_uri(), name="second")], removed=[])
            )
        )
        listed = as_dict(await client.protocol.send_request_async("qwen/skills/list", {"workspaceUri": second.as_uri()}))
        assert len([s for s in listed["skills"] if s["name"].startswith("skill-")]) == 300
        own = as_dict(await client.protocol.send_request_async("qwen/skills/list", {"workspaceUri": first.as_uri()}))
        assert not [s for s in own["skills"] if s["name"].startswith("skill-")]
        result = as_dict(await streaming)
        assert result["text"].startswith("c0 c1 ") and "c99" in result["text"]
