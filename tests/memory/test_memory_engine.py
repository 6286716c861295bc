"""Memory through the engine: remember/list/forget, the prompt block, recall timing, save_memory, settings."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.rules_repo import git
from support.scripted_openai import Reply, ScriptedOpenAI, Stall, ToolCallSpec

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.features.memory.feature import MemoryFeature

from qwen_lsp.workspace import Listeners, Workspace
from qwen_lsp.errors import EngineError
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.protocol import MemoryChanged

GITHUB_TOKEN = "ghp_" + "R4nd0mT0k3n" * 3 + "abc"


def memory_of(workspace: Workspace):
    return workspace.feature(MemoryFeature).manager


def ignore(_event: TurnEvent) -> None:
    return None


@pytest.fixture
def repo(home: Path) -> Path:
    ws = home / "work" / "app"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    git(ws, "init", "-q")
    return ws


def make_engine(repo: Path, scripted: ScriptedOpenAI, changes: list[MemoryChanged], approval: str = "default", **settings: Any) -> Workspace:
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    client = {"memory": {"autoExtract": False, "autoDream": False, **settings}, "tools": {"approvalMode": approval}}
    return Workspace(repo, counter=TokenCounter(), env=env, client_settings=client, listeners=Listeners(memory_changed=changes.append))


def is_side_query(body: dict[str, Any]) -> bool:
    return "tools" not in body and body.get("response_format") is not None


def first_system(scripted: ScriptedOpenAI) -> str:
    main = [r for r in scripted.chat_requests() if not is_side_query(r.body)]
    return str(main[-1].body["messages"][0]["content"])


async def test_remember_list_forget_round_trip(repo: Path, scripted: ScriptedOpenAI) -> None:
    changes: list[MemoryChanged] = []
    engine = make_engine(repo, scripted, changes)
    try:
        saved = await memory_of(engine).remember("Tests here never mock the database; they use the dockerised Postgres.")
        path = Path(saved.path)
        assert (saved.scope, saved.type) == ("project", "feedback")
        assert path.is_file() and path.parent.name == "feedback"
        assert path.parent.parent == memory_of(engine).store.root("project")
        index = (path.parent.parent / "MEMORY.md").read_text()
        assert f"(feedback/{path.name})" in index and index.count("\n- ") + index.startswith("- ") == 1
        assert [c.wire() for c in changes] == [{"scope": "project", "paths": [str(path)]}]

        listed = (await memory_of(engine).list()).wire()["memories"]
        assert [(m["path"], m["scope"], m["type"], m["age"]) for m in listed] == [(str(path), "project", "feedback", "today")]

        found = (await memory_of(engine).forget_candidates("mock the database")).candidates
        assert [c.path for c in found] == [str(path)]
        assert path.is_file()  # step one removes nothing
        removed = (await memory_of(engine).forget([Path(found[0].path), repo / "src" / "app.py"])).removed
        assert removed == [str(path)] and not path.exists()
        assert (repo / "src" / "app.py").is_file()  # outside every memory root: refused, untouched
        assert changes[-1].wire() == {"scope": "project", "paths": [str(path)]}
        assert (await memory_of(engine).list()).memories == []
    finally:
        await engine.drain()


async def test_a_secret_for_team_memory_is_refused_naming_the_rule(repo: Path, scripted: ScriptedOpenAI) -> None:
    changes: list[MemoryChanged] = []
    engine = make_engine(repo, scripted, changes)
    try:
        with pytest.raises(EngineError) as info:
            await memory_of(engine).remember(f"deploy token is {GITHUB_TOKEN}", scope="team")
        assert info.value.kind == "secret" and "GitHub PAT" in info.value.message
        assert GITHUB_TOKEN not in info.value.message
        assert not (repo / ".qwen" / "team-memory").exists() or not list((repo / ".qwen" / "team-memory").rglob("*.md"))
        assert changes == []
    finally:
        await engine.drain()


async def test_the_memory_block_is_in_the_prompt_and_stable_until_memory_changes(repo: Path, scripted: ScriptedOpenAI) -> None:
    engine = make_engine(repo, scripted, [])
    try:
        await engine.chat("first", emit=ignore)
        empty = first_system(scripted)
        assert "# auto memory" in empty
        saved = await memory_of(engine).remember("Prefer pathlib over os.path in new code.")
        result = await engine.chat("second", emit=ignore)
        with_one = first_system(scripted)
        assert with_one != empty and f"feedback/{Path(saved.path).name}" in with_one
        await engine.chat("third", session_id=result.session_id, emit=ignore)
        assert first_system(scripted) == with_one  # byte-stable while nothing changes
    finally:
        await engine.drain()


async def test_memory_off_drops_the_block_and_recall_without_a_restart(repo: Path, scripted: ScriptedOpenAI) -> None:
    engine = make_engine(repo, scripted, [])
    try:
        await memory_of(engine).remember("Release branches are named release/YYYY-MM.")
        await engine.update_client_settings({"memory": {"enabled": False, "autoExtract": False}})
        await engine.chat("how are release branches named?", emit=ignore)
        body = json.dumps(scripted.chat_requests()[-1].body)
        assert "# auto memory" not in body and "Relevant memory" not in body
        assert len(scripted.chat_requests()) == 1  # and no selector side query
    finally:
        await engine.drain()


@pytest.mark.parametrize("selector", ["answers in 50 ms", "hung"])
async def test_a_tool_less_turn_gets_its_memory_in_the_first_request(repo: Path, scripted: ScriptedOpenAI, selector: str) -> None:
    """As Qwen Code 0.24.4 (checked side by side with its CLI): the first request waits for recall at most
    100 ms, then carries what is ready — the selector's choice, or the keyword scorer's top two while
    the selector is still out — as a bare text part after the startup reminders."""
    saved: list[str] = []

    def route(body: dict[str, Any]) -> Any:
        if not is_side_query(body):
            return Reply(chunks=["answered"])
        if selector == "hung":
            return Stall(after=60)  # held until the turn hangs up on it
        return Reply(chunks=[json.dumps({"selected_memories": saved})], first_delay=0.05)

    scripted.default = route
    engine = make_engine(repo, scripted, [])
    try:
        saved.append((await memory_of(engine).remember("Release branches are named release/YYYY-MM.")).path)
        await memory_of(engine).remember("Use ruff for linting, never flake8.")
        result = await engine.chat("how are release branches named?", emit=ignore)
        assert result.text == "answered"
        main = [r for r in scripted.chat_requests() if not is_side_query(r.body)]
        assert len(main) == 1 and any(is_side_query(r.body) for r in scripted.chat_requests())
        parts = [p["text"] for p in main[0].body["messages"][-1]["content"]]
        at = next(i for i, t in enumerate(parts) if t.startswith("## Relevant memory"))
        assert "release/YYYY-MM" in parts[at] and "ruff" not in parts[at]
        assert parts[at - 1].startswith("<system-reminder>") and "setting up the context" in "".join(parts[:at])
        assert parts[-1] == "how are release branches named?"
    finally:
        await engine.drain()


async def test_recall_settled_in_time_goes_first_and_is_not_offered_twice(repo: Path, scripted: ScriptedOpenAI) -> None:
    saved: list[str] = []

    def route(body: dict[str, Any]) -> Any:
        if is_side_query(body):
            return Reply(chunks=[json.dumps({"selected_memories": saved})])
        return Reply(chunks=[], tool_calls=[ToolCallSpec("list_directory", {"path": "."})]) if len(scripted.chat_requests()) < 3 else Reply(chunks=["done"])

    scripted.default = route
    engine = make_engine(repo, scripted, [])
    try:
        saved.append((await memory_of(engine).remember("Release branches are named release/YYYY-MM.")).path)
        result = await engine.chat("how are release branches named?", emit=ignore)
        main = [r.body for r in scripted.chat_requests() if not is_side_query(r.body)]
        assert sum("Relevant memory" in json.dumps(b["messages"][-1]) for b in main) == 1  # once, first or after the tool round
        turn_two = len(scripted.chat_requests())
        await engine.chat("and how are release branches named again?", session_id=result.session_id, emit=ignore)
        later = [r.body for r in scripted.chat_requests()[turn_two:] if not is_side_query(r.body)]
        assert all("Relevant memory" not in json.dumps(b["messages"][-1]) for b in later)  # already surfaced in this chat
    finally:
        await engine.drain()


async def test_recall_report_model_and_heuristic(repo: Path, scripted: ScriptedOpenAI) -> None:
    engine = make_engine(repo, scripted, [])
    try:
        a = await memory_of(engine).remember("Release branches are named release/YYYY-MM.")
        await memory_of(engine).remember("Use ruff for linting, never flake8.")
        scripted.enqueue(Reply(chunks=[json.dumps({"selected_memories": [a.path]})]))
        by_model = await memory_of(engine).recall_report("release branch naming")
        assert by_model.strategy == "model" and [m.path for m in by_model.memories] == [a.path]
        assert "## Relevant memory" in by_model.text
        heuristic = await memory_of(engine).recall_report("release branch naming", use_model=False)
        assert heuristic.strategy == "heuristic" and heuristic.memories[0].path == a.path
        nothing = await memory_of(engine).recall_report("kubernetes helm charts", use_model=False)
        assert nothing.strategy == "none" and nothing.memories == []
    finally:
        await engine.drain()


async def test_the_models_save_memory_tool_writes_and_notifies(repo: Path, scripted: ScriptedOpenAI) -> None:
    changes: list[MemoryChanged] = []
    engine = make_engine(repo, scripted, changes)
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("save_memory", {"fact": "The user prefers tabs.", "scope": "global"})]), Reply(chunks=["saved"]))
    try:
        await engine.chat("remember that I prefer tabs", emit=ignore)
        [change] = changes
        assert change.scope == "user" and Path(change.paths[0]).read_text().count("The user prefers tabs.") >= 1
        tools = [t["function"]["name"] for t in scripted.chat_requests()[0].body["tools"]]
        assert "save_memory" in tools
    finally:
        await engine.drain()


async def test_a_memory_qwen_code_wrote_is_listed_and_recalled(repo: Path, scripted: ScriptedOpenAI) -> None:
    engine = make_engine(repo, scripted, [])
    root = memory_of(engine).store.root("project")
    (root / "project").mkdir(parents=True)
    (root / "project" / "deploy_freeze.md").write_text(
        "---\nname: Deploy freeze\ndescription: No deploys on Fridays after 14:00 UTC\ntype: project\n---\n\n"
        "No deploys on Fridays after 14:00 UTC.\n**Why:** incidents over weekends.\n**How to apply:** schedule releases earlier.\n"
    )
    try:
        listed = (await memory_of(engine).list("project")).memories
        assert [(m.name, m.type) for m in listed] == [("Deploy freeze", "project")]
        report = await memory_of(engine).recall_report("can we deploy on friday afternoon", use_model=False)
        assert [m.name for m in report.memories] == ["Deploy freeze"]
    finally:
        await engine.drain()


async def test_startup_brings_a_stale_index_in_line(repo: Path, scripted: ScriptedOpenAI) -> None:
    engine = make_engine(repo, scripted, [])
    try:
        saved = await memory_of(engine).remember("Migrations are generated, never hand-written.")
        index = memory_of(engine).store.root("project") / "MEMORY.md"
        index.write_text("")  # a crash between the file's rename and the index rebuild
        await engine.start_watching(asyncio.get_running_loop())
        for _ in range(100):
            if Path(saved.path).name in index.read_text():
                break
            await asyncio.sleep(0.02)
        assert Path(saved.path).name in index.read_text()
    finally:
        await engine.drain()


async def test_extraction_after_a_turn_writes_a_memory_through_a_fork_of_that_turn(repo: Path, scripted: ScriptedOpenAI) -> None:
    changes: list[MemoryChanged] = []
    engine = make_engine(repo, scripted, changes, approval="auto-edit", autoExtract=True)  # the chat declares write_file/edit
    root = memory_of(engine).store.root("project")
    target = root / "feedback" / "no-db-mocks.md"
    memory_file = "---\nname: No database mocks\ndescription: Tests use the dockerised Postgres, never mocks\ntype: feedback\n---\n\nTests never mock the database.\n"
    scripted.enqueue(
        Reply(chunks=["Noted: real Postgres in tests."]),  # the user's turn
        Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": memory_file})]),  # the fork
        Reply(chunks=["Saved one memory."]),
    )
    try:
        await engine.chat("FYI: tests here never mock the database, they use the dockerised Postgres.", emit=ignore)
        for _ in range(250):
            if changes:
                break
            await asyncio.sleep(0.02)
        assert [c.wire() for c in changes] == [{"scope": "project", "paths": [str(target)]}]
        assert target.read_text() == memory_file and "no-db-mocks.md" in (root / "MEMORY.md").read_text()
        turn, fork = (r.body for r in scripted.chat_requests()[:2])
        assert fork["messages"][0] == turn["messages"][0]  # the same system prompt, byte for byte
        assert json.dumps(fork["messages"][1 : len(turn["messages"])]) == json.dumps(turn["messages"][1:])  # the same history prefix
        assert json.dumps(fork["tools"]) == json.dumps(turn["tools"])  # the chat declares write_file/edit: the same array, byte for byte
        cursor = json.loads((memory_of(engine).store.state_dir() / "extract-cursor.json").read_text())
        assert cursor["processedOffset"] == 2
    finally:
        await engine.drain()


async def test_shutdown_during_extraction_leaves_whole_files(repo: Path, scripted: ScriptedOpenAI) -> None:
    engine = make_engine(repo, scripted, [], autoExtract=True)
    scripted.enqueue(Reply(chunks=["ok"]), Stall(after=60))  # the fork's request never finishes
    await engine.chat("remember: releases go out on Tuesdays", emit=ignore)
    for _ in range(250):
        if len(scripted.chat_requests()) == 2:
            break
        await asyncio.sleep(0.02)
    await engine.drain()  # cancels the extraction: nothing half-written, nothing recorded as done
    root = memory_of(engine).store.root("project")
    assert not root.exists() or not [p for p in root.rglob("*") if p.is_file() and p.name != "MEMORY.md"]
    assert not (memory_of(engine).store.state_dir() / "extract-cursor.json").exists()


TABS_MEMORY = "---\nname: Makefile tabs\ndescription: The user wants tabs in Makefiles\ntype: feedback\n---\nIndent Makefile recipes with tabs.\n"


async def test_remember_in_the_chat_writes_the_memory_folder_as_the_block_says(repo: Path, scripted: ScriptedOpenAI) -> None:
    """The memory block (as Qwen Code 0.24.4's) tells the model to save with write_file into the memory folder;
    the chat may (asked like any write; yolo here), the write goes through the store and the index follows."""
    changes: list[MemoryChanged] = []
    engine = make_engine(repo, scripted, changes, approval="yolo")
    target = memory_of(engine).store.root("project") / "feedback" / "makefile-tabs.md"
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": TABS_MEMORY})]), Reply(chunks=["saved"]))
    try:
        await engine.chat("Remember: I want tabs in Makefiles", emit=ignore)
        assert target.read_text() == TABS_MEMORY
        index = (target.parent.parent / "MEMORY.md").read_text()
        assert "- [Makefile tabs](feedback/makefile-tabs.md) — The user wants tabs in Makefiles" in index
        assert [c.wire() for c in changes] == [{"scope": "project", "paths": [str(target)]}]
        tool_result = scripted.chat_requests()[-1].body["messages"][-1]
        assert tool_result["role"] == "tool" and "Successfully created" in tool_result["content"]
        # Read back as the CLI reads it: its recall finds the file (checked with the real 0.24.4 CLI too).
        report = await memory_of(engine).recall_report("how should I indent Makefiles?", use_model=False)
        assert [m.path for m in report.memories] == [str(target)]
    finally:
        await engine.drain()


async def test_a_refused_memory_write_reaches_the_model_and_extraction_still_runs(repo: Path, scripted: ScriptedOpenAI) -> None:
    engine = make_engine(repo, scripted, [], approval="yolo", autoExtract=True)
    index = memory_of(engine).store.root("project") / "MEMORY.md"
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(index), "content": "- [x](x.md)\n"})]),
        Reply(chunks=["could not save"]),
        Reply(chunks=["nothing to save"]),  # the extraction fork
    )
    try:
        await engine.chat("Remember: I want tabs in Makefiles", emit=ignore)
        refused = scripted.chat_requests()[1].body["messages"][-1]
        assert refused["role"] == "tool" and "MEMORY.md is generated" in refused["content"]
        assert not index.exists()
        await engine.drain()
        assert len(scripted.chat_requests()) == 3  # the fork ran: the refused write did not count as saved
        assert "Remember: I want tabs" in json.dumps(scripted.chat_requests()[2].body)
    finally:
        await engine.drain()


TEAM_INDEX = "- [Deploy](reference/deploy.md) — TEAM-ONLY deploy runbook\n"


@pytest.mark.parametrize(
    ("setting", "env", "trusted", "shown"),
    [
        (False, None, True, False),  # committed, but nobody opted in
        (True, None, False, False),  # opted in, folder not trusted
        (True, None, True, True),
        (False, "1", True, True),
        (True, "0", True, False),  # QWEN_CODE_MEMORY_TEAM=0 wins over the setting
        (False, "1", False, False),
    ],
)
async def test_committed_team_memory_needs_opt_in_and_trust(
    repo: Path, scripted: ScriptedOpenAI, home: Path, setting: bool, env: str | None, trusted: bool, shown: bool
) -> None:
    """As Qwen Code 0.24.4: getTeamMemoryEnabled (setting, QWEN_CODE_MEMORY_TEAM override) and isTrustedFolder."""
    team = repo / ".qwen" / "team-memory"
    (team / "reference").mkdir(parents=True)
    (team / "reference" / "deploy.md").write_text("---\nname: Deploy\ndescription: TEAM-ONLY deploy runbook\ntype: reference\n---\nbody\n")
    (team / "MEMORY.md").write_text(TEAM_INDEX)
    (home / ".qwen" / "settings.json").write_text(json.dumps({"folderTrust": trusted, "memory": {"autoExtract": False, "autoDream": False}}))
    environ = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    if env is not None:
        environ["QWEN_CODE_MEMORY_TEAM"] = env
    client = {"memory": {"autoExtract": False, "autoDream": False, "enableTeamMemory": setting}}
    engine = Workspace(repo, counter=TokenCounter(), env=environ, client_settings=client)
    try:
        await engine.chat("hello", emit=ignore)
        assert ("TEAM-ONLY deploy runbook" in first_system(scripted)) is shown
        assert (str(team.resolve()) in [str(r) for r in memory_of(engine).chat_write_roots()]) is shown
    finally:
        await engine.drain()


async def test_recall_finds_a_memory_older_than_the_200_newest(repo: Path, scripted: ScriptedOpenAI) -> None:
    """Qwen Code 0.24.4 recalls from every memory (scanAllAutoMemoryTopicDocuments), not the 200 newest."""
    engine = make_engine(repo, scripted, [])
    root = memory_of(engine).store.root("project") / "project"
    root.mkdir(parents=True)
    for i in range(205):
        path = root / f"note-{i:03}.md"
        topic = "Helm charts live in deploy/helm" if i == 0 else f"Sprint note number {i}"
        path.write_text(f"---\nname: {topic}\ndescription: {topic}\ntype: project\n---\n{topic}.\n")
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))  # note-000 is the oldest
    try:
        report = await memory_of(engine).recall_report("where are the helm charts?", use_model=False)
        assert [Path(m.path).name for m in report.memories][:1] == ["note-000.md"]
        assert len((await memory_of(engine).list("project")).memories) == 200  # the listing keeps its cap
    finally:
        await engine.drain()


async def test_a_team_folder_linked_out_of_the_repository_gives_the_chat_nothing(repo: Path, scripted: ScriptedOpenAI, tmp_path: Path) -> None:
    """A cloned repository's ``.qwen/team-memory`` → elsewhere must not widen what the chat may read or write."""
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "id_rsa").write_text("PRIVATE")
    (repo / ".qwen").mkdir()
    (repo / ".qwen" / "team-memory").symlink_to(secret)
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model", "QWEN_CODE_MEMORY_TEAM": "1"}
    client = {"memory": {"autoExtract": False, "autoDream": False}, "tools": {"approvalMode": "yolo"}}
    engine = Workspace(repo, counter=TokenCounter(), env=env, client_settings=client)
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", {"file_path": str(repo / ".qwen" / "team-memory" / "id_rsa")})]), Reply(chunks=["done"]))
    try:
        roots = memory_of(engine).chat_write_roots()
        assert memory_of(engine).team_in_use() and roots and not any(secret.resolve().is_relative_to(r) or r == secret.resolve() for r in roots)
        await engine.chat("read the team key", emit=ignore)
        result = scripted.chat_requests()[-1].body["messages"][-1]
        assert result["role"] == "tool" and "PRIVATE" not in result["content"] and "outside the workspace" in result["content"]
    finally:
        await engine.drain()


