"""Discovery order and content of QWEN.md / AGENTS.md layers (Qwen Code 0.24's ``memoryDiscovery.ts``)."""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qwen_lsp.context import discover
from qwen_lsp.context.discovery import MAX_CONTEXT_FILE_BYTES, context_file_paths
from qwen_lsp.context.prompts import is_git_repository
from qwen_lsp.context.text import GitAncestry, relative_path



def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def rel(paths: list[str], base: Path) -> list[str]:
    return [os.path.relpath(p, base) for p in paths]


def paths_for(cwd: Path, home: Path, trusted: bool = True) -> list[str]:
    found, _root, _scanned = context_file_paths(
        str(cwd), ("QWEN.md", "AGENTS.md"), home=str(home), global_dir=str(home / ".qwen"), trusted=trusted
    )
    return rel(found, home)


def test_grouped_by_filename_outermost_first_stop_dir_included(home: Path) -> None:
    repo = home / "ws" / "repo"
    (repo / ".git").mkdir(parents=True)
    for p in ["ws/QWEN.md", "ws/repo/QWEN.md", "ws/repo/a/QWEN.md", "ws/repo/AGENTS.md", "ws/repo/a/b/AGENTS.md", ".qwen/QWEN.md", ".qwen/AGENTS.md", "QWEN.md"]:
        write(home / p, p)
    write(repo / "a/b/c/QWEN.md", "below cwd is never read")
    assert paths_for(repo / "a" / "b", home) == [
        ".qwen/QWEN.md",
        "ws/QWEN.md",  # the git root's parent is the stop dir, and it is included
        "ws/repo/QWEN.md",
        "ws/repo/a/QWEN.md",
        ".qwen/AGENTS.md",
        "ws/repo/AGENTS.md",
        "ws/repo/a/b/AGENTS.md",
    ]


def test_no_git_root_scans_up_to_home_parent(home: Path) -> None:
    write(home / "QWEN.md", "home")
    write(home / "p" / "QWEN.md", "p")
    assert paths_for(home / "p" / "q", home) == ["QWEN.md", "p/QWEN.md"]


def test_home_as_cwd_reads_only_home_and_global(home: Path) -> None:
    write(home / ".qwen" / "QWEN.md", "g")
    write(home / "QWEN.md", "h")
    write(home / "AGENTS.md", "a")
    assert paths_for(home, home) == [".qwen/QWEN.md", "QWEN.md", "AGENTS.md"]


def test_git_file_counts_as_root_and_local_slot(home: Path) -> None:
    wt = home / "ws" / "wt"
    write(wt / ".git", "gitdir: /elsewhere\n")
    write(home / "ws" / "QWEN.md", "stop dir")
    write(home / "QWEN.md", "above the stop dir")
    write(wt / ".qwen" / "QWEN.local.md", "local")
    write(wt / "AGENTS.md", "agents")
    assert paths_for(wt / "src", home) == ["ws/QWEN.md", "ws/wt/AGENTS.md", "ws/wt/.qwen/QWEN.local.md"]


def test_local_slot_needs_a_real_git_root(home: Path) -> None:
    write(home / "p" / ".qwen" / "QWEN.local.md", "local")
    assert paths_for(home / "p", home) == []


def test_symlinked_file_is_deduped_by_real_path(home: Path) -> None:
    repo = home / "r"
    (repo / ".git").mkdir(parents=True)
    write(repo / "QWEN.md", "root")
    (repo / "sub").mkdir()
    (repo / "sub" / "QWEN.md").symlink_to(repo / "QWEN.md")
    assert paths_for(repo / "sub", home) == ["r/QWEN.md"]


def test_same_bytes_in_distinct_files_are_both_kept(home: Path) -> None:
    """Equal contents are not a duplicate: only one real path is (a hard link has its own)."""
    repo = home / "r"
    (repo / ".git").mkdir(parents=True)
    write(repo / "QWEN.md", "same words")
    write(repo / "sub" / "QWEN.md", "same words")
    write(repo / "AGENTS.md", "linked")
    os.link(repo / "AGENTS.md", repo / "sub" / "AGENTS.md")
    assert paths_for(repo / "sub", home) == ["r/QWEN.md", "r/sub/QWEN.md", "r/AGENTS.md", "r/sub/AGENTS.md"]


