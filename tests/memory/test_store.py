"""MemoryStore: remember / write_text / remove, their refusals, and team-memory security."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qwen_lsp.errors import EngineError
from qwen_lsp.memory.errors import OutsideMemoryRoot, SecretRefused, TeamMemorySecurityError
from qwen_lsp.memory.scan import MAX_FILE_BYTES
from qwen_lsp.memory.store import MemoryStore, derive_name, slugify

GITHUB_TOKEN = "ghp_" + "R4nd0mT0k3n" * 3 + "abc"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def store(tmp_path: Path, repo: Path) -> MemoryStore:
    return MemoryStore(repo, home=tmp_path / "home", env={})


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_remember_writes_qwen_code_format_and_indexes_it(store: MemoryStore):
    doc = store.remember(text="  Never mock the DB.\n\nTests hit the dockerised Postgres.  ")
    assert doc.path == store.root("project") / "feedback" / "never-mock-the-db.md"
    assert doc.path.read_text() == (
        "---\n"
        "name: Never mock the DB.\n"
        "description: Never mock the DB. Tests hit the dockerised Postgres.\n"
        "type: feedback\n"
        "---\n\n"
        "Never mock the DB.\n\nTests hit the dockerised Postgres.\n"
    )
    assert store.scan("project") == [doc]
    assert store.index_text("project") == (
        "- [Never mock the DB.](feedback/never-mock-the-db.md) \u2014 Never mock the DB. Tests hit the dockerised Postgres."
    )


def test_remember_with_explicit_fields_and_scopes(store: MemoryStore):
    user = store.remember(text="Prefers terse answers.", type="user", scope="user", name="Terse", description="Wants short replies")
    assert user.path == store.root("user") / "user" / "terse.md"
    assert (user.title, user.description, user.scope) == ("Terse", "Wants short replies", "user")
    team = store.remember(text="Releases are cut on Tuesdays.", type="project", scope="team")
    assert team.path.parent == store.root("team") / "project"
    assert store.index_text("team").startswith("- [Releases are cut on Tuesdays.](project/")
    assert {d.scope for d in store.scan_all()} == {"user", "team"}


def test_same_name_gets_a_fresh_slug_never_an_overwrite(store: MemoryStore):
    paths = [store.remember(text="Same title").path for _ in range(3)]
    assert [p.name for p in paths] == ["same-title.md", "same-title-2.md", "same-title-3.md"]
    assert len(store.index_text("project").split("\n")) == 3


def test_name_and_slug_derivation_work_without_a_model():
    assert derive_name("# Heading line\nrest") == "Heading line"
    assert derive_name("- bullet fact") == "bullet fact"
    assert slugify("Use `pnpm`, not npm!") == "use-pnpm-not-npm"
    assert slugify("数据库 测试") == "数据库-测试"
    assert slugify("!!!") == "memory"
    assert len(slugify("x" * 200)) == 48


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [({"text": "  \n "}, "text"), ({"text": "x", "type": "bogus"}, "type"), ({"text": "x", "scope": "galaxy"}, "scope")],
)
def test_remember_refuses_bad_arguments(store: MemoryStore, kwargs: dict, param: str):
    with pytest.raises(EngineError) as info:
        store.remember(**kwargs)
    assert info.value.kind == "invalid_params" and info.value.param == param


def test_write_text_then_remove_keep_the_index_in_step(store: MemoryStore):
    target = store.root("project") / "reference" / "dashboards.md"
    store.write_text(target, "---\nname: Dashboards\ndescription: Grafana board for latency\ntype: reference\n---\nhttp://grafana/x\n")
    assert store.index_text("project") == "- [Dashboards](reference/dashboards.md) \u2014 Grafana board for latency"
    assert store.scope_of(target) == "project"
    outside = store.paths.project_root / "README.md"
    outside.write_text("keep")
    assert store.remove([target, outside, store.root("project") / "MEMORY.md"]) == [target]
    assert outside.read_text() == "keep"
    assert store.index_text("project") == ""


@pytest.mark.parametrize(
    "where",
    [
        lambda s: s.paths.project_root / "notes.md",
        lambda s: s.root("project") / "MEMORY.md",
        lambda s: s.root("team") / "sub" / "MEMORY.md",
        lambda s: s.root("project") / "pinned" / "x.md",
        lambda s: s.root("user") / "user" / "x.txt",
        lambda s: s.root("user"),
        lambda s: s.root("project") / ".." / "escape.md",
    ],
)
def test_write_text_refuses_paths_that_are_not_memory_files(store: MemoryStore, where):
    with pytest.raises(OutsideMemoryRoot) as info:
        store.write_text(where(store), "---\ntype: user\n---\n")
    assert info.value.kind == "invalid_params" and info.value.param == "path"


def test_write_text_refuses_a_symlinked_subdirectory_that_leads_out(store: MemoryStore, tmp_path: Path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    store.root("project").mkdir(parents=True)
    (store.root("project") / "feedback").symlink_to(outside)
    with pytest.raises(OutsideMemoryRoot):
        store.write_text(store.root("project") / "feedback" / "x.md", "---\ntype: feedback\n---\n")
    with pytest.raises(OutsideMemoryRoot):
        store.remember(text="Anything")
    assert list(outside.iterdir()) == []


def test_oversized_content_is_refused_before_anything_is_written(store: MemoryStore):
    with pytest.raises(EngineError) as info:
        store.write_text(store.root("project") / "a.md", "x" * (MAX_FILE_BYTES + 1))
    assert info.value.kind == "invalid_params"
    assert not store.root("project").exists()


def test_github_token_to_team_memory_is_refused_naming_the_rule_and_nothing_is_written(store: MemoryStore):
    with pytest.raises(SecretRefused) as info:
        store.remember(text=f"CI token is {GITHUB_TOKEN}", scope="team")
    assert info.value.labels == ("GitHub PAT",)
    assert "(GitHub PAT)" in info.value.message and GITHUB_TOKEN not in info.value.message
    assert not store.root("team").exists()
    with pytest.raises(SecretRefused):
        store.write_text(store.root("team") / "project" / "ci.md", f"---\ntype: project\n---\n{GITHUB_TOKEN}\n")
    assert files_under(store.root("team")) == []


def test_the_same_token_is_allowed_in_private_memory(store: MemoryStore):
    doc = store.remember(text=f"My scratch token {GITHUB_TOKEN}", scope="user", type="user")
    assert GITHUB_TOKEN in doc.path.read_text()


def test_dangling_decoy_symlink_cannot_route_a_write_past_the_scan(store: MemoryStore):
    """A project-memory path that is a dangling link into team memory is guarded as team, and never written through."""
    team = store.root("team")
    team.mkdir(parents=True)
    decoy = store.root("project") / "feedback" / "decoy.md"
    decoy.parent.mkdir(parents=True)
    decoy.symlink_to(team / "leak.md")
    assert store.scope_of(decoy) == "team"
    with pytest.raises(SecretRefused):
        store.write_text(decoy, f"---\ntype: feedback\n---\n{GITHUB_TOKEN}\n")
    assert not (team / "leak.md").exists() and decoy.is_symlink()
    store.write_text(decoy, "---\ntype: feedback\n---\nharmless\n")  # clean content: the link is replaced, not followed
    assert not (team / "leak.md").exists() and not decoy.is_symlink()


def test_symlinked_team_root_is_a_security_error(store: MemoryStore, tmp_path: Path):
    outside = tmp_path / "outside-team"
    (outside / "project").mkdir(parents=True)
    (outside / "project" / "victim.md").write_text("---\ntype: project\n---\nkeep me\n")
    team = store.root("team")
    team.parent.mkdir(parents=True)
    team.symlink_to(outside)
    for attempt in (
        lambda: store.remember(text="Shared fact", scope="team"),
        lambda: store.write_text(team / "project" / "x.md", "---\ntype: project\n---\n"),
        lambda: store.rebuild_index("team"),
        lambda: store.scan("team"),
        lambda: store.index_text("team"),
        lambda: store.remove([team / "project" / "victim.md"]),
    ):
        with pytest.raises(TeamMemorySecurityError) as info:
            attempt()
        assert info.value.kind == "memory_security"
    assert files_under(outside) == ["project", "project/victim.md"]
    assert store.scan_all() == []  # the other scopes still work; the redirected team is left out


def test_symlinked_parent_of_the_team_root_is_a_security_error(store: MemoryStore, tmp_path: Path):
    outside = tmp_path / "outside-qwen"
    (outside / "team-memory").mkdir(parents=True)
    (store.paths.repo_root / ".qwen").symlink_to(outside)
    with pytest.raises(TeamMemorySecurityError, match="resolves to"):
        store.remember(text="Shared fact", scope="team")
    with pytest.raises(TeamMemorySecurityError):
        store.rebuild_index("team")
    assert files_under(outside) == ["team-memory"]


def test_team_index_is_not_rewritten_when_unchanged(store: MemoryStore):
    store.remember(text="Fact one", scope="team", type="project")
    index = store.root("team") / "MEMORY.md"
    stamp = os.stat(index).st_mtime_ns
    assert store.rebuild_index("team") is False and os.stat(index).st_mtime_ns == stamp


def test_user_memory_is_shared_across_projects(tmp_path: Path):
    home = tmp_path / "home"
    a = MemoryStore(tmp_path / "a", home=home, env={})
    b = MemoryStore(tmp_path / "b", home=home, env={})
    a.remember(text="Uses vim keybindings", type="user", scope="user")
    assert [d.title for d in b.scan("user")] == ["Uses vim keybindings"]
    assert a.root("project") != b.root("project")


def test_a_rebuild_clears_old_temp_files_left_by_a_killed_writer_only(store: MemoryStore):
    store.remember(text="First")
    folder = store.root("project") / "feedback"
    stale = folder / ".first.md.ab12cd_9.tmp"
    fresh = folder / ".first.md.zz34yy_1.tmp"
    foreign = folder / "notes.tmp"
    for path in (stale, fresh, foreign):
        path.write_text("partial")
    os.utime(stale, (1, 1))
    os.utime(foreign, (1, 1))
    store.remember(text="Second")
    assert not stale.exists()
    assert fresh.exists() and foreign.exists()
