"""Path handling under ``..``, symlinks, Unicode normalisation and case tricks: nothing escapes its root.

Two roots are defended: the workspace, for the model's tool paths
(``agent/tools/workspace.py``), and the memory directories, for memory
writes (``memory/store.py`` with ``memory/paths.py``). Each property builds
one real tree with links out of the root, links inside it, a symlink loop,
an NFC and an NFD spelling of ``é`` and case variants, then throws paths
made of those pieces at the check. On Linux names are bytes: ``é`` (NFC)
and ``é`` (NFD) are two different files and ``A`` is not ``a``, so neither
may be treated as the other to reach outside.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qwen_lsp.files.containment import is_within
from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.agent.tools.base import ToolInputError
from qwen_lsp.agent.tools.workspace import resolve_in_workspace
from qwen_lsp.errors import EngineError
from qwen_lsp.memory.paths import realpath_nearest_existing
from qwen_lsp.memory.store import MemoryStore

NFC = "\u00e9"
NFD = "e\u0301"
_PIECES = ["..", ".", "", "a", "A", "f.txt", "F.TXT", "out", "in", "loop", "dangling", NFC, NFD, "x.md", "MEMORY.md", "~"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("paths")
    outside = base / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret")
    (outside / "x.md").write_text("secret")
    ws = base / "ws"
    for d in (ws / "a", ws / NFC):
        d.mkdir(parents=True)
        (d / "f.txt").write_text("inside")
    (ws / "f.txt").write_text("inside")
    os.symlink(outside, ws / "out")
    os.symlink(ws / "a", ws / "in")
    os.symlink("loop", ws / "loop")
    os.symlink(outside / "nothing-yet", ws / "dangling")
    return {"base": base, "ws": ws, "outside": outside}


_RAW = st.tuples(st.sampled_from(["", "/", "ws/"]), st.lists(st.sampled_from(_PIECES), max_size=6)).map(
    lambda parts: parts[0] + "/".join(parts[1])
)


@settings(max_examples=300)
@given(raw=_RAW)
def test_a_tool_path_resolves_inside_the_workspace_or_is_refused(tree: dict[str, Path], raw: str) -> None:
    ws = tree["ws"]
    text = str(ws) + "/" + raw[3:] if raw.startswith("ws/") else raw
    ctx = ToolContext(workspace_root=ws, cwd=ws / "a")
    try:
        resolved = resolve_in_workspace(text, ctx)
    except ToolInputError as exc:
        assert str(exc)
        return
    real_ws = ws.resolve()
    assert resolved == real_ws or resolved.is_relative_to(real_ws)
    assert Path(os.path.realpath(resolved)) == resolved  # no link left to follow later
    assert not Path(os.path.realpath(resolved)).is_relative_to(tree["outside"].resolve())


def lexical_within(root: str, path: str) -> bool:
    norm_root = posixpath.normpath(root)
    norm = posixpath.normpath(path)
    return norm == norm_root or norm.startswith(norm_root.rstrip("/") + "/")


@settings(max_examples=300)
@given(root=st.lists(st.sampled_from(["m", "M", NFC, NFD, "mx"]), min_size=1, max_size=3), rest=st.lists(st.sampled_from(_PIECES + ["m", "mx"]), max_size=6))
def test_memory_containment_is_lexical_and_exact(root: list[str], rest: list[str]) -> None:
    root_path = "/" + "/".join(root)
    path = root_path + "/" + "/".join(rest)
    assert is_within(Path(root_path), Path(path)) is lexical_within(root_path, path)


@settings(max_examples=200)
@given(rest=st.lists(st.sampled_from(_PIECES), max_size=5))
def test_realpath_nearest_existing_agrees_with_realpath_of_the_normalised_path(tree: dict[str, Path], rest: list[str]) -> None:
    """``..`` folds lexically first (Node's ``path.resolve``), then links resolve.

    ``ws/out/..`` is ``ws`` here, while the kernel would take ``out`` first
    and land in its target's parent; that is safe because every writer
    writes the same normalised path it checked (``writing.target_path``,
    ``MemoryStore.write_text``), as the memory-write property below checks.
    """
    path = tree["ws"] / "/".join(rest) if rest else tree["ws"]
    normalised = os.path.abspath(path)
    if "loop" in Path(normalised).parts:
        return  # a loop has no real path; realpath and ours each stop somewhere
    assert realpath_nearest_existing(path) == Path(os.path.realpath(normalised))


@pytest.fixture(scope="module")
def store(tree: dict[str, Path]) -> MemoryStore:
    repo = tree["base"] / "repo"
    (repo / ".git").mkdir(parents=True)
    memory = MemoryStore(repo, home=tree["base"] / "home", env={"QWEN_CODE_MEMORY_LOCAL": "1"})
    root = memory.root("project")
    (root / "a").mkdir(parents=True)
    os.symlink(tree["outside"], root / "out")
    os.symlink(root / "a", root / "in")
    os.symlink("loop", root / "loop")
    os.symlink(tree["outside"] / "x.md", root / "x.md")  # a leaf link out: replaced, never written through
    return memory


@settings(max_examples=200)
@given(rest=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=5))
def test_a_memory_write_lands_inside_its_root_or_is_refused(tree: dict[str, Path], store: MemoryStore, rest: list[str]) -> None:
    root = store.root("project")
    target = root / "/".join(rest)
    def outside_files() -> dict[str, bytes]:
        return {str(p): p.read_bytes() for d in (tree["outside"], tree["base"]) for p in d.iterdir() if p.is_file()}

    before = outside_files()
    try:
        store.write_text(target, "---\nname: n\ndescription: d\ntype: user\n---\nbody\n")
    except (EngineError, OSError):
        pass
    else:
        written = Path(os.path.realpath(os.path.abspath(target)))
        assert written.is_relative_to(Path(os.path.realpath(root)))
        assert written.read_text().endswith("body\n")
    assert outside_files() == before
