"""The startup folder listing leaves out what Qwen Code 0.24.4's ignore rules leave out (``context/listing_ignore.py``).

The expected listing below is what the real ``qwen`` 0.24.4 put in its first request for this
tree (checked again by ``tests/interop/test_cli_interop.py::test_the_folder_listing_is_the_clis``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qwen_lsp.context.environment import folder_structure
from qwen_lsp.context.listing_ignore import ListingIgnore

TREE = {
    ".gitignore": "build/\n*.log\n!keep.log\nout\nsecret.txt\n",
    ".qwenignore": "private/\nnotes.md\n",
    ".git/info/exclude": "local.env\n",
    "sub/.gitignore": "x.tmp\n",
    "a.log": "", "keep.log": "", "secret.txt": "", "notes.md": "", "local.env": "", "ok.py": "",
    "build/b.py": "", "out/o.py": "", "sub/x.tmp": "", "sub/y.py": "", "sub/deep/x.tmp": "", "private/p.txt": "", "keep/.k": "",
}

CLI_LISTING = """\
├───.gitignore
├───.qwenignore
├───keep.log
├───ok.py
├───.git/...
├───build/
├───keep/
│   └───.k
├───out/...
├───private/
└───sub/
    ├───.gitignore
    ├───y.py
    └───deep/"""


def make(root: Path, tree: dict[str, str]) -> Path:
    for rel, text in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_listing_leaves_out_what_the_cli_leaves_out(tmp_path: Path):
    root = make(tmp_path / "ws", TREE)
    assert folder_structure(str(root)).split("\n", 3)[3] == CLI_LISTING


def test_outside_git_only_the_qwen_ignore_files_apply(tmp_path: Path):
    tree = {k: v for k, v in TREE.items() if not k.startswith(".git/")}
    root = make(tmp_path / "ws", {**tree, ".agentignore": "ok.py\n", ".aiignore": "keep.log\n"})
    listing = folder_structure(str(root))
    for shown in ("a.log", "secret.txt", "sub/", "x.tmp"):
        assert shown in listing
    for hidden in ("notes.md", "ok.py", "keep.log"):
        assert hidden not in listing


@pytest.mark.parametrize(
    "pattern, hidden, shown",
    [
        ("*.log", ["a.log", "b.log"], ["a.txt"]),
        ("/a.txt", ["a.txt"], ["b.log"]),
        ("a.*\n!a.txt", ["a.log"], ["a.txt", "b.log"]),
        ("[ab].log", ["a.log", "b.log"], ["a.txt"]),
        ("**/b.log", ["b.log"], ["a.log"]),
        ("\\#c", ["#c"], ["a.txt"]),
        ("a.txt   ", ["a.txt"], ["b.log"]),  # unescaped trailing spaces are trimmed, as git and the `ignore` package do
    ],
)
def test_pattern_family(tmp_path: Path, pattern: str, hidden: list[str], shown: list[str]):
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text(pattern + "\n")
    for name in ("a.log", "b.log", "a.txt", "#c"):
        (root / name).write_text("")
    rules = ListingIgnore.for_root(str(root), True)
    for name in hidden:
        assert rules.ignored(str(root / name)), (pattern, name)
    for name in shown:
        assert not rules.ignored(str(root / name)), (pattern, name)


@pytest.mark.timeout(20)
def test_hostile_ignore_files_neither_hang_nor_break_the_listing(tmp_path: Path):
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    nasty = ["[", "**/**/**/**/**/**/**/**/**/**/**/*a", "*a" * 400 + "b", "!", "/", "\\", "a" * 5000, "\x00", "[z-a]", "{a,b}"]
    (root / ".gitignore").write_text("\n".join(nasty * 300) + "\n")
    (root / ("a" * 200 + "c")).write_text("")
    (root / "kept.py").write_text("")
    listing = folder_structure(str(root))
    assert "kept.py" in listing
