"""Byte-for-byte regression: a tricky tree assembles to exactly what it did before the cold build was sped up.

``tests/data/context_tricky_tree.json`` was produced by the assembler as it
stood before the fourth performance pass (docs/performance.md), from the
tree :func:`build_tree` lays out: symlinks that stay inside the project and
ones that leave it (a file, a directory, a dangling link, a context file
above the project), one file reached by two paths, case spellings of the
context file names, ``@`` imports (nested, cyclic, missing, inside code,
through a linked directory), rules with and without ``paths:``
frontmatter, a rule linked from outside, an oversized file, invalid UTF-8.
Every observable result is compared: the system prompt, the problems
reported, the inputs watched, the conditional rules and the watch targets,
for both import formats and for an untrusted folder. Any speed-up that
changes one byte of it fails here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from qwen_lsp.context import ContextAssembler, ContextSettings

GOLDEN = Path(__file__).parent / "data" / "context_tricky_tree.json"


def _write(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _link(root: Path, name: str, target: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def build_tree(base: Path) -> Path:
    """Lay out HOME (``base/home``) and a place outside every project (``base/outside``); return cwd."""
    home = base / "home"
    _write(base, {"outside/secret.md": b"SECRET OUTSIDE\n", "outside/dir/c.md": b"OUTSIDE DIR FILE\n"})
    _write(home, {
        ".qwen/QWEN.md": b"GLOBAL QWEN\n@./g.md\n",
        ".qwen/g.md": b"global imported @./g2.md\n",
        ".qwen/g2.md": b"global nested\n",
        ".qwen/rules/global.md": b"---\ndescription: global one\n---\nGlobal baseline\n",
        ".qwen/rules/cond.md": b"---\npaths:\n  - \"**/*.ts\"\n---\nGlobal conditional\n",
        "ws/QWEN.md": b"WS ABOVE REPO\n",
        "ws/repo/QWEN.md": (
            b"ROOT QWEN\nSee @./docs/a.md and @docs/b.md, mail x@y.z, (@./docs/a.md)\n\n```\n@./docs/a.md fenced\n```\n\n"
            b"Inline `@./docs/a.md` span\n@./missing.md kept\n@../../../outside/secret.md traversal\n"
            b"@./link-in.md inside link\n@./link-out.md outside link\n@./dirlink/c.md linked dir\n"
            b"@./dangling.md dangling\n@./cyc1.md cycle\n@./docs/a.md. trailing dot\n@./docs deep dir\n"
            b"@http://example.com/x url\n@./big.md too big\n"
        ),
        "ws/repo/qwen.md": b"lowercase spelling\n",
        "ws/repo/Agents.md": b"mixed-case spelling\n",
        "ws/repo/docs/a.md": b"doc A\n@./b.md nested\n\n    @./b.md indented code\n",
        "ws/repo/docs/b.md": b"doc B \xff bad byte\n",
        "ws/repo/cyc1.md": b"cyc1 @./cyc2.md\n",
        "ws/repo/cyc2.md": b"cyc2 @./cyc1.md\n",
        "ws/repo/d1.md": b"d1 @./d2.md\n",
        "ws/repo/d2.md": b"d2 @./d3.md\n",
        "ws/repo/d3.md": b"d3 @./d4.md\n",
        "ws/repo/d4.md": b"d4 @./d5.md\n",
        "ws/repo/d5.md": b"d5 @./d6.md\n",
        "ws/repo/d6.md": b"d6 too deep\n",
        "ws/repo/AGENTS.md": b"ROOT AGENTS\r\nwith crlf @./d1.md\r\n",
        "ws/repo/a/QWEN.md": b"   \n\n",
        "ws/repo/a/b/c/QWEN.md": b"C QWEN\n> quoted @./../../../docs/b.md\n- listed @../../../docs/a.md\n",
        "ws/repo/.qwen/QWEN.local.md": b"LOCAL\n",
        "ws/repo/.qwen/rules/base.md": b"<!-- hidden -->\nBaseline project rule\n",
        "ws/repo/.qwen/rules/cond.md": b"\xef\xbb\xbf---\r\npaths: [\"src/**/*.py\", \"*.md\"]\r\n---\r\ncond rule\r\n",
        "ws/repo/.qwen/rules/sub/s.md": b"---\npaths: src/**\ndescription: sub\n---\nSub conditional\n",
        "ws/repo/.qwen/rules/empty.md": b"<!-- only a comment -->\n",
        "ws/repo/.qwen/rules/bad.md": b"---\npaths: [unclosed\n---\nBad frontmatter body\n",
        "ws/repo/.qwen/rules/Upper.MD": b"not a rule: the extension is case-sensitive\n",
    })
    (home / "ws" / "repo" / "big.md").write_bytes(b"x" * ((1 << 20) + 1))
    (home / "ws" / "repo" / ".git").mkdir()
    _link(home, "ws/repo/link-in.md", "docs/b.md")
    _link(home, "ws/repo/link-out.md", "../../../outside/secret.md")
    _link(home, "ws/repo/dirlink", "../../../outside/dir")
    _link(home, "ws/repo/dangling.md", "../../../outside/nothing.md")
    _link(home, "ws/repo/a/b/AGENTS.md", "../../AGENTS.md")  # the root AGENTS.md by a second path
    _link(home, "ws/repo/a/b/QWEN.md", "../../docs/b.md")  # a link that stays in the project: read through it
    _link(home, "ws/repo/a/b/c/AGENTS.md", "../../../../../../outside/dir/c.md")
    _link(home, "ws/AGENTS.md", "../../outside/secret.md")  # above the project, leaving its directory
    _link(home, "ws/repo/.qwen/rules/out.md", "../../../../../outside/secret.md")
    _link(home, "ws/repo/.qwen/rules/in.md", "base.md")
    return home / "ws" / "repo" / "a" / "b" / "c"


def _observe(base: Path, cwd: Path, **settings: Any) -> dict[str, Any]:
    a = ContextAssembler(cwd, ContextSettings(model="m", interaction_mode="headless", **settings), env={})
    prompt = a.system_prompt()
    loaded = a._load()
    recursive, flat = a.watch_targets()
    conditional = a.loaded_conditional_rules()
    out = {
        "prompt": prompt,
        "problems": [[p.path, p.message] for p in a.problems],
        "inputs": loaded.inputs(),
        "conditional": [[a.rule_name(r), list(r.paths), r.description, r.content] for r in (conditional.rules if conditional else [])],
        "matched": [a.rule_name(r) for r in conditional.match([cwd / "src" / "x" / "y.py", "README.md"])] if conditional else [],
        "watch": [[str(p) for p in recursive], [str(p) for p in flat]],
    }
    return json.loads(json.dumps(out).replace(str(base), "<BASE>"))


def observe_all(base: Path) -> dict[str, Any]:
    cwd = build_tree(base)
    return {
        "tree": _observe(base, cwd),
        "flat": _observe(base, cwd, import_format="flat"),
        "untrusted": _observe(base, cwd, folder_trust=False),
        "root_cwd": _observe(base, cwd.parent.parent.parent),
        "excluded": _observe(base, cwd, rule_excludes=("**/sub/**",), context_filenames=("AGENTS.md", "QWEN.md")),
    }


@pytest.fixture
def base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    return tmp_path


def test_tricky_tree_assembles_to_the_recorded_bytes(base: Path) -> None:
    got = observe_all(base)
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for case in expected:
        for key in expected[case]:
            assert got[case][key] == expected[case][key], f"{case}: {key}"
    assert got == expected


def test_tricky_tree_really_exercises_the_hard_cases(base: Path) -> None:
    """The recording is only worth comparing if the tree hits every refusal and import path."""
    got = observe_all(base)["tree"]
    prompt = got["prompt"]
    messages = " | ".join(m for _, m in got["problems"])
    assert "SECRET OUTSIDE" not in prompt and "OUTSIDE DIR FILE" not in prompt
    assert "could not read context file: refused: a symlink leads outside the project" in messages
    assert "refused: a symlink leads outside the directory it was found in" in messages
    assert "rule refused: a symlink leads outside" in messages
    assert "<!-- Imported from: ./docs/a.md -->" in prompt and "<!-- File already processed:" in prompt
    assert "Symlink resolves outside the project" in prompt and "Path traversal attempt" in prompt
    assert "lowercase spelling" not in prompt and "mixed-case spelling" not in prompt
    assert prompt.count("ROOT AGENTS") == 1
    assert "--- Context from: ../QWEN.md ---\ndoc B" in prompt
    assert "Baseline project rule" in prompt and "Global baseline" in prompt and "cond rule" not in prompt
    assert got["matched"] and got["conditional"]
