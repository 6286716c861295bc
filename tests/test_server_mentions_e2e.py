"""``@`` over LSP: ``qwen/files/complete`` finds workspace files fuzzily within the ignore files, and an
``@path`` in a message is read into the model's request, never from outside the workspace."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, running_server
from qwen_lsp.context.file_index import list_files, match

SECRET = "TOP-SECRET-CANARY"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "api").mkdir(parents=True)
    (ws / "src" / "api" / "handlers.py").write_text("def handle():\n    return 'HANDLER-BODY'\n")
    (ws / "src" / "main.py").write_text("print('main')\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "guide.md").write_text("# Guide\n")
    (ws / "build").mkdir()
    (ws / "build" / "handlers.py").write_text(f"{SECRET}\n")
    (ws / "private.env").write_text(f"{SECRET}\n")
    (ws / ".gitignore").write_text("build/\n")
    (ws / ".qwenignore").write_text("*.env\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".git" / "objects").mkdir()
    (ws / ".git" / "refs").mkdir()
    (tmp_path / "outside.txt").write_text(f"{SECRET}\n")
    (ws / "link-out.txt").symlink_to(tmp_path / "outside.txt")
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url) as client:
        yield client


async def complete(client: Any, query: str, **params: Any) -> dict[str, Any]:
    return as_dict(await client.protocol.send_request_async("qwen/files/complete", {"query": query, **params}))


async def test_completion_is_fuzzy_and_respects_the_ignore_files(lsp: Any) -> None:
    found = await complete(lsp, "handl")
    assert [i["path"] for i in found["items"]] == ["src/api/handlers.py"] and found["truncated"] is False
    assert (await complete(lsp, "@sapih"))["items"][0]["path"] == "src/api/handlers.py"  # a subsequence, the @ ignored
    assert {"path": "src/api/", "kind": "folder"} in (await complete(lsp, "api"))["items"]
    assert (await complete(lsp, "private"))["items"] == []  # .qwenignore
    everything = [i["path"] for i in (await complete(lsp, "/", limit=500))["items"]]
    assert "src/api/handlers.py" in everything and not any(p.startswith(".git") or p.startswith("build/") and p != "build/" for p in everything)
    top = [i["path"] for i in (await complete(lsp, ""))["items"]]
    assert "src/" in top and "docs/" in top and "src/main.py" not in top
    assert len((await complete(lsp, "a", limit=2))["items"]) == 2


async def test_an_at_path_is_read_into_the_request_and_nothing_outside_or_ignored_is(lsp: Any, scripted: ScriptedOpenAI, workspace: Path) -> None:
    scripted.enqueue(Reply(chunks=["read it"]))
    await chat(lsp, "explain @src/api/handlers.py please")
    sent = str(scripted.chat_requests()[-1].body["messages"])
    assert "HANDLER-BODY" in sent and "Content from @src/api/handlers.py" in sent and "explain @src/api/handlers.py please" in sent
    for line in (
        "look at @../outside.txt", f"look at @{workspace.parent / 'outside.txt'}", "look at @link-out.txt", "look at @build/handlers.py",
        "look at @private.env", "look at @/etc/passwd", "look at @src/../../outside.txt", "look at @build", "look at @~/x",
    ):
        scripted.enqueue(Reply(chunks=["ok"]))
        await chat(lsp, line)
        assert SECRET not in str(scripted.chat_requests()[-1].body["messages"]), line
        assert "root:" not in str(scripted.chat_requests()[-1].body["messages"])
    scripted.enqueue(Reply(chunks=["ok"]))
    await chat(lsp, "the folder @src.")
    sent = str(scripted.chat_requests()[-1].body["messages"])
    assert "HANDLER-BODY" in sent and "print('main')" in sent


def test_a_hundred_thousand_files_are_listed_once_and_matched_per_keystroke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "big"
    for d in range(500):
        folder = root / f"pkg{d:03d}" / "mod"
        folder.mkdir(parents=True)
        for f in range(200):
            (folder / f"file{f:03d}.py").touch()
    (root / "pkg123" / "mod" / "needle_target.py").touch()
    started = time.perf_counter()
    listing = list_files(str(root))
    listed = time.perf_counter() - started
    assert len(listing.entries) == 500 * 202 + 1 and not listing.truncated
    started = time.perf_counter()
    best = match(listing, "needltarg", 10)
    matched = time.perf_counter() - started
    assert best[0] == "pkg123/mod/needle_target.py"
    with capsys.disabled():
        print(f"\n100k files: listed in {listed:.2f} s, one fuzzy query in {matched * 1000:.0f} ms")
    bounded = list_files(str(root), max_entries=1_000)
    assert bounded.truncated and len(bounded.entries) == 1_000
    assert os.path.isdir(root)


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"\x1f\x15\xc4\x89" + b"\x00" * 20


async def test_an_image_goes_as_an_image_part_to_a_model_that_takes_images_and_is_refused_otherwise(
    lsp: Any, scripted: ScriptedOpenAI, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    (workspace / "disguised.txt").write_bytes(PNG)  # by content, not by name
    from pygls.exceptions import JsonRpcException

    for line, params in (("what is in @shot.png", {}), ("and this", {"attachments": [{"uri": (workspace / "disguised.txt").as_uri()}]})):
        before = len(scripted.chat_requests())
        with pytest.raises(JsonRpcException) as refused:
            await chat(lsp, line, **params)
        assert "does not take images" in str(refused.value) and "/model" in str(refused.value)
        assert len(scripted.chat_requests()) == before  # nothing was sent

    await lsp.protocol.send_request_async("qwen/command", {"text": "/model qwen3-vl-plus"})
    scripted.enqueue(Reply(chunks=["a red pixel"]))
    await chat(lsp, "what is in @shot.png")
    [user] = [m for m in scripted.chat_requests()[-1].body["messages"] if m["role"] == "user"]
    images = [p for p in user["content"] if p["type"] == "image_url"]
    assert len(images) == 1 and images[0]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert any("[image: image/png" in p.get("text", "") for p in user["content"])


async def test_a_file_both_attached_and_mentioned_is_read_once(lsp: Any, scripted: ScriptedOpenAI, workspace: Path) -> None:
    scripted.enqueue(Reply(chunks=["ok"]))
    uri = (workspace / "src" / "api" / "handlers.py").as_uri()
    await chat(lsp, "explain @src/api/handlers.py", attachments=[{"uri": uri}])
    assert str(scripted.chat_requests()[-1].body["messages"]).count("HANDLER-BODY") == 1
