"""End to end: the context blocks ``qwen-lsp chat`` sends equal Qwen Code 0.24's, byte for byte.

Each tree below is built by a small Python function. The expected text in
``tests/data/cli_parity/<tree>.txt`` was captured by running the real
``qwen -p hi --auth-type openai`` (0.24.4) with the same HOME and working
directory against a logging OpenAI-compatible server, and cutting the
system message from the first ``--- Context from:`` / ``--- Rule from:``
to the last ``--- End of … ---`` line. The blocks name files relative to
the working directory, so the goldens hold no temporary paths (``{ROOT}``
would stand for the scratch directory if one ever appeared).

The test runs our real CLI in a subprocess from the tree's deep directory,
with HOME pointing into the tree and the scripted server as the model, and
compares the same region of the system message it sent.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from support.scripted_openai import ScriptedOpenAI

GOLDEN_DIR = Path(__file__).parent / "data" / "cli_parity"
_END = re.compile(r"--- End of (?:Context|Rule) from: [^\n]* ---")


def context_region(system: str) -> str:
    """From the first context/rule block opener to the end of the last block."""
    starts = [i for i in (system.find("--- Context from: "), system.find("--- Rule from: ")) if i >= 0]
    ends = [m.end() for m in _END.finditer(system)]
    if not starts or not ends:
        return ""
    return system[min(starts) : max(ends)]


def _write(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def deep_repo(root: Path) -> tuple[Path, Path]:
    """A git repo under HOME, cwd five levels down: scan order, imports, encodings, rules, marked's code rules."""
    home = root / "home"
    _write(home, {
        ".qwen/QWEN.md": b"Global QWEN \xe4\xb8\xad\xe6\x96\x87\n@./g.md\n",
        ".qwen/g.md": b"global import\n",
        ".qwen/AGENTS.md": b"\xef\xbb\xbfGlobal AGENTS with BOM\n",
        ".qwen/rules/g.md": b"---\ndescription: global\n---\nGlobal baseline rule\n",
        "QWEN.md": b"home QWEN is above the stop directory\n",
        "ws/QWEN.md": b"ws QWEN (the git root's parent, included)\n",
        "ws/repo/QWEN.md": (
            b"# Root\nSee @./docs/a.md and @docs/b.md, mail me@example.com (@./docs/a.md)\n\n"
            b"```\n@./docs/a.md in a fence\n```\n\nInline `see @./docs/a.md` code\n\n"
            b"- list item `cat @./docs/b.md`\n\n1. step\n   ```\n   @./docs/b.md\n   ```\n\n"
            b"> quote `see @./docs/a.md`\n\n@./missing.md @../../../etc/passwd @https://x.y/z.md @./cyc1.md @./docs\n"
        ),
        "ws/repo/docs/a.md": b"doc A\n@../docs/b.md nested\n",
        "ws/repo/docs/b.md": b"doc B\n",
        "ws/repo/cyc1.md": b"cyc1 @./cyc2.md\n",
        "ws/repo/cyc2.md": b"cyc2 @./cyc1.md\n",
        "ws/repo/AGENTS.md": b"Root AGENTS\r\n```\r\nfenced @./docs/a.md\r\n```\r\nafter @./docs/b.md\r\n",
        "ws/repo/src/QWEN.md": b" \t\n\n",
        "ws/repo/src/pkg/QWEN.md": b"pkg QWEN \xff\xfe bad \xc3( bytes\n",
        "ws/repo/src/pkg/lib/AGENTS.md": b"lib AGENTS \xf0\x9f\x9a\x80\n",
        "ws/repo/src/pkg/lib/deep/QWEN.md": b"deep QWEN\n",
        "ws/repo/src/pkg/lib/deep/child/QWEN.md": b"below cwd: never read\n",
        "ws/repo/.qwen/QWEN.local.md": b"local notes @../docs/b.md\n",
        "ws/repo/.qwen/rules/b.md": b"<!-- hidden -->\nProject rule B\n",
        "ws/repo/.qwen/rules/a.md": b"Project rule A\r\n",
        "ws/repo/.qwen/rules/py.md": b'---\npaths: ["**/*.py"]\n---\nconditional\n',
        "ws/repo/.qwen/rules/sub/x.md": b"---\npaths: [a\n---\nbroken YAML: read line by line, so conditional\n",
        "ws/repo/.qwen/rules/empty.md": b"<!-- nothing -->\n",
    })
    (home / "ws" / "repo" / ".git").mkdir()
    return home, home / "ws" / "repo" / "src" / "pkg" / "lib" / "deep"


