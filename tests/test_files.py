"""No user-named path can hang the server: FIFOs, sockets and devices are refused, not read."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from pathlib import Path

import pytest

from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.agent.tools import read_only_tools
from qwen_lsp.context import ContextAssembler, ContextSettings
from qwen_lsp.files.reading import read_bytes


def finishes(fn, timeout: float = 10.0):
    """Run ``fn`` on a thread; fail (instead of hanging the suite) if it blocks."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "blocked on a FIFO"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


def test_read_bytes_refuses_a_fifo_and_a_device_but_reads_files(tmp_path: Path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError) as info:
        finishes(lambda: read_bytes(fifo))
    assert info.value.errno == errno.EINVAL and "not a regular file" in str(info.value)
    with pytest.raises(OSError):
        finishes(lambda: read_bytes("/dev/zero"))
    big = tmp_path / "big"
    big.write_bytes(b"x" * 200_000)
    assert read_bytes(big) == b"x" * 200_000
    with pytest.raises(IsADirectoryError):
        read_bytes(tmp_path)


def test_a_fifo_import_or_context_file_is_reported_not_waited_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    os.mkfifo(repo / "pipe")
    os.mkfifo(repo / "sub" / "AGENTS.md")
    (repo / "QWEN.md").write_text("root @./pipe done\n")
    assembler = ContextAssembler(repo / "sub", ContextSettings(model="m"), env={})
    prompt = finishes(assembler.system_prompt)
    assert "<!-- Import failed: ./pipe - not a regular file" in prompt and "done" in prompt
    assert any("AGENTS.md" in p.path and "not a regular file" in p.message for p in assembler.problems)


def test_read_file_tool_refuses_a_fifo(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe")
    tool = next(t for t in read_only_tools() if t.name == "read_file")
    ctx = ToolContext(workspace_root=tmp_path, cwd=tmp_path)
    result = finishes(lambda: asyncio.run(tool.run({"file_path": str(tmp_path / "pipe")}, ctx)))
    assert result.is_error and "not a regular file" in result.output


def test_grep_and_glob_walk_past_a_fifo(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe.txt")
    (tmp_path / "a.txt").write_text("needle here\n")
    tools = {t.name: t for t in read_only_tools()}
    ctx = ToolContext(workspace_root=tmp_path, cwd=tmp_path)
    grep = finishes(lambda: asyncio.run(tools["grep_search"].run({"pattern": "needle"}, ctx)))
    assert not grep.is_error and "a.txt" in grep.output
    found = finishes(lambda: asyncio.run(tools["glob"].run({"pattern": "*.txt"}, ctx)))
    assert not found.is_error and "a.txt" in found.output


@pytest.mark.parametrize("size", [0, 1, 4095, 65_535, 65_536, 65_537, 200_000])
def test_read_bytes_reads_every_size_whole_and_in_one_piece(tmp_path: Path, size: int):
    """Small files take the seek-sized path, larger and empty ones the fstat path: both give every byte."""
    data = os.urandom(size)
    path = tmp_path / "f"
    path.write_bytes(data)
    assert read_bytes(path) == data
    assert read_bytes(path, max_size=size) == data
    if size:
        with pytest.raises(OSError) as info:
            read_bytes(path, max_size=size - 1)
        assert info.value.errno == errno.EFBIG


def test_read_bytes_refuses_devices_whatever_they_say_about_their_size(tmp_path: Path):
    """A device seeks to 0 (``/dev/null``, ``/dev/zero``) and a FIFO cannot seek: neither passes as a small file."""
    for device in ("/dev/null", "/dev/zero"):
        with pytest.raises(OSError) as info:
            finishes(lambda device=device: read_bytes(device, max_size=1 << 20))
        assert info.value.errno == errno.EINVAL, device
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(OSError) as info:
        finishes(lambda: read_bytes(tmp_path / "pipe", max_size=100))
    assert info.value.errno == errno.EINVAL


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_read_bytes_reads_a_file_whose_size_says_nothing():
    """``/proc`` files report size 0 and are read until a read returns nothing."""
    assert b"Name:" in read_bytes("/proc/self/status")
