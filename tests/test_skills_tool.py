"""The ``skill`` tool: a declaration that never moves, lazy body loading, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.agent.tools.skill import SkillTool
from qwen_lsp.skills import SkillManager


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SkillManager, SkillTool, ToolContext]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "home/.qwen"))
    root = tmp_path / "proj"
    skill = root / ".qwen/skills/api/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: api\ndescription: API rules\npaths: ['src/api/**']\nmodel: fast-model\n"
        "allowedTools: [read_file]\n---\nUse the handler base class.\n"
    )
    manager = SkillManager(root, bundled_dir=tmp_path / "none")
    manager.refresh()
    return manager, SkillTool(manager), ToolContext(workspace_root=root, cwd=root)


def declaration_bytes(tool: SkillTool) -> bytes:
    return json.dumps(tool.declaration(), sort_keys=False, ensure_ascii=False).encode()


async def test_declaration_is_static_and_names_no_skill(setup) -> None:
    manager, tool, _ctx = setup
    before = declaration_bytes(tool)
    manager.activate_for_paths(["src/api/users.py"])
    extra = manager.project_root / ".qwen/skills/another/SKILL.md"
    extra.parent.mkdir()
    extra.write_text("---\nname: another\ndescription: d\n---\nb\n")
    manager.refresh()
    assert declaration_bytes(tool) == before
    empty = SkillManager(manager.project_root / "elsewhere", enabled=False)
    assert declaration_bytes(SkillTool(empty)) == before  # independent of which skills exist
    decl = tool.declaration()
    assert decl["function"]["name"] == "skill"
    assert decl["function"]["parameters"]["required"] == ["skill"]
    decl["function"]["name"] = "mutated"  # callers cannot corrupt the shared constant
    assert declaration_bytes(tool) == before


async def test_run_returns_the_body_once_the_skill_is_active(setup) -> None:
    manager, tool, ctx = setup
    gated = await tool.run({"skill": "api"}, ctx)
    assert gated.is_error and "gated by path-based activation" in gated.output

    manager.activate_for_paths(["src/api/users.py"])
    result = await tool.run({"skill": " api "}, ctx)
    assert not result.is_error
    assert result.output.startswith("Base directory for this skill: ")
    assert result.output.endswith("Use the handler base class.\n")
    assert result.display == "API rules"
    assert result.extra == {"skill": "api", "model": "fast-model", "allowedTools": ["read_file"]}


@pytest.mark.parametrize("args", [{}, {"skill": ""}, {"skill": "  "}, {"skill": 3}])
async def test_bad_arguments_are_errors_not_exceptions(setup, args) -> None:
    _manager, tool, ctx = setup
    result = await tool.run(args, ctx)
    assert result.is_error and result.output == 'Parameter "skill" must be a non-empty string.'


async def test_unknown_skill_lists_what_is_available(setup) -> None:
    _manager, tool, ctx = setup
    result = await tool.run({"skill": "nope"}, ctx)
    assert result.is_error and result.output == 'Skill "nope" not found. No skills are currently available.'
