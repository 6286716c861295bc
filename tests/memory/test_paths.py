"""Where each memory scope lives (Qwen Code's ``memory/paths.ts``) and which paths belong to which scope."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from qwen_lsp.files.containment import is_within
from qwen_lsp.memory.paths import (
    is_team_path,
    memory_base,
    memory_paths,
    realpath_nearest_existing,
    resolve_leaf_symlink,
)
from qwen_lsp.memory.store import MemoryStore


def sanitized(path: Path) -> str:
    """Qwen Code's sanitizeCwd, restated: every character outside [A-Za-z0-9] becomes '-'."""
    return re.sub("[^A-Za-z0-9]", "-", str(path))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "my_repo.v2"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "pkg").mkdir(parents=True)
    return root


def test_default_base_is_home_dot_qwen_and_project_dir_is_the_sanitized_git_root(tmp_path: Path, repo: Path):
    home = tmp_path / "home"
    paths = memory_paths(repo / "src" / "pkg", home=home, env={})
    assert paths.base == home / ".qwen"
    assert sanitized(repo).endswith("-work-my-repo-v2")
    assert paths.project == home / ".qwen" / "projects" / sanitized(repo) / "memory"
    assert paths.state_dir == home / ".qwen" / "projects" / sanitized(repo)
    assert paths.user == home / ".qwen" / "memories"
    assert paths.team == repo / ".qwen" / "team-memory"


def test_without_git_the_project_root_itself_anchors_both(tmp_path: Path):
    project = tmp_path / "plain"
    project.mkdir()
    paths = memory_paths(project, home=tmp_path / "h", env={})
    assert paths.repo_root == project
    assert paths.team == project / ".qwen" / "team-memory"
    assert paths.project.parent.name == sanitized(project)


def test_a_git_file_marks_a_worktree_root_which_is_not_collapsed(tmp_path: Path):
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")
    assert memory_paths(worktree, home=tmp_path, env={}).repo_root == worktree


def test_symlinked_project_path_is_kept_lexically_like_node_path_resolve(tmp_path: Path, repo: Path):
    link = tmp_path / "link"
    link.symlink_to(repo)
    paths = memory_paths(link, home=tmp_path / "h", env={})
    assert paths.repo_root == link
    assert paths.project.parent.name == sanitized(link)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"QWEN_CODE_MEMORY_BASE_DIR": "~/mem"}, "home/mem"),
        ({"QWEN_CODE_MEMORY_BASE_DIR": "~"}, "home"),
        ({"QWEN_CODE_MEMORY_BASE_DIR": "/abs/base", "QWEN_HOME": "/ignored"}, "/abs/base"),
        ({"QWEN_RUNTIME_DIR": "~/rt", "QWEN_HOME": "/ignored"}, "home/rt"),
        ({"QWEN_HOME": "~/qh"}, "home/qh"),
        ({"QWEN_HOME": "  "}, "home/.qwen"),
    ],
)
def test_memory_base_precedence_and_tilde_expansion(tmp_path: Path, env: dict[str, str], expected: str):
    home = tmp_path / "home"
    want = Path(expected) if expected.startswith("/") else tmp_path / expected
    assert memory_base(home, env) == want


def test_relative_base_dir_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    assert memory_base(tmp_path / "h", {"QWEN_CODE_MEMORY_BASE_DIR": "rel/base"}) == tmp_path / "rel" / "base"


def test_memory_local_puts_project_memory_in_the_project(tmp_path: Path, repo: Path):
    sub = repo / "src"
    paths = memory_paths(sub, home=tmp_path, env={"QWEN_CODE_MEMORY_LOCAL": "1"})
    assert paths.project == sub / ".qwen" / "memory"
    assert paths.state_dir == sub / ".qwen"
    assert paths.team == repo / ".qwen" / "team-memory"
    assert memory_paths(sub, home=tmp_path, env={"QWEN_CODE_MEMORY_LOCAL": "true"}).project != paths.project


@pytest.mark.parametrize(("value", "keyed_by_workspace"), [("workspace", True), (" Workspace ", True), ("git-root", False), ("", False), ("bogus", False)])
def test_project_scope_workspace_keys_project_memory_by_the_folder(tmp_path: Path, repo: Path, value: str, keyed_by_workspace: bool):
    """Qwen Code 0.24.4's QWEN_CODE_MEMORY_PROJECT_SCOPE: ``workspace`` keys by the folder opened, not its git root;
    team memory stays at the git root either way."""
    sub = repo / "src" / "pkg"
    paths = memory_paths(sub, home=tmp_path, env={"QWEN_CODE_MEMORY_PROJECT_SCOPE": value})
    assert paths.project == tmp_path / ".qwen" / "projects" / sanitized(sub if keyed_by_workspace else repo) / "memory"
    assert paths.team == repo / ".qwen" / "team-memory"


def test_store_exposes_the_same_roots(tmp_path: Path, repo: Path):
    store = MemoryStore(repo, home=tmp_path / "home", env={})
    assert store.root("user") == tmp_path / "home" / ".qwen" / "memories"
    assert store.root("team") == repo / ".qwen" / "team-memory"
    assert store.state_dir() == store.root("project").parent


def test_is_within_is_relative_based(tmp_path: Path):
    root = tmp_path / "r"
    assert is_within(root, root)
    assert is_within(root, root / "a" / "b.md")
    assert is_within(root, root / "a" / ".." / "c.md")
    assert not is_within(root, root / ".." / "r2" / "x.md")
    assert not is_within(root, tmp_path / "r-other" / "x.md")
    assert is_within(root, root / "..foo.md")  # a name starting with ".." is still inside


def test_scope_of_each_root(tmp_path: Path, repo: Path):
    store = MemoryStore(repo, home=tmp_path / "home", env={})
    assert store.scope_of(store.root("project") / "feedback" / "x.md") == "project"
    assert store.scope_of(store.root("user") / "user" / "x.md") == "user"
    assert store.scope_of(store.root("team") / "project" / "x.md") == "team"
    assert store.scope_of(repo / "src" / "x.md") is None


def test_dangling_leaf_symlink_chain_is_followed(tmp_path: Path, repo: Path):
    team = repo / ".qwen" / "team-memory"
    team.mkdir(parents=True)
    outside = tmp_path / "out"
    outside.mkdir()
    hop2 = outside / "hop2.md"
    hop2.symlink_to(team / "leak.md")  # dangling: leak.md does not exist
    decoy = outside / "decoy.md"
    decoy.symlink_to("hop2.md")  # relative, resolved against the link's real parent
    assert not decoy.exists()
    assert resolve_leaf_symlink(decoy) == team / "leak.md"
    paths = memory_paths(repo, home=tmp_path / "h", env={})
    assert is_team_path(decoy, paths)
    assert not is_team_path(outside / "plain.md", paths)


def test_symlink_loop_stops_after_forty_hops(tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    assert resolve_leaf_symlink(a) in {a, b}  # returned, not a hang or an exception


def test_realpath_nearest_existing_reappends_missing_segments(tmp_path: Path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert realpath_nearest_existing(link / "new" / "file.md") == Path(os.path.realpath(real)) / "new" / "file.md"


def test_team_check_sees_through_a_symlinked_parent(tmp_path: Path, repo: Path):
    """A path under a directory symlink that points into team memory is a team path."""
    team = repo / ".qwen" / "team-memory"
    team.mkdir(parents=True)
    alias = tmp_path / "alias"
    alias.symlink_to(team)
    assert is_team_path(alias / "feedback" / "x.md", memory_paths(repo, home=tmp_path, env={}))