def worktree_custom_names(root: Path) -> tuple[Path, Path]:
    """A ``.git`` file (worktree), custom ``context.fileName`` from the workspace settings, a symlinked QWEN.md."""
    home = root / "home"
    wt = home / "code" / "wt"
    cwd = wt / "app" / "web"
    _write(home, {
        ".qwen/CONTEXT.md": b"global CONTEXT\n",
        "code/wt/.git": b"gitdir: /nonexistent/worktrees/wt\n",
        "code/wt/QWEN.md": b"wt QWEN\n",
        "code/wt/CONTEXT.md": b"wt CONTEXT @./notes.md\n",
        "code/wt/notes.md": b"notes\n",
        "code/wt/AGENTS.md": b"AGENTS is not in the custom list\n",
        "code/wt/app/CONTEXT.md": b"app CONTEXT\n",
        "code/wt/app/web/.qwen/settings.json": b'{"context": {"fileName": ["CONTEXT.md", "QWEN.md"]}}',
        "code/QWEN.md": b"code QWEN (stop directory)\n",
    })
    (cwd / "QWEN.md").symlink_to(Path("..") / ".." / "QWEN.md")  # the same real file as wt/QWEN.md: read once
    return home, cwd


def at_home(root: Path) -> tuple[Path, Path]:
    """cwd is HOME: only ``~/<name>``; project rules are the global rules, loaded once."""
    home = root / "home"
    _write(home, {
        "QWEN.md": b"home QWEN @./inc.md\n",
        "inc.md": b"included from home\n",
        "AGENTS.md": b"home AGENTS\n",
        ".qwen/QWEN.md": b"global QWEN\n",
        ".qwen/rules/one.md": b"one rule\n",
        ".qwen/rules/two.md": b"---\ndescription: py\npaths:\xff [x]\n---\nbad byte in YAML: conditional\n",
        "sub/QWEN.md": b"below cwd: never read\n",
    })
    return home, home


def no_git_under_home(root: Path) -> tuple[Path, Path]:
    """No git root: Qwen Code 0.24.4 scans up to HOME's parent; we stop at HOME (docs/security.md), so the file above is not read; a project output-language.md wins."""
    home = root / "home"
    cwd = home / "proj" / "a" / "b"
    _write(root, {
        "QWEN.md": b"parent of HOME: Qwen Code reads it, we never go above HOME\n",
        "home/QWEN.md": b"home QWEN\n",
        "home/proj/AGENTS.md": b"proj AGENTS\n@./x.md\n| t |\n|---|\n| `in @./x.md` |\n",
        "home/proj/x.md": b"x content\n",
        "home/proj/a/b/QWEN.md": b"cwd QWEN\n",
        "home/proj/a/b/.qwen/output-language.md": "# Reply in 中文\n".encode(),
        "home/proj/a/b/.qwen/rules/r.md": b"project rule (the project root is cwd)\n",
    })
    return home, cwd


TREES: dict[str, Callable[[Path], tuple[Path, Path]]] = {
    "deep_repo": deep_repo,
    "worktree_custom_names": worktree_custom_names,
    "at_home": at_home,
    "no_git_under_home": no_git_under_home,
}


def cli_env(home: Path, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QWEN", "OPENAI"))}
    env.update(HOME=str(home), OPENAI_BASE_URL=base_url, OPENAI_API_KEY="x", OPENAI_MODEL="m")
    return env


@pytest.mark.parametrize("name", sorted(TREES))
def test_chat_sends_the_context_blocks_qwen_code_sends(name: str, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    home, cwd = TREES[name](tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "qwen_lsp", "chat", "hi"],
        cwd=cwd,
        env=cli_env(home, scripted.base_url),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    requests = scripted.chat_requests()
    assert requests, proc.stderr
    system = requests[0].body["messages"][0]
    assert system["role"] == "system"
    expected = (GOLDEN_DIR / f"{name}.txt").read_bytes().decode("utf-8").replace("{ROOT}", str(tmp_path))
    assert context_region(system["content"]) == expected
