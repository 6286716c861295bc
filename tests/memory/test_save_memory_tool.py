"""The model's ``save_memory`` tool: Qwen Code's name and parameters, writing through MemoryStore."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.features.memory.save_memory import SaveMemoryTool
from qwen_lsp.memory.store import MemoryStore


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    return MemoryStore(tmp_path / "repo", home=tmp_path / "home", env={})


def ctx(store: MemoryStore) -> ToolContext:
    return ToolContext(workspace_root=store.paths.project_root, cwd=store.paths.project_root)


def test_declaration_has_qwen_codes_name_and_parameters(store: MemoryStore):
    tool = SaveMemoryTool(store)
    decl = tool.declaration()
    assert tool.name == "save_memory" and decl["function"]["name"] == "save_memory"
    params = decl["function"]["parameters"]
    assert params["required"] == ["fact"]
    assert set(params["properties"]) == {"fact", "scope"}
    assert params["properties"]["scope"]["enum"] == ["global", "project"]
    assert json.dumps(decl, sort_keys=True) == json.dumps(SaveMemoryTool(store).declaration(), sort_keys=True)


async def test_project_scope_by_default_writes_a_feedback_memory(store: MemoryStore):
    result = await SaveMemoryTool(store).run({"fact": "Run `make check` before pushing."}, ctx(store))
    assert not result.is_error
    assert result.output == 'Okay, I\'ve remembered that in project memory: "Run `make check` before pushing."'
    [doc] = store.scan("project")
    assert doc.type == "feedback" and doc.body == "Run `make check` before pushing."
    assert result.extra == {"memory_path": str(doc.path), "memory_scope": "project"}
    assert "make check" in store.index_text("project")


async def test_global_scope_goes_to_user_memory(store: MemoryStore):
    result = await SaveMemoryTool(store).run({"fact": "My favourite colour is blue.", "scope": "global"}, ctx(store))
    assert not result.is_error
    [doc] = store.scan("user")
    assert (doc.scope, doc.type) == ("user", "user")


@pytest.mark.parametrize("args", [{}, {"fact": ""}, {"fact": "   "}, {"fact": "x", "scope": "team"}])
async def test_bad_arguments_are_tool_errors(store: MemoryStore, args: dict):
    result = await SaveMemoryTool(store).run(args, ctx(store))
    assert result.is_error
    assert store.scan("project") == [] and store.scan("user") == []


async def test_store_refusals_reach_the_model_as_errors(store: MemoryStore, tmp_path: Path):
    store.root("project").mkdir(parents=True)
    (store.root("project") / "feedback").symlink_to(tmp_path)  # leads out of the root
    result = await SaveMemoryTool(store).run({"fact": "Anything"}, ctx(store))
    assert result.is_error and result.output.startswith("Error saving memory: ")
