"""Golden test: the context-file blocks Qwen Code 0.24.4 sent for a fixture tree, byte for byte.

``tests/data/context_qwen024_blocks.txt`` was captured from a real
``qwen -p hi`` run (0.24.4, headless, cwd ``ws/repo/a/b/c/d``) against a
logging OpenAI-compatible server, with HOME set to a scratch home laid out
exactly as :func:`build_tree` lays it out. It is the part of the system
message between the base prompt's ``---`` and the auto-memory ``---``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qwen_lsp.context import ContextAssembler, ContextSettings

GOLDEN = Path(__file__).parent / "data" / "context_qwen024_blocks.txt"


def build_tree(home: Path) -> Path:
    files: dict[str, bytes] = {
        ".qwen/QWEN.md": b"GLOBAL QWEN\n@./gimp.md\n",
        ".qwen/gimp.md": b"global imported\n",
        ".qwen/AGENTS.md": b"GLOBAL AGENTS\n",
        ".qwen/rules/g1.md": b"---\ndescription: g\n---\nGlobal rule body\n",
        "ws/QWEN.md": b"WS QWEN (above repo, should not appear)\n",
        "ws/repo/QWEN.md": (
            b"ROOT QWEN\nSee @./docs/a.md and @docs/b.md, email foo@bar.com, (@./docs/a.md) paren\n\n```\n"
            b"@./docs/a.md in fence\n```\n\nInline `@./docs/a.md` code\n@./missing.md stays\n@../../etc/passwd traversal\n"
            b"@https://x.y/z url\n@./cyc1.md cycle\n@./docs/a.md. trailing\n"
        ),
        "ws/repo/docs/a.md": b"doc A content\n@./b.md nested\n",
        "ws/repo/docs/b.md": b"doc B content\n",
        "ws/repo/cyc1.md": b"cyc1 -> @./cyc2.md\n",
        "ws/repo/cyc2.md": b"cyc2 -> @./cyc1.md\n",
        "ws/repo/AGENTS.md": b"ROOT AGENTS\r\nwith crlf\r\n",
        "ws/repo/a/QWEN.md": b"   \n\n",
        "ws/repo/a/b/QWEN.md": b"B QWEN \xff\xfe invalid utf8 \xc3\x28 end\n",
        "ws/repo/a/b/c/AGENTS.md": b"C AGENTS\n",
        "ws/repo/a/b/c/d/QWEN.md": b"D QWEN\n",
        "ws/repo/.qwen/QWEN.local.md": b"LOCAL\n",
        "ws/repo/.qwen/rules/cond.md": b'\xef\xbb\xbf---\r\npaths: ["**/*.py"]\r\n---\r\ncond rule py\r\n',
        "ws/repo/.qwen/rules/base.md": b"<!-- hidden -->\nBaseline project rule\n",
        "ws/repo/.qwen/rules/sub/s.md": b"---\npaths: src/**\ndescription: x\n---\nSub cond rule\n",
        "ws/repo/.qwen/rules/empty.md": b"<!-- only comment -->\n",
    }
    for name, data in files.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (home / "ws" / "repo" / ".git").mkdir()
    return home / "ws" / "repo" / "a" / "b" / "c" / "d"


def test_context_blocks_match_qwen_code_024(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    cwd = build_tree(home)
    prompt = ContextAssembler(cwd, ContextSettings(model="m", interaction_mode="headless"), env={}).system_prompt()
    expected = GOLDEN.read_bytes().decode("utf-8")
    start = prompt.index("\n\n---\n\n") + len("\n\n---\n\n")
    assert prompt[start:] == expected
