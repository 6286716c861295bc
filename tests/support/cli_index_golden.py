"""Memories with non-ASCII names, and how the golden ``MEMORY.md`` files for them were made with the real CLI.

``tests/data/memory/cli_index/{project,team}_MEMORY.md`` are the bytes the Qwen
Code 0.24.4 CLI wrote for :data:`PROJECT_DOCS` and :data:`TEAM_DOCS`; the test
(``tests/memory/test_index_golden.py``) has our store write the same files and
compares. To regenerate (needs ``qwen`` 0.24.4 on PATH)::

    python tests/support/cli_index_golden.py

It lays the files out in a scratch HOME and repository (the project ones with
the mtimes below, so newest-first order is fixed), then runs ``qwen -p`` against
the scripted server twice: with ``QWEN_CODE_MEMORY_TEAM=1`` the CLI rebuilds the
team index at startup; for the project index the scripted model answers the
CLI's own extraction run with one ``write_file`` (:data:`EXTRACTED`), after which
the CLI rebuilds ``MEMORY.md`` from every file in the folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "memory" / "cli_index"
BASE_MTIME = 1_780_000_000


def memory(name: str, description: str, type_: str, body: str = "Body.") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}\n"


PROJECT_DOCS: list[tuple[str, str]] = [
    ("feedback/déploiement-rapide.md", memory("Déploiement rapide", "Toujours déployer après les tests — jamais le vendredi", "feedback")),
    ("project/数据库迁移计划.md", memory("数据库迁移计划", "迁移到新的数据库集群之前必须先完成备份验证和回滚演练，" * 3, "project")),
    ("reference/emoji-😀-notes.md", memory("Notes 😀 with emoji", "Where the 🚀 launch checklist lives", "reference")),
    (
        "reference/naïve-résumé-of-the-release-process-with-a-file-name-long-enough-to-pass-the-line-limit.md",
        memory("Naïve résumé", "Release process summary", "reference"),
    ),
    ("feedback/plain-ascii.md", memory("Use `make` targets](x)", "Run `make test` before pushing](evil) " + "and keep going " * 10, "feedback")),
    ("user/ärger-über-ümlaute.md", memory("Ärger über Ümlaute", "Der Nutzer schreibt Umlaute gern aus — ae, oe, ue", "user")),
    ("reference/" + "très-" * 30 + "long.md", memory("Très long", "The line is cut inside its link target", "reference")),
]
"""Project memories (relative path, content); the i-th gets mtime ``BASE_MTIME + i`` (the last is newest)."""

EXTRACTED = ("feedback/çà-et-là.md", memory("Çà et là", "Written by the extraction run: the newest file", "feedback"))
"""The file the scripted extraction writes in the project run (its mtime is the run's, newer than all)."""

TEAM_DOCS: list[tuple[str, str]] = [
    ("reference/déploiement.md", memory("Déploiement", "Where the deploy runbook lives", "reference")),
    ("reference/部署-runbook.md", memory("部署手册", "Where the deploy runbook lives.", "reference")),
    ("feedback/ünïcödé-réviews.md", memory("Ünïcödé réviews", "Every review names one owner — " + "très important " * 8, "feedback")),
    ("project/🚀-launch.md", memory("🚀 Launch", "Launch week freeze", "project")),
    ("project/" + "élan-" * 30 + ".md", memory("Élan", "Launch week freeze", "project")),
]


def lay_out(root: Path, docs: list[tuple[str, str]], *, mtimes: bool) -> None:
    for i, (rel, content) in enumerate(docs):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        if mtimes:
            os.utime(path, (BASE_MTIME + i, BASE_MTIME + i))


def main() -> None:  # pragma: no cover - run by hand against the real CLI
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
    from qwen_lsp.files.paths import sanitize_cwd
    from tests.support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

    scratch = Path(tempfile.mkdtemp(prefix="cli-index-"))
    home, repo = scratch / "home", scratch / "repo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    project = home / ".qwen" / "projects" / sanitize_cwd(repo) / "memory"
    lay_out(project, PROJECT_DOCS, mtimes=True)
    lay_out(repo / ".qwen" / "team-memory", TEAM_DOCS, mtimes=False)

    def respond(body: dict) -> Reply:
        text = json.dumps(body.get("messages", [])[-1:])
        if "Managed memory has TWO directories" in text:
            return Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(project / EXTRACTED[0]), "content": EXTRACTED[1]})])
        return Reply(chunks=["ok"])

    with ScriptedOpenAI(default=respond) as server:
        env = {**os.environ, "HOME": str(home), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x", "OPENAI_MODEL": "m", "QWEN_CODE_MEMORY_TEAM": "1"}
        subprocess.run(["qwen", "-p", "Remember that I like accents", "--auth-type", "openai", "--approval-mode", "yolo"], cwd=repo, env=env, check=True, timeout=300)
        (scratch / "requests.json").write_text(json.dumps([r.body for r in server.chat_requests()], indent=1))
    shutil.copyfile(project / "MEMORY.md", GOLDEN / "project_MEMORY.md")
    shutil.copyfile(repo / ".qwen" / "team-memory" / "MEMORY.md", GOLDEN / "team_MEMORY.md")
    print(f"golden files written from {scratch}")


if __name__ == "__main__":
    main()
