"""``qwen/attachments/paste`` over LSP: a pasted image is written to ``~/.qwen/tmp/clipboard`` (never the
project) under a name the server chose, goes to an image-taking model as an image part and is refused
for another; and that folder opens to a chat only the files this server wrote there, as written."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException
from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, running_server
from qwen_lsp.context.attachments import MAX_IMAGE_BYTES
from qwen_lsp.context.clipboard import CLEANUP_COUNT, MAX_IMAGES, clipboard_dir, remove_old_images

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"\x1f\x15\xc4\x89" + b"\x00" * 20
SECRET = b"TOP-SECRET-CANARY"
SECRET_PNG = PNG + SECRET  # a file a client must never get sent, even though it is an image


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "main.py").write_text("print('main')\n")
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url) as client:
        yield client


async def paste(client: Any, data: bytes | str) -> dict[str, Any]:
    text = data if isinstance(data, str) else base64.b64encode(data).decode("ascii")
    return as_dict(await client.protocol.send_request_async("qwen/attachments/paste", {"data": text}))


def clipboard(home: Path) -> Path:
    return home / ".qwen" / "tmp" / "clipboard"


async def image_model(client: Any) -> None:
    await client.protocol.send_request_async("qwen/command", {"text": "/model qwen3-vl-plus"})


def sent_user_message(scripted: ScriptedOpenAI) -> list[dict[str, Any]]:
    [user] = [m for m in scripted.chat_requests()[-1].body["messages"] if m["role"] == "user"]
    return user["content"]


async def test_a_pasted_image_is_saved_in_the_clipboard_folder_and_sent_as_an_image_part(
    lsp: Any, scripted: ScriptedOpenAI, home: Path, workspace: Path
) -> None:
    before = set(workspace.rglob("*"))
    saved = await paste(lsp, PNG)
    path = Path(saved["path"])
    assert path.parent == clipboard(home).resolve()
    assert re.fullmatch(r"clipboard-\d+-\d+\.png", saved["name"]) and path.name == saved["name"]
    assert saved["bytes"] == len(PNG) and path.read_bytes() == PNG
    assert set(workspace.rglob("*")) == before  # nothing written into the project

    await image_model(lsp)
    scripted.enqueue(Reply(chunks=["a red pixel"]))
    await chat(lsp, "what is this?", attachments=[{"uri": path.as_uri()}])
    content = sent_user_message(scripted)
    images = [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
    assert images == ["data:image/png;base64," + base64.b64encode(PNG).decode("ascii")]
    assert any(f"@{path}" in p.get("text", "") and "[image: image/png" in p.get("text", "") for p in content)


async def test_a_pasted_image_is_refused_before_anything_is_sent_to_a_model_that_takes_no_images(
    lsp: Any, scripted: ScriptedOpenAI
) -> None:
    saved = await paste(lsp, PNG)
    with pytest.raises(JsonRpcException) as refused:
        await chat(lsp, "what is this?", attachments=[{"uri": Path(saved["path"]).as_uri()}])
    assert "does not take images" in str(refused.value) and saved["name"] in str(refused.value) and "/model" in str(refused.value)
    assert refused.value.code == -32602
    assert scripted.chat_requests() == []


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"just some text, not an image", "not a PNG, JPEG, GIF or WebP image"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * MAX_IMAGE_BYTES, "at most 10 MB"),
        ("not base64 at all!", "not base64"),
    ],
    ids=["not-an-image", "over-10-MB", "not-base64"],
)
async def test_what_is_not_a_small_enough_image_is_refused_and_nothing_is_written(lsp: Any, home: Path, data: bytes | str, says: str) -> None:
    with pytest.raises(JsonRpcException) as refused:
        await paste(lsp, data)
    assert says in str(refused.value) and refused.value.code == -32602
    assert not clipboard(home).exists() or list(clipboard(home).iterdir()) == []


async def test_the_type_comes_from_the_bytes_whatever_the_client_says(lsp: Any) -> None:
    gif = b"GIF89a" + b"\x01\x00\x01\x00" + b"\x00" * 20
    saved = await lsp.protocol.send_request_async("qwen/attachments/paste", {"data": base64.b64encode(gif).decode(), "mimeType": "image/png", "name": "../../evil.png"})
    assert re.fullmatch(r"clipboard-\d+-\d+\.gif", saved.name) and Path(saved.path).parent.name == "clipboard"


def _plant(home: Path, tmp_path: Path) -> Path:
    """A secret image outside the workspace, and the clipboard folder existing."""
    secret = tmp_path / "secret.png"
    secret.write_bytes(SECRET_PNG)
    clipboard(home).mkdir(parents=True, exist_ok=True)
    return secret


async def test_no_file_the_server_did_not_write_is_read_from_outside_the_workspace(
    lsp: Any, scripted: ScriptedOpenAI, home: Path, tmp_path: Path
) -> None:
    secret = _plant(home, tmp_path)
    saved = Path((await paste(lsp, PNG))["path"])
    folder = saved.parent
    planted = folder / "clipboard-1-0.png"  # a name the server never wrote
    planted.write_bytes(SECRET_PNG)
    link = folder / "clipboard-2-0.png"
    link.symlink_to(secret)
    named = [planted, link, Path(f"{folder}/../../../../secret.png"), Path(f"{folder}/sub/../{saved.name}"), secret]
    await image_model(lsp)
    for path in named:
        scripted.enqueue(Reply(chunks=["ok"]))
        await chat(lsp, "what is this?", attachments=[{"uri": path.as_uri()}])
        content = sent_user_message(scripted)
        assert SECRET.decode() not in str(content) and base64.b64encode(SECRET_PNG).decode()[:40] not in str(content)
        assert not [p for p in content if p["type"] == "image_url"]
        assert any("[not attached: it resolves outside the workspace]" in p.get("text", "") for p in content), path


@pytest.mark.parametrize("how", ["replaced", "rewritten-in-place", "made-a-link", "folder-made-a-link"])
async def test_a_pasted_file_changed_after_it_was_written_is_refused_before_anything_is_sent(
    lsp: Any, scripted: ScriptedOpenAI, home: Path, tmp_path: Path, how: str
) -> None:
    secret = _plant(home, tmp_path)
    saved = Path((await paste(lsp, PNG))["path"])
    if how == "replaced":
        other = saved.with_name("other")
        other.write_bytes(SECRET_PNG)
        os.replace(other, saved)
    elif how == "rewritten-in-place":
        with open(saved, "r+b") as f:
            f.write(SECRET_PNG)
    elif how == "made-a-link":
        saved.unlink()
        saved.symlink_to(secret)
    else:
        moved = tmp_path / "elsewhere"
        moved.mkdir()
        (moved / saved.name).write_bytes(SECRET_PNG)
        saved.parent.rename(tmp_path / "old-clipboard")
        saved.parent.symlink_to(moved)
    await image_model(lsp)
    with pytest.raises(JsonRpcException) as refused:
        await chat(lsp, "what is this?", attachments=[{"uri": saved.as_uri()}])
    assert "paste it again" in str(refused.value) and refused.value.code == -32602
    assert scripted.chat_requests() == []


async def test_a_link_where_the_clipboard_folder_should_be_is_never_written_through(lsp: Any, home: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (home / ".qwen" / "tmp").mkdir(parents=True, exist_ok=True)
    clipboard(home).symlink_to(target)
    with pytest.raises(JsonRpcException) as refused:
        await paste(lsp, PNG)
    assert "could not be saved" in str(refused.value) and refused.value.data["kind"] == "engine"
    assert list(target.iterdir()) == []


async def test_past_a_hundred_images_the_fifty_least_recently_read_are_deleted(lsp: Any, home: Path) -> None:
    folder = clipboard(home)
    folder.mkdir(parents=True)
    for i in range(MAX_IMAGES):
        old = folder / f"clipboard-{i}-0.png"
        old.write_bytes(PNG)
        os.utime(old, (1_000_000 + i, 1_000_000 + i))
    (folder / "notes.txt").write_text("not an image of the clipboard: kept")
    saved = await paste(lsp, PNG)
    left = sorted(p.name for p in folder.iterdir())
    assert saved["name"] in left and "notes.txt" in left
    assert sorted(int(n.split("-")[1]) for n in left if n.startswith("clipboard-") and n != saved["name"]) == list(range(CLEANUP_COUNT, MAX_IMAGES))


def test_cleanup_deletes_links_and_never_what_they_point_at(tmp_path: Path) -> None:
    folder = tmp_path / "clipboard"
    folder.mkdir()
    kept = tmp_path / "kept.png"
    kept.write_bytes(PNG)
    for i in range(MAX_IMAGES + 1):
        path = folder / f"clipboard-{i}-0.png"
        if i == 0:
            path.symlink_to(kept)
        else:
            path.write_bytes(PNG)
        os.utime(path, (1_000_000 + i, 1_000_000 + i), follow_symlinks=False)
    removed = remove_old_images(folder)
    assert len(removed) == CLEANUP_COUNT and folder / "clipboard-0-0.png" in removed
    assert kept.read_bytes() == PNG and len(list(folder.iterdir())) == MAX_IMAGES + 1 - CLEANUP_COUNT
    assert remove_old_images(folder) == []  # at or under the limit: nothing


def test_the_clipboard_folder_follows_qwen_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    assert clipboard_dir() == (tmp_path / "home").resolve() / ".qwen" / "tmp" / "clipboard"
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "elsewhere" / "qwen"))
    assert clipboard_dir() == (tmp_path / "elsewhere" / "qwen").resolve() / "tmp" / "clipboard"
