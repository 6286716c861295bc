"""Live watching: skills added, edited and removed on disk show up without a restart (``skill-manager.ts``)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from qwen_lsp.skills import SkillManager, SkillSetChange

WAIT = 10.0  # generous upper bound; the debounce is 0.15 s

# watchdog's inotify backend warns when a directory created inside a recursive watch
# is registered twice by its own threads; harmless, and not ours to fix.
pytestmark = [pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning"), pytest.mark.usefixtures("home")]



class Watched:
    def __init__(self, manager: SkillManager) -> None:
        self.manager = manager
        self.changes: asyncio.Queue[SkillSetChange] = asyncio.Queue()

    async def next_change(self) -> SkillSetChange:
        return await asyncio.wait_for(self.changes.get(), WAIT)

    async def until(self, predicate) -> None:
        """Wait for refreshes until ``predicate()`` holds (one edit may take more than one refresh)."""
        while not predicate():
            await self.next_change()


@pytest.fixture
async def watched(tmp_path: Path) -> AsyncIterator[Watched]:
    root = tmp_path / "proj"
    (root / ".qwen/skills").mkdir(parents=True)
    manager = SkillManager(root, bundled_dir=tmp_path / "none")
    manager.refresh()
    w = Watched(manager)
    manager.start_watching(asyncio.get_running_loop(), w.changes.put_nowait)
    yield w
    manager.stop_watching()


def skill_text(name: str, description: str = "d", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\nbody of {name}\n"


async def test_added_edited_broken_and_removed_skills_are_seen(watched: Watched) -> None:
    skills = watched.manager.project_root / ".qwen/skills"
    (skills / "fresh").mkdir()
    (skills / "fresh/SKILL.md").write_text(skill_text("fresh"))
    await watched.until(lambda: "fresh" in watched.manager.visible_names())

    (skills / "fresh/SKILL.md").write_text(skill_text("fresh", "edited"))
    await watched.until(lambda: watched.manager.get("fresh").description == "edited")

    (skills / "fresh/SKILL.md").write_text("---\nname: fresh\ndescription: [broken\n---\n")
    await watched.until(lambda: watched.manager.errors() != [])
    assert watched.manager.visible_names() == []

    (skills / "fresh/SKILL.md").unlink()
    (skills / "fresh").rmdir()
    await watched.until(lambda: watched.manager.errors() == [])


async def test_skill_set_change_names_what_appeared(watched: Watched) -> None:
    skills = watched.manager.project_root / ".qwen/skills"
    (skills / "one").mkdir()
    (skills / "one/SKILL.md").write_text(skill_text("one"))
    change = await watched.next_change()
    while "one" not in change.added:  # a first refresh may have run before the file was written
        assert change.removed == []
        change = await watched.next_change()


async def test_missing_skills_dir_is_noticed_through_its_provider_dir(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".agents").mkdir(parents=True)
    manager = SkillManager(root, bundled_dir=tmp_path / "none")
    manager.refresh()
    w = Watched(manager)
    manager.start_watching(asyncio.get_running_loop(), w.changes.put_nowait)
    try:
        assert root / ".agents" in manager.watched_dirs
        (root / ".agents/notes.txt").write_text("unrelated")  # outside skills/: no refresh
        (root / ".agents/skills/late").mkdir(parents=True)
        (root / ".agents/skills/late/SKILL.md").write_text(skill_text("late"))
        await w.until(lambda: "late" in manager.visible_names())
        await w.until(lambda: root / ".agents/skills" in manager.watched_dirs)
    finally:
        manager.stop_watching()


async def test_edits_inside_a_symlinked_skill_outside_the_base_are_seen(tmp_path: Path, watched: Watched) -> None:
    target = tmp_path / "repo/linked"
    target.mkdir(parents=True)
    (target / "SKILL.md").write_text(skill_text("linked"))
    os.symlink(target, watched.manager.project_root / ".qwen/skills/linked")
    await watched.until(lambda: "linked" in watched.manager.visible_names())
    assert target in watched.manager.watched_dirs
    (target / "SKILL.md").write_text(skill_text("linked", "changed at the source"))
    await watched.until(lambda: watched.manager.get("linked").description == "changed at the source")


async def test_a_fifo_does_not_trigger_a_refresh(watched: Watched) -> None:
    skills = watched.manager.project_root / ".qwen/skills"
    os.mkfifo(skills / "pipe")
    await asyncio.sleep(0.6)  # longer than the debounce: a refresh for the FIFO would come first
    (skills / "real").mkdir()
    (skills / "real/SKILL.md").write_text(skill_text("real"))
    first = await watched.next_change()
    assert first.added == ["real"]


async def test_bundled_dir_is_not_watched_and_stop_releases_watches(tmp_path: Path) -> None:
    bundled = tmp_path / "bundled"
    (bundled / "b").mkdir(parents=True)
    (bundled / "b/SKILL.md").write_text(skill_text("b"))
    manager = SkillManager(tmp_path / "proj", bundled_dir=bundled)
    manager.refresh()
    manager.start_watching(asyncio.get_running_loop(), lambda _c: None)
    assert bundled not in manager.watched_dirs
    manager.stop_watching()
    assert manager.watched_dirs == frozenset()


async def test_skill_appears_in_a_project_without_any_qwen_folder(tmp_path: Path) -> None:
    root = tmp_path / "bare"
    root.mkdir()
    (root / "src").mkdir()
    manager = SkillManager(root, bundled_dir=tmp_path / "none")
    manager.refresh()
    w = Watched(manager)
    manager.start_watching(asyncio.get_running_loop(), w.changes.put_nowait)
    try:
        assert root in manager.watched_dirs
        (root / "src" / "noise.py").write_text("x = 1\n")  # unrelated edits do not wake the watcher
        skill_dir = root / ".qwen" / "skills" / "late"
        skill_dir.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(skill_text("late"))
        await w.until(lambda: "late" in manager.visible_names())
    finally:
        manager.stop_watching()


@pytest.mark.parametrize("base", [".qwen/skills", ".agents/skills"])
async def test_first_user_skill_is_seen_when_no_user_skills_folder_existed(tmp_path: Path, home: Path, base: str) -> None:
    root = tmp_path / "proj2"
    root.mkdir()
    manager = SkillManager(root, bundled_dir=tmp_path / "none")
    manager.refresh()
    w = Watched(manager)
    manager.start_watching(asyncio.get_running_loop(), w.changes.put_nowait)
    try:
        (home / ".bash_history").write_text("ls\n")  # noise directly in HOME is filtered out
        skill_dir = home / base / "mine"
        skill_dir.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(skill_text("mine"))
        await w.until(lambda: "mine" in manager.visible_names())
        assert next(s for s in manager.skills() if s.name == "mine").level == "user"
    finally:
        manager.stop_watching()
