"""Every reference in code and docs is one a maintainer who clones the repository can follow.

Comments, docstrings and docs cite the project's own ``docs/`` pages or
upstream Qwen Code by file and function name (e.g. ``memoryAge.ts``).
Section numbers of documents kept outside the repository, issue numbers and
names of parallel work streams point at nothing a clone has, so this scan
fails on any of them in the paths a maintainer reads. The one path outside the repository that
stays is the code-server tools folder, because ``vscode-extension/ci.sh``
and ``e2e/workbench.ts`` really default to it: lines that name
``CODE_SERVER_TOOLS`` say where to point it instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCANNED = (
    "qwen_lsp",
    "vscode-extension/src",
    "vscode-extension/webview",
    "vscode-extension/test",
    "vscode-extension/e2e",
    "docs",
    "bench",
    "tests",
    "README.md",
    "vscode-extension/README.md",
    "vscode-extension/ci.sh",
    "scripts",
    "CHANGELOG.md",
)
SUFFIXES = {".py", ".ts", ".tsx", ".js", ".mjs", ".css", ".html", ".md", ".sh", ".json", ".toml"}
SKIPPED_DIRS = {"node_modules", "out", "dist", "test-artifacts", "__pycache__", ".hypothesis", "screenshots"}
# Built from pieces so that this file does not match itself.
UNFOLLOWABLE = re.compile(
    "|".join(
        (
            "\u00a7",  # a section of a document: design, spec or chapter
            r"\biss" + r"ue\s*#?\d+",
            r"\bla" + r"nes?\b",
            r"sha" + r"red/reference",
            r"\bdesi" + r"gn\.md\b",
        )
    ),
    re.IGNORECASE,
)
ALLOWED = "CODE_SERVER_TOOLS"
# A relative path into a folder named like the one kept beside the repository: followable when it
# resolves, from the citing file, to something the clone has (the extension's own ``src/shared``).
RELATIVE_SHARED = re.compile(r"(?:\.\./)+sha" + r"red/[\w./-]*")


def scanned_files() -> list[Path]:
    """The text files under :data:`SCANNED`, without build output or dependencies."""
    files: list[Path] = []
    for entry in SCANNED:
        path = ROOT / entry
        if path.is_file():
            files.append(path)
            continue
        for candidate in sorted(path.rglob("*")):
            relative = candidate.relative_to(ROOT).parts
            if candidate.is_file() and candidate.suffix in SUFFIXES and not SKIPPED_DIRS.intersection(relative):
                files.append(candidate)
    return files


def _resolves(base: Path, cited: str) -> bool:
    target = (base / cited).resolve()
    inside = target == ROOT or ROOT in target.parents
    return inside and any(target.with_name(target.name + suffix).exists() for suffix in ("", ".ts", ".tsx", ".js"))


def unfollowable(text: str, base: Path = ROOT) -> list[str]:
    """The lines of ``text`` (a file in ``base``) that cite something a clone of the repository does not have."""
    return [
        line.strip()
        for line in text.splitlines()
        if ALLOWED not in line
        and (UNFOLLOWABLE.search(line) or any(not _resolves(base, m) for m in RELATIVE_SHARED.findall(line)))
    ]


def test_code_and_docs_cite_only_what_the_repository_has() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {line}"
        for path in scanned_files()
        for line in unfollowable(path.read_text(encoding="utf-8", errors="replace"), path.parent)
    ]
    assert not found, "cite docs/ or an upstream Qwen Code file/function instead:\n" + "\n".join(found)


def test_the_scan_covers_every_listed_path() -> None:
    missing = [entry for entry in SCANNED if not (ROOT / entry).exists()]
    assert not missing
    assert len(scanned_files()) > 100


@pytest.mark.parametrize(
    "line",
    [
        "Command line (design \u00a74).",
        "(spec \u00a712.4)",
        "Chapter \u00a76.2 says",
        "left out (\u00a77.4).",
        "(iss" + "ue 14, panel part)",
        "Iss" + "ue #13 on the host",
        "Found by this la" + "ne:",
        "tools from ../sha" + "red/tools/code-server",
        "(sha" + "red/reference/vscode-panel-anchors.md)",
    ],
)
def test_the_scan_sees_each_kind_of_reference(line: str) -> None:
    assert unfollowable(line) == [line]


@pytest.mark.parametrize(
    "line",
    [
        "as Qwen Code 0.24.4's ``memoryAge.ts``",
        "see docs/protocol.md",
        "an @import of ../shared.md is test data",
        "tissue 5 and planes are words",
        "default: ../sha" + "red/tools/code-server (set CODE_SERVER_TOOLS)",
    ],
)
def test_the_scan_leaves_followable_text_alone(line: str) -> None:
    assert unfollowable(line) == []


def test_a_relative_path_that_resolves_in_the_clone_is_followable() -> None:
    line = "import type { Notice } from '../sha" + "red/messages';"
    assert unfollowable(line, ROOT / "vscode-extension" / "src" / "chat") == []
    assert unfollowable(line, ROOT / "vscode-extension" / "src") == [line]  # no src/../shared here