def test_unreadable_paths_to_one_directory_are_deduped(home: Path) -> None:
    repo = home / "r"
    (repo / ".git").mkdir(parents=True)
    (repo / "QWEN.md").mkdir()
    (repo / "sub").mkdir()
    (repo / "sub" / "QWEN.md").symlink_to(repo / "QWEN.md")
    assert paths_for(repo / "sub", home) == ["r/QWEN.md"]
    found = discover(str(repo / "sub"), ("QWEN.md",), home=str(home), global_dir=str(home / ".qwen"))
    assert [f.display for f in found.files] == ["../QWEN.md"] and found.text() == ""
    assert [p.message for p in found.problems] == ["could not read context file: Is a directory"]


def test_git_symlink_makes_a_repository_but_no_project_root(home: Path) -> None:
    """``isGitRepository`` follows a ``.git`` symlink; ``findProjectRoot`` (lstat) does not count it."""
    real_git = home / "elsewhere" / "gitdir"
    real_git.mkdir(parents=True)
    linked = home / "linked" / "a"
    linked.mkdir(parents=True)
    (home / "linked" / ".git").symlink_to(real_git)
    dangling = home / "dangling" / "a"
    dangling.mkdir(parents=True)
    (home / "dangling" / ".git").symlink_to(home / "nowhere")
    for ask_root_first in (True, False):  # one memo answers both questions, in either order
        walk = GitAncestry()
        if ask_root_first:
            assert walk.project_root(str(linked)) is None
        assert walk.in_git(str(linked)) and walk.in_git(str(linked.parent))
        assert walk.project_root(str(linked)) is None
        assert not walk.in_git(str(dangling)) and walk.project_root(str(dangling)) is None
    assert is_git_repository(str(linked)) and not is_git_repository(str(dangling))
    (home / "linked" / "a" / ".git").mkdir()
    walk = GitAncestry()
    assert walk.project_root(str(linked)) == str(linked) and walk.in_git(str(linked))
    assert context_file_paths(
        str(linked), ("QWEN.md",), home=str(home), global_dir=str(home / ".qwen"), trusted=True
    )[1] == str(linked)


def test_untrusted_folder_gets_global_files_only(home: Path) -> None:
    repo = home / "r"
    (repo / ".git").mkdir(parents=True)
    write(repo / "QWEN.md", "project")
    write(repo / ".qwen" / "QWEN.local.md", "local")
    write(home / ".qwen" / "QWEN.md", "global")
    assert paths_for(repo, home, trusted=False) == [".qwen/QWEN.md"]


def test_blocks_relative_to_cwd_blank_dropped_bad_utf8_replaced(home: Path, caplog: pytest.LogCaptureFixture) -> None:
    repo = home / "r"
    (repo / ".git").mkdir(parents=True)
    write(repo / "QWEN.md", "\ufeff  root text \n\n")
    write(repo / "a" / "QWEN.md", "  \n\t\n")
    write(repo / "a" / "AGENTS.md", b"bad \xff\xfe x \xc3( y")
    found = discover(str(repo / "a"), ("QWEN.md", "AGENTS.md"), home=str(home), global_dir=str(home / ".qwen"))
    assert found.text() == (
        "--- Context from: ../QWEN.md ---\nroot text\n--- End of Context from: ../QWEN.md ---\n\n"
        "--- Context from: AGENTS.md ---\nbad \ufffd\ufffd x \ufffd( y\n--- End of Context from: AGENTS.md ---"
    )
    assert any("not valid UTF-8" in p.message for p in found.problems)
    assert "not valid UTF-8" in caplog.text


def test_unreadable_context_file_is_a_problem_not_an_exception(home: Path) -> None:
    repo = home / "r"
    (repo / ".git").mkdir(parents=True)
    (repo / "QWEN.md").mkdir()  # readable name, but reading it fails
    write(repo / "AGENTS.md", "ok")
    found = discover(str(repo), ("QWEN.md", "AGENTS.md"), home=str(home), global_dir=str(home / ".qwen"))
    assert found.text() == "--- Context from: AGENTS.md ---\nok\n--- End of Context from: AGENTS.md ---"
    assert [Path(p.path).name for p in found.problems] == ["QWEN.md"]


