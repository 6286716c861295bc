"""The speculation overlay with plain paths: containment, shadows, discard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qwen_lsp.features.followups.overlay import OutsideWorkspace, Overlay


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    return root


@pytest.fixture
def overlay(ws: Path, tmp_path: Path) -> Overlay:
    return Overlay(ws, tmp_path / "state" / "spec-1")


def test_a_write_lands_in_the_shadow_and_reads_resolve_overlay_first(ws: Path, overlay: Overlay) -> None:
    target = ws / "src" / "a.py"
    assert overlay.read_text(target) is None  # untouched: read the workspace
    overlay.write_text(target, "a = 2\n", base="a = 1\n")
    overlay.write_text(target, "a = 3\n", base="a = 2\n")  # the base is the workspace text before the first write
    assert target.read_text() == "a = 1\n"
    assert (overlay.directory / "src" / "a.py").read_text() == "a = 3\n"
    assert overlay.read_text(str(target)) == "a = 3\n"
    assert overlay.touches(target) and not overlay.touches(ws / "src" / "b.py")
    [change] = overlay.changes()
    assert (change.path, change.base, change.text) == (target.resolve(), "a = 1\n", "a = 3\n")


def test_a_new_file_records_no_base_and_is_found_under_its_directories(ws: Path, overlay: Overlay) -> None:
    path = overlay.write_text(ws / "pkg" / "new.py", "x\n", base=None)
    assert not (ws / "pkg").exists()
    assert overlay.changes()[0].base is None
    assert overlay.shadows_under((ws / "pkg").resolve()) == [path]
    assert overlay.shadows_under((ws / "src").resolve()) == []


@pytest.mark.parametrize("raw", ["../outside.py", "src/../../outside.py", "/etc/passwd", "", "src/\x00a.py"])
def test_paths_outside_the_workspace_are_refused(ws: Path, overlay: Overlay, raw: str) -> None:
    with pytest.raises(OutsideWorkspace):
        overlay.write_text(ws / raw if raw and not raw.startswith("/") else raw, "x", base=None)
    assert not overlay.directory.exists() or list(overlay.directory.rglob("*")) == []
    assert not (ws.parent / "outside.py").exists()


def test_symlinks_leading_out_are_refused(ws: Path, overlay: Overlay, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s\n")
    os.symlink(outside, ws / "linkdir")
    os.symlink(outside / "secret.txt", ws / "link.txt")
    os.symlink(tmp_path / "nowhere.txt", ws / "dangling.txt")
    for raw in (ws / "linkdir" / "x.py", ws / "link.txt", ws / "dangling.txt"):
        with pytest.raises(OutsideWorkspace):
            overlay.write_text(raw, "x", base=None)
        assert overlay.read_text(raw) is None and not overlay.touches(raw)
    assert (outside / "secret.txt").read_text() == "s\n" and sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_a_symlink_inside_the_workspace_maps_to_its_target(ws: Path, overlay: Overlay) -> None:
    os.symlink(ws / "src" / "a.py", ws / "alias.py")
    path = overlay.write_text(ws / "alias.py", "a = 9\n", base="a = 1\n")
    assert path == (ws / "src" / "a.py").resolve()
    assert overlay.read_text(ws / "src" / "a.py") == "a = 9\n"


def test_a_link_planted_in_the_overlay_directory_cannot_route_a_shadow_out(ws: Path, overlay: Overlay, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    overlay.directory.mkdir(parents=True)
    os.symlink(elsewhere, overlay.directory / "src")
    with pytest.raises(OutsideWorkspace):
        overlay.write_text(ws / "src" / "a.py", "x", base="a = 1\n")
    assert list(elsewhere.iterdir()) == []


def test_discard_deletes_the_directory_and_later_writes_fail(ws: Path, overlay: Overlay) -> None:
    overlay.write_text(ws / "src" / "a.py", "a = 2\n", base="a = 1\n")
    overlay.discard()
    overlay.discard()
    assert not overlay.directory.exists() and overlay.touched() == []
    with pytest.raises(OutsideWorkspace):
        overlay.write_text(ws / "src" / "a.py", "a = 3\n", base="a = 1\n")
    assert not overlay.directory.exists()
    assert (ws / "src" / "a.py").read_text() == "a = 1\n"


def test_an_overlay_directory_inside_the_workspace_is_refused(ws: Path) -> None:
    with pytest.raises(ValueError):
        Overlay(ws, ws / ".speculation")


def test_rewind_undoes_the_writes_since_the_checkpoint_and_seals_the_overlay(ws: Path, overlay: Overlay) -> None:
    a, b = ws / "src" / "a.py", ws / "src" / "b.py"
    overlay.write_text(a, "a = 2\n", base="a = 1\n")
    overlay.checkpoint()  # round 1 complete
    overlay.write_text(a, "a = 3\n", base="a = 2\n")
    overlay.write_text(b, "b\n", base=None)
    overlay.write_text(b, "bb\n", base="b\n")
    overlay.rewind()
    [change] = overlay.changes()
    assert (change.path, change.base, change.text) == (a.resolve(), "a = 1\n", "a = 2\n")
    assert not (overlay.directory / "src" / "b.py").exists() and not overlay.touches(b)
    with pytest.raises(OutsideWorkspace, match="ended"):
        overlay.write_text(a, "late\n", base="a = 1\n")  # a cancelled tool's thread finishing after the rewind
    overlay.rewind()  # idempotent
    assert overlay.read_text(a) == "a = 2\n" and a.read_text() == "a = 1\n"


def test_rewind_without_a_checkpoint_leaves_nothing(ws: Path, overlay: Overlay) -> None:
    overlay.write_text(ws / "src" / "a.py", "a = 2\n", base="a = 1\n")
    overlay.rewind()
    assert overlay.changes() == [] and overlay.touched() == []