def swapped_team_folder(repo: Path, outside: Path, scripted: ScriptedOpenAI, calls: list[str]) -> Workspace:
    """A trusted folder with team memory on, whose ``.qwen/team-memory`` is a real folder until the model's
    ``len(calls)``-th request arrives: then it is swapped for a link to ``outside`` (as a command could). Each
    request is answered with the next ``read_file`` of ``calls`` (a path below the team folder), then "done"."""
    team = repo / ".qwen" / "team-memory"
    team.mkdir(parents=True)
    (team / "notes.md").write_text("---\nname: notes\ndescription: team notes\ntype: project\n---\nTeam notes.\n")
    outside.mkdir()
    (outside / "id_rsa").write_text("PRIVATE")
    main: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> Reply:
        if is_side_query(body) or "tools" not in body:
            return Reply(chunks=["{}"])
        main.append(body)
        if len(main) == len(calls):
            team.rename(team.with_name("team-memory.old"))
            team.symlink_to(outside)
        if len(main) <= len(calls):
            return Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", {"file_path": str(team / calls[len(main) - 1])}, id=f"c{len(main)}")])
        return Reply(chunks=["done"])

    scripted.default = answer
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model", "QWEN_CODE_MEMORY_TEAM": "1"}
    client = {"memory": {"autoExtract": False, "autoDream": False}, "tools": {"approvalMode": "yolo"}}
    return Workspace(repo, counter=TokenCounter(), env=env, client_settings=client)


@pytest.mark.parametrize(
    "calls",
    [["id_rsa"], ["notes.md", "id_rsa"]],
    ids=["swapped while the model answers", "swapped after a tool call of the same turn"],
)
async def test_a_team_folder_swapped_for_a_link_during_a_turn_gives_the_chat_nothing(
    repo: Path, scripted: ScriptedOpenAI, tmp_path: Path, calls: list[str]
) -> None:
    """Where the chat may read outside the workspace is resolved right before the turn's first tool call and
    never again: a link planted after the request left, or between two tool calls, leads nowhere."""
    engine = swapped_team_folder(repo, tmp_path / "outside", scripted, calls)
    try:
        assert memory_of(engine).team_in_use()
        await engine.chat("read the team key", emit=ignore)
        results = [m for r in scripted.chat_requests() for m in r.body["messages"] if m["role"] == "tool"]
        assert "Team notes." in results[0]["content"] if calls[0] == "notes.md" else True
        last = scripted.chat_requests()[-1].body["messages"][-1]
        assert last["role"] == "tool" and "PRIVATE" not in last["content"] and "outside the workspace" in last["content"]
    finally:
        await engine.drain()
