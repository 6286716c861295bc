"""System prompt assembly, caching and invalidation, env switches, "Add to QWEN.md"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qwen_lsp.context import ContextAssembler, ContextError, ContextSettings, SessionContext, system_prompt_suffix
from qwen_lsp.context.project_rules_file import MEMORY_SECTION_HEADER


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    r = home / "repo"
    (r / ".git").mkdir(parents=True)
    (r / "QWEN.md").write_text("Project rules\n@./docs/style.md\n")
    (r / "docs").mkdir()
    (r / "docs" / "style.md").write_text("Style v1\n")
    (r / "deep" / "er").mkdir(parents=True)
    return r


def make(cwd: Path, env: dict[str, str] | None = None, **kw: object) -> ContextAssembler:
    return ContextAssembler(cwd, ContextSettings(model="m", **kw), env=env or {})  # type: ignore[arg-type]


def test_suffix_has_no_orphan_separator() -> None:
    assert system_prompt_suffix("") == "" and system_prompt_suffix(" \n ") == ""
    assert system_prompt_suffix("\n x \n") == "\n\n---\n\nx"


def test_prompt_layout_and_output_language_block(repo: Path) -> None:
    a = make(repo / "deep" / "er")
    prompt = a.system_prompt()
    assert "\n\n---\n\n--- Context from: ../../QWEN.md ---\nProject rules\n<!-- Imported from: ./docs/style.md -->" in prompt
    assert prompt.endswith("--- End of Context from: ../../../.qwen/output-language.md ---")
    assert (Path(os.environ["HOME"]) / ".qwen" / "output-language.md").read_text().startswith("# Output language preference: auto")
    a.prompt_tail = "# auto memory\nx"
    assert a.system_prompt().endswith("output-language.md ---\n\n---\n\n# auto memory\nx")
    names = [s.name for s in a.sections()]
    assert names == ["base prompt", "context file", "context file", "memory"]


def test_identical_bytes_until_an_input_changes(repo: Path) -> None:
    a = make(repo)
    first = a.system_prompt()
    assert a.system_prompt() is first
    assert a.invalidate([repo / "unrelated.txt"]) is False
    assert a.system_prompt() is first
    (repo / "docs" / "style.md").write_text("Style v2\n")
    assert a.invalidate([repo / "docs" / "style.md"]) is True
    second = a.system_prompt()
    assert "Style v2" in second and "Style v1" not in second
    (repo / "QWEN.md").write_text("Edited\n")
    assert a.invalidate([repo / "QWEN.md"]) is True
    assert "Edited" in a.system_prompt()


def test_new_context_file_missing_import_and_rule_invalidate(repo: Path) -> None:
    a = make(repo / "deep")
    a.system_prompt()
    (repo / "deep" / "AGENTS.md").write_text("new agents")
    assert a.invalidate([repo / "deep" / "AGENTS.md"]) is True
    assert "new agents" in a.system_prompt()
    (repo / "QWEN.md").write_text("@./later.md\n")
    a.invalidate([repo / "QWEN.md"])
    assert "@./later.md" in a.system_prompt()
    (repo / "later.md").write_text("now here")
    assert a.invalidate([repo / "later.md"]) is True
    assert "now here" in a.system_prompt()
    (repo / ".qwen" / "rules").mkdir(parents=True)
    (repo / ".qwen" / "rules" / "r.md").write_text("a rule")
    assert a.invalidate([repo / ".qwen" / "rules" / "r.md"]) is True
    assert "--- Rule from: .qwen/rules/r.md ---" in a.system_prompt()


def test_settings_change_invalidates_only_when_different(repo: Path) -> None:
    a = make(repo)
    first = a.system_prompt()
    a.update_settings(ContextSettings(model="m"))
    assert a.system_prompt() is first
    a.update_settings(ContextSettings(model="qwen3-coder-plus"))
    assert "<function=" in a.system_prompt()


def test_system_md_switches(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(ContextError, match="missing system prompt file"):
        make(repo, {"QWEN_SYSTEM_MD": str(tmp_path / "nope.md")}).system_prompt()
    (repo / ".qwen").mkdir()
    (repo / ".qwen" / "system.md").write_text("CUSTOM BASE")
    a = make(repo, {"QWEN_SYSTEM_MD": "1"})
    assert a.system_prompt().startswith("CUSTOM BASE\n\n---\n\n--- Context from: QWEN.md ---")
    assert make(repo, {"QWEN_SYSTEM_MD": "false"}).system_prompt().startswith("You are Qwen Code")
    out = tmp_path / "written" / "base.md"
    b = make(repo, {"QWEN_WRITE_SYSTEM_MD": str(out)})
    prompt = b.system_prompt()
    assert out.read_text() == prompt[: prompt.index("\n\n---\n\n")]


def test_add_to_project_rules_appends_under_section(repo: Path) -> None:
    a = make(repo / "deep")
    before = a.system_prompt()
    target = a.add_to_project_rules("- Use tabs\n")
    assert target == repo / "QWEN.md"
    assert target.read_text() == f"Project rules\n@./docs/style.md\n\n{MEMORY_SECTION_HEADER}\n- Use tabs\n"
    a.add_to_project_rules("- Run make check")
    assert target.read_text().endswith(f"{MEMORY_SECTION_HEADER}\n- Use tabs\n- Run make check\n")
    after = a.system_prompt()
    assert after != before and "- Run make check" in after


def test_add_memory_creates_file_and_inserts_before_next_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    proj = tmp_path / "p"
    proj.mkdir()
    a = make(proj)
    assert a.add_to_project_rules("first").read_text() == f"{MEMORY_SECTION_HEADER}\nfirst\n"
    (proj / "QWEN.md").write_text(f"{MEMORY_SECTION_HEADER}\n- a\n\n## Other\n```\n## not a heading\n```\n")
    a.add_to_project_rules("- b")
    assert (proj / "QWEN.md").read_text() == f"{MEMORY_SECTION_HEADER}\n- a\n- b\n\n## Other\n```\n## not a heading\n```\n"


def test_the_environment_reminder_is_taken_once_per_chat(repo: Path) -> None:
    (repo / "b.txt").write_text("")
    (repo / "node_modules").mkdir()
    chat = SessionContext(make(repo))
    text = chat.startup_reminder()
    assert text.startswith("<system-reminder>\nThis is the Qwen Code. We are setting up the context for our chat.\nToday's date is ")
    assert f"I'm currently working in the directory: {repo}\n" in text
    assert text.endswith(f"Showing up to 20 items:\n\n{repo}/\n├───b.txt\n├───QWEN.md\n├───.git/...\n├───deep/\n│   └───er/\n├───docs/\n│   └───style.md\n└───node_modules/...\n</system-reminder>")
    (repo / "later.txt").write_text("")
    assert chat.startup_reminder() is text  # frozen for the chat
    assert "later.txt" in SessionContext(chat._assembler).startup_reminder()  # a new chat looks again


def test_problems_are_collected_not_raised(repo: Path) -> None:
    (repo / "QWEN.md").write_bytes(b"\xff\xfe @../../../../etc/passwd @./cyc.md\n")
    (repo / "cyc.md").write_text("@./cyc.md")
    a = make(repo)
    prompt = a.system_prompt()
    assert "\ufffd\ufffd <!-- Import failed: ../../../../etc/passwd - Path traversal attempt -->" in prompt
    messages = " | ".join(p.message for p in a.problems)
    assert "UTF-8" in messages and "refused" in messages and "cycle" in messages


def age(tree):
    import os

    for p in [tree, *tree.rglob("*")]:
        os.utime(p, (1_000_000_000, 1_000_000_000))


def test_refresh_if_stale_sees_edits_before_any_watcher(tmp_path, monkeypatch):
    """An edit followed at once by a turn must reach that turn (no debounce in between)."""
    from qwen_lsp.context import ContextAssembler, ContextSettings

    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    (repo / "QWEN.md").write_text("root v1 @./inc.md\n")
    (repo / "inc.md").write_text("inc v1\n")
    a = ContextAssembler(repo / "sub", ContextSettings(model="m"), env={})
    first = a.system_prompt()
    age(tmp_path)  # as if everything had been written long before the server read it
    assert a.refresh_if_stale() is False and a.system_prompt() is first
    (repo / "inc.md").write_text("inc v2, longer\n")
    assert a.refresh_if_stale() is True and "inc v2" in a.system_prompt()
    (repo / "sub" / "AGENTS.md").write_text("new file in a scanned dir\n")
    assert a.refresh_if_stale() is True and "new file in a scanned dir" in a.system_prompt()
    rules = repo / ".qwen" / "rules"
    rules.mkdir(parents=True)
    (rules / "r.md").write_text("a new rule\n")
    assert a.refresh_if_stale() is True and "a new rule" in a.system_prompt()
    age(tmp_path)
    assert a.refresh_if_stale() is False


def test_an_edit_racing_the_first_read_is_caught_by_the_first_check(tmp_path, monkeypatch):
    from qwen_lsp.context import ContextAssembler, ContextSettings

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "QWEN.md").write_text("fresh\n")  # modified "now": may postdate the read
    a = ContextAssembler(tmp_path / "repo", ContextSettings(model="m"), env={})
    a.system_prompt()
    assert a.refresh_if_stale() is True  # cannot tell whether it was read before or after: re-read
    a.system_prompt()
    age(tmp_path)
    assert a.refresh_if_stale() is False  # settled: from now on the fingerprint decides
