"""Crash safety and two writers: what the cross-process lock and atomic replacement promise."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

from qwen_lsp.memory.scan import parse_memory
from qwen_lsp.memory.store import MemoryStore

WRITER = Path(__file__).with_name("writer_process.py")
_LINK = re.compile(r"^- \[[^\]]*\]\(([^)]*)\)", re.MULTILINE)


def index_targets(index_text: str) -> list[str]:
    return [unquote(m.group(1)) for m in _LINK.finditer(index_text)]


def test_kill_during_writes_leaves_whole_files_and_an_index_of_existing_files(tmp_path: Path):
    project, home = tmp_path / "repo", tmp_path / "home"
    project.mkdir()
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), "churn", str(project), str(home)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        for _ in range(25):  # let it get well into the loop, then kill it mid-stride
            assert proc.stdout.readline(), "the writer died on its own"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL

    store = MemoryStore(project, home=home, env={})
    root = store.root("project")
    for path in root.rglob("*.md"):
        if path.name == "MEMORY.md":
            continue
        parsed = parse_memory(path.read_text(encoding="utf-8"))
        assert parsed is not None, f"{path} is not a whole memory file"
        if path.name == "churn.md":
            header, _, filler = parsed.body.partition("\n")
            stamp = re.fullmatch(r"version (\d+) sha256 ([0-9a-f]{64})", header)
            assert stamp, "torn churn.md header"
            version, digest = stamp.groups()
            assert hashlib.sha256(filler.encode()).hexdigest() == digest, "torn churn.md"
            assert parsed.description == f"version {version}"
    scanned = {d.relative_path for d in store.scan("project")}
    assert all(not name.endswith(".tmp") for name in scanned)
    listed = index_targets(store.index_text("project"))
    assert listed and all((root / target).is_file() for target in listed)
    # at most the one write in flight is missing from the index; a rebuild lists everything
    assert len(scanned - set(listed)) <= 1
    store.rebuild_index("project")
    assert set(index_targets(store.index_text("project"))) == scanned


def test_two_processes_remembering_at_once_lose_nothing(tmp_path: Path):
    project, home = tmp_path / "repo", tmp_path / "home"
    (project / ".git").mkdir(parents=True)
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, str(WRITER), "remember", str(project), str(home), tag, "50", str(go)])
        for tag in ("alpha", "beta")
    ]
    go.touch()
    for proc in procs:
        assert proc.wait(timeout=110) == 0
    store = MemoryStore(project, home=home, env={})
    docs = store.scan("project")
    assert len(docs) == 100
    bodies = {d.body for d in docs}
    assert bodies == {f"Shared convention {i}\n\nwritten by {tag}" for i in range(50) for tag in ("alpha", "beta")}
    listed = index_targets(store.index_text("project"))
    assert len(listed) == 100 and set(listed) == {d.relative_path for d in docs}
    assert store.rebuild_index("project") is False  # the last writer left the index already up to date
    assert not [p for p in os.listdir(store.root("project") / "feedback") if not p.endswith(".md")]