def _searchable_temp_dir() -> str:
    """A scratch directory every user can pass through (``TMPDIR`` may be private), so an unprivileged child reaches the tree."""
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        path = Path(candidate).resolve()
        if path.is_dir() and all(p.stat().st_mode & 0o001 for p in (path, *path.parents)):
            return str(path)
    pytest.fail("no scratch directory that every user can pass through")


def _without_root(job):
    """``job()``, run where permissions apply: as root (who reads every file) in a forked child turned ``nobody``."""
    if os.geteuid() != 0:
        return job()
    job()  # once as root first: anything it imports on first use is loaded before the child cannot read the checkout
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, run, send the result back, leave without cleanup
        status = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            os.write(write_end, pickle.dumps(job()))
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        sent = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0 and sent, "the unprivileged child failed"
    return pickle.loads(sent)


def test_a_context_file_that_exists_unreadable_is_reported_and_skipped() -> None:
    """Qwen Code lists only what ``access(R_OK)`` passes; an unreadable file (or a link to one) is skipped, with a word from us."""
    top = Path(tempfile.mkdtemp(prefix="qwen-unreadable-", dir=_searchable_temp_dir()))
    try:
        top.chmod(0o755)
        repo = top / "r"
        (repo / ".git").mkdir(parents=True)
        (repo / "sub").mkdir()
        locked = write(repo / "QWEN.md", "secret layer")
        locked.chmod(0)
        (repo / "sub" / "QWEN.md").symlink_to(locked)
        write(repo / "AGENTS.md", "ok")
        (top / ".qwen").mkdir()
        for d in (repo, repo / ".git", repo / "sub", top / ".qwen"):
            d.chmod(0o755)
        (repo / "AGENTS.md").chmod(0o644)

        def run() -> tuple[str, list[tuple[str, str]]]:
            found = discover(str(repo / "sub"), ("QWEN.md", "AGENTS.md"), home=str(top), global_dir=str(top / ".qwen"))
            return found.text(), [(os.path.relpath(p.path, top), p.message) for p in found.problems]

        text, problems = _without_root(run)
    finally:
        (top / "r" / "QWEN.md").chmod(0o644)
        shutil.rmtree(top)
    assert text == "--- Context from: ../AGENTS.md ---\nok\n--- End of Context from: ../AGENTS.md ---"
    assert problems == [
        ("r/QWEN.md", "exists but cannot be read; skipped"),
        ("r/sub/QWEN.md", "exists but cannot be read; skipped"),
    ]


def test_a_huge_context_file_is_a_problem_not_a_read(home: Path) -> None:
    """A cloned repository's 4 GiB QWEN.md must not be loaded into every turn."""
    repo = home / "r"
    (repo / ".git").mkdir(parents=True)
    with open(repo / "QWEN.md", "wb") as handle:  # sparse: no disk used
        handle.truncate(MAX_CONTEXT_FILE_BYTES + 1)
    write(repo / "AGENTS.md", "ok")
    found = discover(str(repo), ("QWEN.md", "AGENTS.md"), home=str(home), global_dir=str(home / ".qwen"))
    assert found.text() == "--- Context from: AGENTS.md ---\nok\n--- End of Context from: AGENTS.md ---"
    assert [(Path(p.path).name, "larger than" in p.message) for p in found.problems] == [("QWEN.md", True)]


_ABSOLUTE = st.builds(
    lambda lead, parts: os.path.normpath(lead + "/".join(parts)),
    st.sampled_from(["/", "//", "///"]),
    st.lists(st.sampled_from(["a", "b", "ab", "QWEN.md", "..", "."]), max_size=6),
)


@given(_ABSOLUTE, _ABSOLUTE)
def test_relative_path_is_node_path_relative(path: str, start: str) -> None:
    """Display paths: the shortcut for files at or above cwd agrees with the general walk (``relpath``)."""
    assert relative_path(path, start) == os.path.relpath(path, start)
