"""A git repository with two conditional rules, for tests of per-chat context state."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True)


def make_rules_repo(ws: Path) -> Path:
    """``src/app.py`` activates ``.qwen/rules/py.md`` (PY RULE), ``lib/util.js`` ``js.md`` (JS RULE); one commit."""
    (ws / "src").mkdir(parents=True)
    (ws / "lib").mkdir()
    (ws / "src" / "app.py").write_text("print('hi')\n")
    (ws / "lib" / "util.js").write_text("export const x = 1;\n")
    rules = ws / ".qwen" / "rules"
    rules.mkdir(parents=True)
    (rules / "py.md").write_text('---\npaths: ["src/**/*.py"]\n---\nPY RULE: type hints.\n')
    (rules / "js.md").write_text('---\npaths: ["lib/**/*.js"]\n---\nJS RULE: no var.\n')
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first commit")
    return ws
