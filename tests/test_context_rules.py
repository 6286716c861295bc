"""`.qwen/rules/`: parsing, baseline formatting, conditional activation (Qwen Code's ``rulesDiscovery.ts``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qwen_lsp.context import ContextAssembler, ContextSettings, SessionContext, parse_rule


def test_parse_bom_crlf_comments_and_paths() -> None:
    rule = parse_rule("\ufeff---\r\npaths: ['**/*.py', '', 3]\r\ndescription: d\r\n---\r\n<!-- x -->\r\nbody\r\n", "/r.md")
    assert rule is not None
    assert rule.paths == ("**/*.py", "3") and rule.description == "d" and rule.content == "body"
    single = parse_rule("---\npaths: src/**\n---\nb\n", "/s.md")
    assert single is not None and single.paths == ("src/**",)


def test_empty_body_after_comment_stripping_is_dropped() -> None:
    assert parse_rule("<!-- only a comment -->\n  \n", "/e.md") is None
    assert parse_rule("---\npaths: []\n---\n<!-- a --><!-- b -->", "/e.md") is None


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    rules = home / ".qwen" / "rules"
    rules.mkdir(parents=True)
    (rules / "g.md").write_text("Global rule\n")
    repo = home / "repo"
    (repo / ".git").mkdir(parents=True)
    prules = repo / ".qwen" / "rules"
    (prules / "sub").mkdir(parents=True)
    (prules / "b.md").write_text("<!-- hidden -->\nBaseline B\n")
    (prules / "a.md").write_text("Baseline A\n")
    (prules / "py.md").write_text("---\npaths: ['**/*.py']\n---\nPython rule\n")
    (prules / "sub" / "dot.md").write_text("---\npaths: ['**/*.js']\n---\nJS rule\n")
    return repo


def test_baseline_rules_follow_context_files_in_code_point_order(project: Path) -> None:
    a = ContextAssembler(project, ContextSettings(model="m", output_language=None))
    prompt = a.system_prompt()
    tail = prompt[prompt.index("--- Rule from:"):]
    assert tail == (
        "--- Rule from: ../.qwen/rules/g.md ---\nGlobal rule\n--- End of Rule from: ../.qwen/rules/g.md ---\n\n"
        "--- Rule from: .qwen/rules/a.md ---\nBaseline A\n--- End of Rule from: .qwen/rules/a.md ---\n\n"
        "--- Rule from: .qwen/rules/b.md ---\nBaseline B\n--- End of Rule from: .qwen/rules/b.md ---"
    )
    assert "Python rule" not in prompt


def test_conditional_rule_activates_once_on_matching_file(project: Path) -> None:
    a = SessionContext(ContextAssembler(project, ContextSettings(model="m", output_language=None)))
    a.prepare()
    assert a.activate_rules([project / "README.md"]) == []
    assert a.pending_rule_reminder() is None
    assert a.activate_rules([project / "src" / "x.py", project / ".eslintrc.js"]) == [".qwen/rules/py.md", ".qwen/rules/sub/dot.md"]
    assert a.pending_rule_reminder() == (
        "<system-reminder>\n"
        "--- Rule from: .qwen/rules/py.md ---\nPython rule\n--- End of Rule from: .qwen/rules/py.md ---\n\n"
        "--- Rule from: .qwen/rules/sub/dot.md ---\nJS rule\n--- End of Rule from: .qwen/rules/sub/dot.md ---\n"
        "</system-reminder>"
    )
    assert a.pending_rule_reminder() is None
    assert a.activate_rules([project / "y.py"]) == []
    assert a.activate_rules(["/outside/z.py"]) == []


def test_untrusted_folder_loads_global_rules_only(project: Path) -> None:
    a = ContextAssembler(project, ContextSettings(model="m", folder_trust=False, output_language=None))
    prompt = a.system_prompt()
    assert "Global rule" in prompt and "Baseline A" not in prompt


def test_frontmatter_is_read_as_qwen_code_reads_it() -> None:
    """YAML 1.2 core schema, then the line-by-line fallback when YAML fails; nulls dropped."""
    core = parse_rule("---\npaths: [on, 2020-01-01, 0x10, 1.50, ~]\n---\nb\n", "/c.md")
    assert core is not None and core.paths == ("on", "2020-01-01", "16", "1.5")
    broken = parse_rule("---\ndescription: py\npaths:\ufffd [x]\n---\nbody\n", "/b.md")  # not YAML: fallback
    assert broken is not None and broken.paths == ('\ufffd [x]',) and broken.description == "py"
    unclosed = parse_rule("---\npaths: [a\n---\nbody\n", "/u.md")
    assert unclosed is not None and unclosed.paths == ("[a",)
    listed = parse_rule('---\npaths:\n  - "src/**"\n  - 5\n  - null\n---\nbody\n', "/l.md")
    assert listed is not None and listed.paths == ("src/**", "5")
    assert parse_rule("---\npaths: ~\n---\nbody\n", "/n.md").paths == ()  # type: ignore[union-attr]
    assert parse_rule("---\njust text\n---\nbody\n", "/s.md").paths == ()  # type: ignore[union-attr]
