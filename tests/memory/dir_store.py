"""A plain directory-backed store with the interface extraction and dream use (``ExtractStore``).

Extraction and dream are written against the memory store's interface; this
stand-in keeps their tests independent of the store's own guards (secret
scan, locks), which the store's tests cover. It writes real files under a
scratch HOME and rebuilds ``MEMORY.md`` from disk with one line per file.
"""

from __future__ import annotations

import re
from pathlib import Path

from qwen_lsp.files.reading import atomic_write_text
from qwen_lsp.memory.model import TOPICS, MemoryDoc, Scope

_FRONTMATTER = re.compile(r"^---\n(.*?)\n---\n?(.*)$", re.S)


class DirStore:
    def __init__(self, home: Path, project: str = "-ws") -> None:
        self._state = home / ".qwen" / "projects" / project
        self._user = home / ".qwen" / "memories"
        self.writes: list[Path] = []
        self.rebuilt: list[Scope] = []
        self.fail_rebuild: set[Scope] = set()

    def root(self, scope: Scope) -> Path:
        return {"project": self._state / "memory", "user": self._user, "team": self._state / "team-memory"}[scope]

    def state_dir(self) -> Path:
        return self._state

    def scan(self, scope: Scope) -> list[MemoryDoc]:
        root = self.root(scope)
        docs = []
        for path in sorted(root.rglob("*.md")) if root.is_dir() else []:
            if path.name == "MEMORY.md":
                continue
            match = _FRONTMATTER.match(path.read_text())
            if not match:
                continue
            fields = dict(line.split(":", 1) for line in match.group(1).splitlines() if ":" in line)
            kind = fields.get("type", "").strip()
            if kind not in TOPICS:
                continue
            docs.append(
                MemoryDoc(
                    scope=scope,
                    type=kind,  # type: ignore[arg-type]
                    path=path,
                    relative_path=path.relative_to(root).as_posix(),
                    title=fields.get("name", kind).strip(),
                    description=fields.get("description", "").strip(),
                    body=match.group(2).strip(),
                    mtime=path.stat().st_mtime,
                )
            )
        return docs

    def write_text(self, path: Path, content: str) -> None:
        self.writes.append(path)
        atomic_write_text(path, content)

    def rebuild_index(self, scope: Scope) -> bool:
        if scope in self.fail_rebuild:
            raise OSError(f"cannot rebuild the {scope} index")
        self.rebuilt.append(scope)
        lines = [f"- [{d.title}]({d.relative_path}) — {d.description}" for d in self.scan(scope)]
        atomic_write_text(self.root(scope) / "MEMORY.md", "\n".join(lines) + "\n")
        return True
