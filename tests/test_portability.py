"""The package runs where the POSIX-only parts of the standard library are missing (docs/architecture.md, "Portability").

``tests/support/without_posix/sitecustomize.py`` removes ``fcntl``,
``termios``, ``os.O_NONBLOCK``, ``os.O_NOFOLLOW``, ``os.O_PATH`` and
``os.pread`` before anything is imported; each test runs a real process
with it on ``PYTHONPATH``: the CLI's one-shot chat, the server's start and a
chat over LSP, and every fallback of the seam (``files/portability.py``)
keeping its property.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, initialize, server_env, start_client

WITHOUT_POSIX = str(Path(__file__).resolve().parent / "support" / "without_posix")


def _env(home: Path, base_url: str | None) -> dict[str, str]:
    return server_env(home, base_url, PYTHONPATH=WITHOUT_POSIX)


def test_the_seam_really_is_missing_in_those_processes(tmp_path: Path) -> None:
    probe = "import os, sys; print(hasattr(os, 'O_NONBLOCK'), hasattr(os, 'O_NOFOLLOW'), hasattr(os, 'pread')); import fcntl"
    out = subprocess.run([sys.executable, "-c", probe], env=_env(tmp_path, None), capture_output=True, text=True)
    assert out.stdout.strip() == "False False False" and ("ModuleNotFoundError" in out.stderr or "ImportError" in out.stderr)


def test_the_cli_one_shot_answers(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["hello back"]))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "QWEN.md").write_text("Project rules.\n")
    out = subprocess.run([sys.executable, "-m", "qwen_lsp", "chat", "hello"], cwd=ws, env=_env(home, scripted.base_url), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("hello back")
    assert "Project rules." in json.dumps(scripted.chat_requests()[0].body)


async def test_the_server_starts_and_chats(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["served"]))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "QWEN.md").write_text("Server rules.\n")
    client, _rec = await start_client(_env(home, scripted.base_url))
    try:
        await initialize(client, ws, None)
        assert as_dict(await chat(client, "hi"))["text"] == "served"
    finally:
        await client.shutdown_session()
        await client.stop()
    assert "Server rules." in json.dumps(scripted.chat_requests()[0].body)


FALLBACKS = textwrap.dedent(
    """
    import errno, os, sys, threading
    from pathlib import Path
    from qwen_lsp.files import portability as p
    from qwen_lsp.files.nofollow_write import PathChanged, write_text_nofollow
    from qwen_lsp.files.reading import read_bytes
    root = Path(sys.argv[1])
    assert not p.O_NONBLOCK and not p.O_NOFOLLOW and not p.DIR_FD_WALK
    (root / "file").write_text("data")
    (root / "link").symlink_to(root / "file")
    os.mkfifo(root / "fifo")
    assert read_bytes(root / "link") == b"data"
    for target, code in (("link", errno.ELOOP), ("fifo", errno.EINVAL)):
        try:
            read_bytes(root / target, follow_links=target != "link")
        except OSError as exc:
            assert exc.errno == code, (target, exc)
        else:
            raise AssertionError(target)
    (root / "real").mkdir()
    (root / "swapped").symlink_to(root / "real")
    try:
        write_text_nofollow(root / "swapped" / "x.txt", "no")
    except PathChanged:
        pass
    else:
        raise AssertionError("wrote through a link")
    assert not (root / "real" / "x.txt").exists()
    write_text_nofollow(root / "new" / "x.txt", "yes")
    assert (root / "new" / "x.txt").read_text() == "yes"
    fd1 = os.open(root / "lock", os.O_RDWR | os.O_CREAT)
    fd2 = os.open(root / "lock", os.O_RDWR)
    assert p.try_lock(fd1) and not p.try_lock(fd2)
    p.unlock(fd1)
    assert p.try_lock(fd2)
    print("ok")
    """
)


def test_every_fallback_keeps_its_property(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", FALLBACKS, str(tmp_path)], env={**os.environ, "PYTHONPATH": WITHOUT_POSIX}, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr
