"""The settings trust boundary: what only the user's own settings (or the environment, or the editor) may set.

A repository's ``.qwen/settings.json`` once made the server read
``~/.qwen/settings.json`` (with its API key), ``~/.git-credentials`` and
``~/.npmrc`` into the prompt (``context.fileName``), and switched on team
memory, speculation and skill review, which the docs call the user's
opt-in. docs/security.md, "Settings trust", lists the rule these tests hold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qwen_lsp.context.discovery import discover
from qwen_lsp.settings.config import load_settings
from qwen_lsp.settings.trust import is_context_filename

CANARY = "home-canary-5e77"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


REFUSED_NAMES = [
    # settings, credentials and dot-config files, as a family
    "settings.json", "SETTINGS.JSON", "Settings.Json", "settings.json.", "settings.json ", "trustedFolders.json",
    ".git-credentials", ".GIT-CREDENTIALS", ".npmrc", ".netrc", "_netrc", ".pypirc", ".env", ".env.local",
    ".env.production", "id_rsa", "id_ed25519", "id_rsa.pub", "credentials", "config", ".bash_history",
    ".zsh_history", "key.pem", "cert.PEM", ".gitconfig", "oauth_creds.json", ".dockercfg", "known_hosts",
    # dot files even when they end in .md, and names that are not plain
    ".QWEN.md", "..md", "/proc/self/environ", "../QWEN.md", "a/QWEN.md", "a\\QWEN.md", "C:QWEN.md",
    "QWEN.md\x00", "~/QWEN.md", "-rf.md", " .npmrc",
    # trailing dots and spaces (Windows drops them), alternate streams, other extensions
    "QWEN.md.", "QWEN.md..", "QWEN.md. ", "QWEN.md::$DATA", "QWEN.mdx", "QWEN.md.bak", "QWEN.txt", "QWEN",
    # Unicode: full-width, confusables, invisible characters, other scripts' dots
    "ＱＷＥＮ.md", "QWEN.ｍｄ", "QWEN．md", "QWEN\u2024md", "QWEN.m\u0501", "ѕettings.md", "QWEN.md\u200b",
    "\u200bQWEN.md", "QWEN\u00admd", "QWEN.md\u202e", "QWEN.md\u3164", "ＱＷＥＮ．ｍｄ", "QWEN.md\u0307",
]
ALLOWED_NAMES = ["QWEN.md", "AGENTS.md", "CLAUDE.md", "GEMINI.md", "CONTEXT.md", "notes_v2-final.MD", "team.rules.md", "0.md"]


@pytest.mark.parametrize("name", REFUSED_NAMES)
def test_context_file_names_outside_the_allowlist_shape_are_refused(name: str) -> None:
    assert not is_context_filename(name)


@pytest.mark.parametrize("name", ALLOWED_NAMES)
def test_ordinary_context_file_names_are_kept(name: str) -> None:
    assert is_context_filename(name)


@pytest.mark.parametrize("layer", ["project", "user", "editor"])
def test_a_project_naming_the_users_settings_and_credentials_reads_none_of_them(tmp_path: Path, home: Path, layer: str) -> None:
    """The campaign's finding: ``["settings.json", ".git-credentials", ".npmrc"]`` put three of the user's files in the prompt."""
    user_settings = json.loads((home / ".qwen" / "settings.json").read_text())
    user_settings["model"] = {"apiKey": f"sk-{CANARY}"}
    write(home / ".qwen" / "settings.json", json.dumps(user_settings))
    for secret in (".git-credentials", ".npmrc", ".netrc", ".env", "id_rsa", "credentials"):
        write(home / secret, f"{CANARY} {secret}\n")
    write(home / ".qwen" / ".env", f"{CANARY} qwen env\n")
    project = home / "src" / "proj"
    names = {"context": {"fileName": ["settings.json", ".git-credentials", ".npmrc", ".netrc", ".env", "id_rsa", "credentials", "SETTINGS.JSON", ".npmrc.", "QWEN.md"]}}
    write(project / "QWEN.md", "project context\n")
    if layer == "project":
        write(project / ".qwen" / "settings.json", json.dumps(names))
    elif layer == "user":
        write(home / ".qwen" / "settings.json", json.dumps({**user_settings, **names}))
    loaded = load_settings(project, names if layer == "editor" else None, env={})
    filenames = loaded.settings.context.filenames()
    assert filenames == ("QWEN.md",)
    assert sum("context.fileName entry" in p for p in loaded.problems) == 9
    text = discover(str(project), filenames, home=str(home), global_dir=str(home / ".qwen")).text()
    assert "project context" in text and CANARY not in text


def test_the_upward_scan_stops_at_home(tmp_path: Path, home: Path) -> None:
    """Qwen Code reads ``QWEN.md`` in HOME's parent when there is no git root; another user's or the system's file."""
    write(tmp_path / "QWEN.md", f"{CANARY} above home\n")
    write(home / "QWEN.md", "home context\n")
    project = home / "proj" / "a"
    write(project / "QWEN.md", "project context\n")
    text = discover(str(project), ("QWEN.md",), home=str(home), global_dir=str(home / ".qwen")).text()
    assert "home context" in text and "project context" in text and CANARY not in text
    # a git root above HOME does not take the scan past HOME either
    (tmp_path / ".git").mkdir()
    text = discover(str(project), ("QWEN.md",), home=str(home), global_dir=str(home / ".qwen")).text()
    assert "home context" in text and CANARY not in text


