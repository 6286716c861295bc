"""SKILL.md parsing, discovery across levels, activation state and invocation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qwen_lsp.skills import (
    SkillLevel,
    SkillLoadError,
    SkillManager,
    SkillNotFound,
    format_skill_list,
    skills_list_result,
)
from qwen_lsp.skills.discovery import default_bundled_dir
from qwen_lsp.skills.parse import SkillParseError, parse_skill


pytestmark = pytest.mark.usefixtures("home")  # every test runs in a scratch HOME


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


def write_skill(base: Path, dirname: str, front: str, body: str = "Do the thing.") -> Path:
    path = base / dirname / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}\n", encoding="utf-8")
    return path


def manager(root: Path, bundled: Path | None = None) -> SkillManager:
    m = SkillManager(root, bundled_dir=bundled if bundled is not None else root / "no-bundled")
    m.refresh()
    return m


# -- parsing -----------------------------------------------------------------


def parse(text: str):
    return parse_skill(text, Path("/s/x/SKILL.md"), SkillLevel.PROJECT)


def test_parse_reads_required_and_optional_fields() -> None:
    definition, body = parse(
        "\ufeff---\r\nname: api-rules\r\ndescription: API conventions\r\nwhen_to_use: editing handlers\r\n"
        "paths:\r\n  - src/api/**\r\n  - '  '\r\nallowedTools: [read_file]\r\nmodel: inherit\r\n"
        "disable-model-invocation: 'true'\r\nuser-invocable: false\r\npriority: 2\r\n---\r\n\r\n  Body text  \r\n"
    )
    assert definition.name == "api-rules"
    assert definition.description == "API conventions"
    assert definition.when_to_use == "editing handlers"
    assert definition.paths == ("src/api/**",)  # blank entries dropped
    assert definition.allowed_tools == ("read_file",)
    assert definition.model is None  # "inherit" means no override
    assert definition.disable_model_invocation is True
    assert definition.user_invocable is False
    assert definition.priority == 2
    assert body == "Body text"


def test_yaml_12_scalars_stay_strings() -> None:
    definition, _ = parse("---\nname: n\ndescription: yes\ndisable-model-invocation: yes\n---\nb")
    assert definition.description == "yes"
    assert definition.disable_model_invocation is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no frontmatter", "Failed to parse skill file: Invalid format: missing YAML frontmatter"),
        ("---\ndescription: d\n---\n", 'Failed to parse skill file: Missing "name" in frontmatter'),
        ("---\nname: n\ndescription: ''\n---\n", 'Failed to parse skill file: Missing "description" in frontmatter'),
        ("---\nname: has space\ndescription: d\n---\n", '"name" must match'),
        ("---\nname: n\ndescription: '   '\n---\n", '"description" cannot be empty'),
        ("---\nname: n\ndescription: d\npaths: src/**\n---\n", '"paths" must be an array'),
        ("---\nname: n\ndescription: d\npaths: [/etc/*]\n---\n", "looks absolute"),
        ("---\nname: n\ndescription: d\npaths: ['a/../../b']\n---\n", '".." segment'),
        ("---\nname: n\ndescription: d\nallowedTools: read\n---\n", '"allowedTools" must be an array'),
        ("---\nname: n\ndescription: d\nmodel: 3\n---\n", '"model" must be a string'),
        ("---\nname: [oops\ndescription: d\n---\n", "invalid YAML frontmatter at line 3"),
    ],
)
def test_parse_errors_use_the_reference_wording(text: str, message: str) -> None:
    with pytest.raises(SkillParseError) as info:
        parse(text)
    assert message in str(info.value)
    assert str(info.value).startswith("Failed to parse skill file: ")


def test_unicode_names_are_allowed() -> None:
    definition, _ = parse("---\nname: 代码审查.v2:x_y-z\ndescription: d\n---\n")
    assert definition.name == "代码审查.v2:x_y-z"


# -- discovery ---------------------------------------------------------------


def test_levels_precedence_and_first_provider_wins(root: Path, home: Path) -> None:
    bundled = root.parent / "bundled"
    write_skill(root / ".qwen/skills", "a", "name: shared\ndescription: from project qwen")
    write_skill(root / ".agents/skills", "b", "name: shared\ndescription: from project agents")
    write_skill(root / ".agents/skills", "c", "name: agents-only\ndescription: p")
    write_skill(home / ".qwen/skills", "d", "name: shared\ndescription: from user")
    write_skill(home / ".agents/skills", "e", "name: user-agents\ndescription: u")
    write_skill(bundled, "f", "name: user-agents\ndescription: bundled loses")
    write_skill(bundled, "g", "name: only-bundled\ndescription: b")
    m = manager(root, bundled)
    got = {s.name: (s.level, s.description) for s in m.skills()}
    assert got == {
        "shared": ("project", "from project qwen"),
        "agents-only": ("project", "p"),
        "user-agents": ("user", "u"),
        "only-bundled": ("bundled", "b"),
    }
    assert [s.name for s in m.skills()] == ["agents-only", "only-bundled", "shared", "user-agents"]


def test_project_level_is_skipped_when_the_root_is_home(home: Path) -> None:
    write_skill(home / ".qwen/skills", "x", "name: x\ndescription: user copy")
    write_skill(home / ".agents/skills", "y", "name: y\ndescription: user agents")
    m = manager(home)
    assert {(s.name, s.level) for s in m.skills()} == {("x", "user"), ("y", "user")}


def test_symlinked_skill_dir_outside_the_base_is_loaded(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "skill-repo"
    write_skill(outside, "linked", "name: linked\ndescription: lives elsewhere")
    (root / ".qwen/skills").mkdir(parents=True)
    os.symlink(outside / "linked", root / ".qwen/skills/linked")
    os.symlink(tmp_path / "missing", root / ".qwen/skills/dangling")
    (root / ".qwen/skills/stray-file").write_text("not a skill")
    write_skill(root / ".qwen/skills", "x.backup-1-2", "name: backup\ndescription: install artifact")
    m = manager(root)
    assert [s.name for s in m.skills()] == ["linked"]
    assert m.errors() == []


def test_broken_skill_is_listed_with_its_error_and_others_still_work(root: Path) -> None:
    bad = write_skill(root / ".qwen/skills", "bad", "name: bad\ndescription: [unclosed")
    write_skill(root / ".qwen/skills", "good", "name: good\ndescription: fine", body="Good body")
    m = manager(root)
    assert [s.name for s in m.skills()] == ["good"]
    [error] = m.errors()
    assert error.path == str(bad)
    assert error.message.startswith("Failed to parse skill file: invalid YAML frontmatter")
    assert "Good body" in m.invocation_text("good")


def test_an_unreadable_level_does_not_hide_the_others(root: Path, home: Path) -> None:
    # The user level's base is a file, not a directory: that level yields nothing, the rest load.
    (home / ".qwen/skills").write_text("oops")
    write_skill(root / ".qwen/skills", "p", "name: p\ndescription: project")
    bundled = root.parent / "bundled"
    write_skill(bundled, "b", "name: b\ndescription: bundled")
    assert [s.name for s in manager(root, bundled).skills()] == ["b", "p"]


def test_shipped_bundled_skills_parse() -> None:
    m = SkillManager(Path("/nonexistent-project"), bundled_dir=default_bundled_dir())
    m.refresh()
    assert {s.name for s in m.skills() if s.level == "bundled"} == {"code-review", "write-tests", "explain-code"}
    assert m.errors() == []
    for name in ("code-review", "write-tests", "explain-code"):
        assert len(m.invocation_text(name)) > 1000


def test_disabled_manager_has_no_skills(root: Path) -> None:
    write_skill(root / ".qwen/skills", "p", "name: p\ndescription: project")
    m = SkillManager(root, enabled=False, bundled_dir=root / "none")
    assert m.refresh().empty
    assert m.skills() == []
    m.enabled = True
    assert m.refresh().added == ["p"]


# -- activation state --------------------------------------------------------


def test_conditional_skill_hidden_until_a_matching_file_and_reset_by_refresh(root: Path) -> None:
    write_skill(root / ".qwen/skills", "js", "name: js\ndescription: d\npaths: ['**/*.js']")
    write_skill(root / ".qwen/skills", "plain", "name: plain\ndescription: d")
    m = manager(root)
    assert m.visible_names() == ["plain"]
    assert [(s.name, s.conditional, s.active) for s in m.skills()] == [("js", True, False), ("plain", False, True)]
    assert m.activate_for_paths([root.parent / "elsewhere/.eslintrc.js"]) == []  # outside the project
    assert m.activate_for_paths([root / ".eslintrc.js"]) == ["js"]
    assert m.activate_for_paths(["lib/other.js"]) == []  # already active
    assert m.visible_names() == ["js", "plain"]
    change = m.refresh()
    assert change.removed == ["js"] and change.added == []
    assert m.visible_names() == ["plain"]


def test_model_hidden_conditional_skill_never_activates(root: Path) -> None:
    write_skill(
        root / ".qwen/skills", "h", "name: h\ndescription: d\npaths: ['**']\ndisable-model-invocation: true"
    )
    m = manager(root)
    assert m.activate_for_paths(["a.py"]) == []
    assert m.visible_names() == []


def test_absolute_and_parent_globs_are_dropped_with_an_error_and_the_rest_still_activates(root: Path) -> None:
    path = write_skill(root / ".qwen/skills", "g", "name: g\ndescription: d\npaths: ['/etc/*', '../x/*.py', 'src/**/*.py']")
    m = manager(root)
    errors = {e.path: e.message for e in m.errors()}
    assert set(errors) == {f"{path}#paths[/etc/*]", f"{path}#paths[../x/*.py]"}
    assert "looks absolute" in errors[f"{path}#paths[/etc/*]"] and "dropped" in errors[f"{path}#paths[/etc/*]"]
    assert m.activate_for_paths([root / "src" / "a" / "b.py"]) == ["g"]


def test_an_unclosed_bracket_is_reported_and_kept_literal(root: Path) -> None:
    path = write_skill(root / ".qwen/skills", "g", "name: g\ndescription: d\npaths: ['src/[abc', 'docs/*.md']")
    m = manager(root)
    [error] = m.errors()
    assert error.path == f"{path}#paths[src/[abc]" and '"[" is never closed' in error.message
    assert m.activate_for_paths([root / "docs" / "x.md"]) == ["g"]


def test_invalid_glob_is_reported_and_the_skill_keeps_its_other_globs(root: Path) -> None:
    path = write_skill(root / ".qwen/skills", "g", "name: g\ndescription: d\npaths: ['" + "x" * 70000 + "', '*.py']")
    m = manager(root)
    [error] = m.errors()
    assert error.path.startswith(f"{path}#paths[xxx")
    assert error.message.startswith('Invalid glob in "paths": xxx')
    assert m.activate_for_paths(["main.py"]) == ["g"]


# -- invocation --------------------------------------------------------------


def test_invocation_reads_the_body_now_with_its_base_directory(root: Path) -> None:
    path = write_skill(root / ".qwen/skills", "s", "name: s\ndescription: d", body="old body")
    m = manager(root)
    path.write_text("---\nname: s\ndescription: d\n---\n\nnew body\n\n", encoding="utf-8")
    assert m.invocation_text("s") == (
        f"Base directory for this skill: {path.parent}\n"
        "Important: ALWAYS resolve absolute paths from this base directory when working with skills.\n\n"
        "new body\n"
    )
    path.write_text("garbage", encoding="utf-8")
    with pytest.raises(SkillLoadError, match='Failed to load skill "s"'):
        m.invocation_text("s")


def test_invocation_errors_name_what_is_available(root: Path) -> None:
    write_skill(root / ".qwen/skills", "a", "name: a\ndescription: d")
    write_skill(root / ".qwen/skills", "gated", "name: gated\ndescription: d\npaths: ['*.rs']")
    write_skill(root / ".qwen/skills", "hidden", "name: hidden\ndescription: d\ndisable-model-invocation: true")
    m = manager(root)
    with pytest.raises(SkillNotFound, match='Skill "nope" not found. Available skills: a'):
        m.invocation_text("nope")
    with pytest.raises(SkillNotFound, match="gated by path-based activation"):
        m.invocation_text("gated")
    with pytest.raises(SkillNotFound, match="not found"):
        m.invocation_text("hidden")


def test_list_result_and_table_show_errors_and_conditional_state(root: Path) -> None:
    write_skill(root / ".qwen/skills", "py", "name: py\ndescription: Python rules\npaths: ['**/*.py']")
    write_skill(root / ".qwen/skills", "bad", "name: bad")
    m = manager(root)
    result = skills_list_result(m).wire()
    assert result["skills"] == [
        {
            "name": "py",
            "description": "Python rules",
            "level": "project",
            "path": str(root / ".qwen/skills/py/SKILL.md"),
            "conditional": True,
            "active": False,
            "modelInvocable": True,
            "paths": ["**/*.py"],
        }
    ]
    assert result["errors"] == [
        {
            "path": str(root / ".qwen/skills/bad/SKILL.md"),
            "message": 'Failed to parse skill file: Missing "description" in frontmatter',
        }
    ]
    m.activate_for_paths(["a.py"])
    table = format_skill_list(m)
    assert "py  project  Python rules [active: **/*.py]" in table
    assert 'Errors (1):\n  ' in table and 'Missing "description"' in table
