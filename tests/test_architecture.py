"""The arrows of design §2, checked on the source: server → engine → agent → cores, never back.

Cores (context, memory, skills, compaction, sessions, llm) never import
pygls, the server, the engine or the agent: a core that needs a forked run
(memory's extraction and dream) is handed a runner by the engine.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "qwen_lsp"
CORES = ("context", "memory", "skills", "compaction", "sessions", "llm", "followup")
FORBIDDEN = ("pygls", "lsprotocol", "qwen_lsp.server", "qwen_lsp.engine", "qwen_lsp.agent", "qwen_lsp.memory_hooks", "qwen_lsp.cli")


def imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved against its package)."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("core", CORES)
def test_cores_import_no_adapter_engine_or_agent(core: str) -> None:
    offending = {
        f"{path.relative_to(PACKAGE.parent)}: {name}"
        for path in sorted((PACKAGE / core).rglob("*.py"))
        for name in imports(path)
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)
    }
    assert not offending, sorted(offending)


def test_the_checker_sees_relative_imports() -> None:
    """Guards the guard: a known relative import of the agent is recognised."""
    names = imports(PACKAGE / "agent" / "memory_fork.py")
    assert "qwen_lsp.agent.fork" in names and "qwen_lsp.memory.forking" in names