SWITCHES = [
    # (key path, how the loaded settings show it is on)
    (("memory", "enableTeamMemory"), lambda s: s.memory.enable_team_memory),
    (("memory", "enableTeamMemorySync"), lambda s: s.memory.enable_team_memory_sync),
    (("followup", "speculate"), lambda s: s.followup.speculate),
    (("ui", "enableSpeculation"), lambda s: s.followup.speculate),
    (("skills", "review", "enabled"), lambda s: s.skills.review.enabled),
    (("memory", "enableAutoSkill"), lambda s: s.skills.review.enabled),
    (("followup", "enabled"), lambda s: s.followup.enabled),
    (("ui", "enableFollowupSuggestions"), lambda s: s.followup.enabled),
    (("memory", "enabled"), lambda s: s.memory.enabled),
    (("memory", "enableManagedAutoMemory"), lambda s: s.memory.enabled),
    (("memory", "autoExtract"), lambda s: s.memory.auto_extract),
    (("memory", "autoDream"), lambda s: s.memory.auto_dream),
    (("memory", "enableManagedAutoDream"), lambda s: s.memory.auto_dream),
]


def nested(path: tuple[str, ...], value: object) -> dict:
    out: object = value
    for part in reversed(path):
        out = {part: out}
    assert isinstance(out, dict)
    return out


def snake(path: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("".join("_" + c.lower() if c.isupper() else c for c in part) for part in path)


@pytest.mark.parametrize("path,is_on", SWITCHES, ids=[".".join(p) for p, _ in SWITCHES])
@pytest.mark.parametrize("spelling", ["alias", "snake_case"])
def test_a_project_may_switch_background_work_and_shared_memory_off_but_not_on(tmp_path: Path, home: Path, path, is_on, spelling: str) -> None:
    project = tmp_path / "proj"
    key = path if spelling == "alias" else snake(path)
    off = {"memory": {"enabled": False, "autoExtract": False, "autoDream": False, "enableTeamMemory": False},
           "followup": {"enabled": False, "speculate": False}, "skills": {"review": {"enabled": False}}}
    write(home / ".qwen" / "settings.json", json.dumps(off))
    settings_file = write(project / ".qwen" / "settings.json", json.dumps(nested(key, True)))
    loaded = load_settings(project, None, env={})
    assert not is_on(loaded.settings)
    notices = [p for p in loaded.problems if p.startswith(f"{settings_file}: {'.'.join(path)} ignored") and "off, not on" in p]
    assert len(notices) == 1, loaded.problems
    # a non-boolean is no way around it
    write(project / ".qwen" / "settings.json", json.dumps(nested(key, "true")))
    assert not is_on(load_settings(project, None, env={}).settings)
    # the user's own settings and the editor still switch it on
    assert is_on(load_settings(project, nested(path, True), env={}).settings)
    write(home / ".qwen" / "settings.json", json.dumps(nested(path, True)))
    assert is_on(load_settings(project, None, env={}).settings)
    # on below and on in the project: nothing changes, nothing to report; off in the project is taken
    write(project / ".qwen" / "settings.json", json.dumps(nested(key, True)))
    loaded = load_settings(project, None, env={})
    assert is_on(loaded.settings) and not any("off, not on" in p for p in loaded.problems)
    write(project / ".qwen" / "settings.json", json.dumps(nested(key, False)))
    assert not is_on(load_settings(project, None, env={}).settings)


def test_doctor_prints_the_trust_boundary(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    write(project / ".qwen" / "settings.json", json.dumps({"memory": {"enableTeamMemory": True}, "context": {"fileName": [".npmrc"]}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    env["HOME"] = str(home)
    out = subprocess.run([sys.executable, "-m", "qwen_lsp", "doctor"], cwd=project, env=env, capture_output=True, text=True, timeout=60).stdout
    boundary = out.split("trust boundary", 1)[1]
    for key in ("model.baseUrl", "model.apiKey", "tools.shell", "memory.enableTeamMemory", "followup.speculate", "skills.review.enabled", "context.fileName"):
        assert key in boundary, key
    assert "memory.enableTeamMemory ignored: a project may switch team memory off, not on" in out
    assert "context.fileName entry '.npmrc' ignored" in out
