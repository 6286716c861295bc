"""A separate process that writes memories, for the crash and two-writer tests (run with ``python writer_process.py``).

``remember PROJECT HOME TAG COUNT GO_FILE``: wait for GO_FILE, then remember COUNT memories.
``churn PROJECT HOME``: rewrite memories forever, printing a line after each write, until killed.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

from qwen_lsp.memory.store import MemoryStore

FILLER_LINES = 600


def payload(version: int) -> str:
    """A body that says how long it is and what it hashes to, so a torn file is detectable."""
    filler = "\n".join(f"{version}:{i:04} " + "x" * 80 for i in range(FILLER_LINES))
    digest = hashlib.sha256(filler.encode()).hexdigest()
    return f"version {version} sha256 {digest}\n{filler}"


def main(argv: list[str]) -> None:
    mode, project, home = argv[0], Path(argv[1]), Path(argv[2])
    store = MemoryStore(project, home=home, env={})
    if mode == "remember":
        tag, count, go = argv[3], int(argv[4]), Path(argv[5])
        while not go.exists():
            time.sleep(0.001)
        for i in range(count):
            store.remember(text=f"Shared convention {i}\n\nwritten by {tag}", name=f"Shared convention {i}")
        return
    if mode == "churn":
        target = store.root("project") / "feedback" / "churn.md"
        version = 0
        while True:
            version += 1
            store.write_text(target, f"---\nname: Churn\ndescription: version {version}\ntype: feedback\n---\n{payload(version)}\n")
            store.remember(text=f"Fact number {version}")
            print(version, flush=True)
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
