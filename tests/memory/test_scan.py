"""Scanning memory files (Qwen Code's ``memory/scan.ts``), including files in the exact shape Qwen Code writes."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from qwen_lsp.memory.scan import MAX_FILE_BYTES, MAX_FILES, frontmatter_value, parse_memory, scan_root

# What Qwen Code's extraction agent writes, following its MEMORY_FRONTMATTER_EXAMPLE.
QWEN_CODE_FILE = """---
name: Database tests use a real Postgres
description: Integration tests must hit a real database, never mocks — a mocked migration once hid a broken prod deploy
type: feedback
---

Integration tests must hit a real database, not mocks.

**Why:** last quarter a mocked test passed while the real migration failed in production.

**How to apply:** when adding tests under tests/integration, use the `pg` fixture.
"""


def write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def memory(name: str, type_: str = "project", description: str = "d") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n\nbody of {name}\n"


def test_a_file_in_qwen_codes_format_scans_to_its_fields(tmp_path: Path):
    path = write(tmp_path / "feedback" / "db-tests.md", QWEN_CODE_FILE)
    [doc] = scan_root(tmp_path, "project")
    assert doc.scope == "project" and doc.type == "feedback"
    assert doc.path == path and doc.relative_path == "feedback/db-tests.md"
    assert doc.title == "Database tests use a real Postgres"
    assert doc.description.startswith("Integration tests must hit a real database, never mocks — a mocked")
    assert doc.body.startswith("Integration tests must hit a real database, not mocks.")
    assert doc.body.endswith("use the `pg` fixture.")
    assert doc.mtime == path.stat().st_mtime


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("---\ntype: user\n---\nbody", ("user", "user", "", "body")),  # title falls back to type
        ("---\ntitle: T\ntype: reference\n---\n", ("reference", "T", "", "")),  # legacy `title`
        ("---\nname: N\ntitle: T\ntype: user\n---\n\n  x  \n", ("user", "N", "", "x")),
        ("---\ntype:   project   \nname:\n  spaced\n---\nb", ("project", "project", "", "b")),  # no value across lines
        ("---\nname:   \ntype: user\n---\nb", ("user", "", "", "b")),  # spaces only → '' (not the next line)
        ("---\ntype: user\nname:\t \n---\nb", ("user", "", "", "b")),
        ("---\r\nname: Win\r\ntype: user\r\n---\r\nbody\r\n", ("user", "Win", "", "body")),  # CRLF is read as LF
        ("---\n\n---\ntype: user\n", None),  # the block ends at the first \n---
        ("---\ntype: user\n----x", ("user", "user", "", "-x")),
        ("---\ntype: user", None),  # never closed
        ("no frontmatter\ntype: user\n", None),
        ("---\ntype: secret\n---\nx", None),  # unknown type → ignored
        ("---\n type: user\n---\nx", None),  # key must start the line
        ("---\ndescription: a: b # c\ntype: feedback\n---\n", ("feedback", "feedback", "a: b # c", "")),  # not YAML
    ],
)
def test_frontmatter_rules(content: str, expected: tuple[str, str, str, str] | None):
    parsed = parse_memory(content)
    if expected is None:
        assert parsed is None
    else:
        assert parsed is not None
        assert (parsed.type, parsed.title, parsed.description, parsed.body) == expected


def test_frontmatter_value_first_matching_line_wins():
    assert frontmatter_value("name: a\nname: b", "name") == "a"
    assert frontmatter_value("name:\nname: b", "name") == "b"
    assert frontmatter_value("names: x\nname: y", "name") == "y"
    assert frontmatter_value("x\rname: cr", "name") == "cr"  # a lone CR starts a line for JS's multiline ^


def test_frontmatter_value_on_long_trailing_whitespace():
    """Where ``^name:[^\\S\\n]*(.+)$`` would backtrack through every space, the port answers as JS does."""
    assert frontmatter_value("name:" + " " * 60_000, "name") == ""
    assert frontmatter_value("name:" + "\n" * 60_000, "name") is None
    assert frontmatter_value(("name:" + " " * 2000 + "\n") * 30, "name") == ""


def test_sorted_newest_first_then_by_file_name_and_index_excluded(tmp_path: Path):
    write(tmp_path / "b.md", memory("b"), mtime=1000)
    write(tmp_path / "z" / "a.md", memory("a"), mtime=1000)
    write(tmp_path / "user" / "new.md", memory("new", "user"), mtime=3000)
    write(tmp_path / "MEMORY.md", memory("index"), mtime=5000)
    write(tmp_path / "sub" / "MEMORY.md", memory("nested index"), mtime=5000)
    write(tmp_path / "notes.txt", memory("txt"), mtime=5000)
    write(tmp_path / ".x.md.abc.tmp", memory("temp"), mtime=5000)
    assert [d.relative_path for d in scan_root(tmp_path, "user")] == ["user/new.md", "z/a.md", "b.md"]


def test_cap_is_200_newest(tmp_path: Path):
    for i in range(MAX_FILES + 5):
        write(tmp_path / "project" / f"m{i:03}.md", memory(f"m{i}"), mtime=10_000 + i)
    docs = scan_root(tmp_path, "project")
    assert len(docs) == MAX_FILES
    assert docs[0].relative_path == f"project/m{MAX_FILES + 4:03}.md"
    assert "project/m000.md" not in {d.relative_path for d in docs}


def test_broken_files_are_skipped_with_a_logged_reason(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    write(tmp_path / "good.md", memory("good"))
    (tmp_path / "latin1.md").write_bytes(b"---\nname: caf\xe9\ntype: user\n---\n")
    big = "---\ntype: user\n---\n" + "x" * (MAX_FILE_BYTES + 1)
    write(tmp_path / "big.md", big)
    unreadable = write(tmp_path / "locked.md", memory("locked"))
    unreadable.chmod(0)
    (tmp_path / "dir.md").mkdir()
    with caplog.at_level(logging.INFO, logger="qwen_lsp.memory.scan"):
        docs = scan_root(tmp_path, "project")
    unreadable.chmod(0o644)
    names = {d.relative_path for d in docs}
    assert "good.md" in names and "latin1.md" not in names and "big.md" not in names
    assert "not UTF-8" in caplog.text and "big.md" in caplog.text
    assert "x" * 100 not in caplog.text  # reasons name files, never their content


def test_symlinks_are_never_followed_out_of_the_root(tmp_path: Path):
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    write(outside / "secret.md", memory("outside"))
    write(root / "inside.md", memory("inside"))
    (root / "linked-dir").symlink_to(outside)
    (root / "linked.md").symlink_to(outside / "secret.md")
    assert [d.relative_path for d in scan_root(root, "project")] == ["inside.md"]


def test_missing_or_symlinked_root_scans_empty(tmp_path: Path):
    assert scan_root(tmp_path / "absent", "user") == []
    write(tmp_path / "real" / "a.md", memory("a"))
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert scan_root(tmp_path / "alias", "team") == []
