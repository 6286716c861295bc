"""Hostile patterns and links: regexes, globs and symlinks from the model or a cloned repository.

Each attack is built as files in a temp dir and run against the real tools,
the real activation index, or the real server over stdio. Timeouts here are
hang detectors (the attacks used to run for minutes or forever), never
assertions about speed.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from support.scripted_openai import Reply, ScriptedOpenAI, Stall, ToolCallSpec

from lsp_harness import as_dict, open_doc, running_server, wait_for
from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.agent.tools.glob import GlobTool
from qwen_lsp.agent.tools.grep import GrepArgs, GrepTool
from qwen_lsp.matching.globs import MAX_NEGATED_EXTGLOBS, ActivationIndex, InvalidGlob, compile_glob
from qwen_lsp.matching.safe_glob import compile_pattern

HANG = 30.0
"""Seconds after which an attack counts as having frozen the server."""

CATASTROPHIC_REGEXES = ["(a+)+$", "(a|aa)+$", "(a*)*b", "^(\\w+\\s?)*$", "(.*a){12}"]
EXPONENTIAL_GLOBS = ["**/+(?|?)Z", "**/*(a|aa)*(a|aa)Z", "+(+(a))Q", "**/@(*|*)@(*|*)@(*|*)Z"]


def ctx_for(root: Path) -> ToolContext:
    return ToolContext(workspace_root=root, cwd=root)


async def run_tool(tool, root: Path, **args) -> ToolResult:
    return await asyncio.wait_for(tool.run(args, ctx_for(root)), HANG)


async def off_loop(fn, *args):
    """Run a blocking call in a thread with the hang detector (a frozen call would pin the test forever)."""
    return await asyncio.wait_for(asyncio.to_thread(fn, *args), HANG)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


# --- the model's regexes -----------------------------------------------------------------


@pytest.mark.parametrize("pattern", CATASTROPHIC_REGEXES)
async def test_catastrophic_regex_returns(root: Path, pattern: str) -> None:
    (root / "bait.txt").write_text("a" * 60 + "!\n" + "word " * 2000 + "!\n" + "a" * 5000 + "\n")
    result = await run_tool(GrepTool(), root, pattern=pattern)
    assert not result.is_error
    assert result.output.startswith(("Found", "No matches"))


@pytest.mark.parametrize(("pattern", "what"), [("(a)\\1", "backreferences"), ("a(?=b)", "lookarounds"), ("(?<!x)a", "lookarounds")])
async def test_backtracking_only_syntax_is_refused_with_a_clear_message(root: Path, pattern: str, what: str) -> None:
    (root / "a.txt").write_text("aa ab\n")
    result = await run_tool(GrepTool(), root, pattern=pattern)
    assert result.is_error
    assert what in result.output and "linear-time" in result.output


async def test_everyday_regex_syntax_still_works(root: Path) -> None:
    (root / "m.py").write_text("def alpha(x):\n    return x\nclass Beta:\n")
    result = await run_tool(GrepTool(), root, pattern=r"^(def|class)\s+\w+")
    assert result.output.splitlines()[0] == 'Found 2 matches for pattern "^(def|class)\\s+\\w+" in the workspace directory:'


def test_a_cancelled_search_stops_reading(root: Path) -> None:
    for i in range(20):
        (root / f"f{i}.txt").write_text("needle\n")
    stop = threading.Event()
    ctx = ctx_for(root)
    args = GrepArgs(pattern="needle")
    assert "Found 20 matches" in GrepTool().execute_cancellable(args, ctx, stop).result.output
    stop.set()
    assert GrepTool().execute_cancellable(args, ctx, stop).result.output.startswith("No matches")


# --- globs: the model's glob tool, grep's filter, skills and rules ------------------------


@pytest.mark.parametrize("pattern", EXPONENTIAL_GLOBS)
async def test_exponential_glob_tool_pattern_returns(root: Path, pattern: str) -> None:
    (root / "deep" / "er").mkdir(parents=True)
    (root / "deep" / "er" / ("a" * 80)).write_text("x")
    (root / ("a" * 200)).write_text("x")
    result = await run_tool(GlobTool(), root, pattern=pattern)
    assert result.output.startswith("No files found")


async def test_exponential_glob_in_grep_filter_returns(root: Path) -> None:
    (root / ("a" * 200 + ".txt")).write_text("needle\n")
    result = await run_tool(GrepTool(), root, pattern="needle", glob="*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b.txt")
    assert result.output.startswith("No matches")


async def test_negated_extglob_works_within_its_bound_and_is_refused_past_it(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "a.ts").write_text("x")
    (root / "src" / "a.test.ts").write_text("x")
    ok = await run_tool(GlobTool(), root, pattern="**/!(*.test).ts")
    assert str(root / "src" / "a.ts") in ok.output and "a.test.ts" not in ok.output
    refused = await run_tool(GlobTool(), root, pattern="!(a)/!(b)/*.ts")
    assert refused.is_error and "only one negated extglob" in refused.output


async def test_hostile_negated_glob_on_a_long_name_returns() -> None:
    match = compile_pattern("*!(*a*)*a")
    assert await off_loop(match, "a" * 1000) in (True, False)


@pytest.mark.parametrize("pattern", ["**/+(?|?)Q", "**/*(a|aa)*(a|aa)Q", "!**/+(?|?)Q"])
async def test_exponential_paths_glob_does_not_block_activation(pattern: str) -> None:
    index = ActivationIndex([("bomb", [pattern]), ("py", ["**/*.py"])])
    hits = await off_loop(index.match, "src/" + "a" * 60)
    assert "py" not in hits
    expected = ["bomb", "py"] if pattern.startswith("!") else ["py"]
    assert await off_loop(index.match, "src/x.py") == expected


def test_huge_brace_range_is_dropped_not_raised() -> None:
    with pytest.raises(InvalidGlob, match="brace expansion"):
        compile_glob("f{1..2000}.py")
    index = ActivationIndex([("ranged", ["f{1..2000}.py", "**/*.md"]), ("other", ["src/**"])])
    assert [(d.skill, d.pattern) for d in index.dropped] == [("ranged", "f{1..2000}.py")]
    assert index.match("docs/a.md") == ["ranged"]
    assert index.match("src/x.py") == ["other"]


async def test_many_negated_extglobs_are_capped_so_one_didopen_stays_bounded() -> None:
    hostile = [(f"n{i}", ["*!(*a*)*a"]) for i in range(MAX_NEGATED_EXTGLOBS + 40)]
    index = ActivationIndex([*hostile, ("py", ["**/*.py"])])
    assert len(index.dropped) == 40 and "negated extglob" in index.dropped[0].message
    assert "py" not in await off_loop(index.match, "d/" + "a" * 1000)
    assert (await off_loop(index.match, "src/x.py"))[-1] == "py"


@pytest.mark.parametrize(
    "pattern",
    ["@(" * 5000 + "a" + ")" * 5000, "[" * 60000, "[[[[/" * 10000, "{" * 3000 + "a,b" + "}" * 3000, "?(" * 20000],
)
async def test_deeply_nested_or_unclosed_glob_is_dropped_not_raised(pattern: str) -> None:
    index = await off_loop(ActivationIndex, [("bad", [pattern]), ("py", ["**/*.py"])])
    assert [d.skill for d in index.dropped] == ["bad"]
    assert index.match("x.py") == ["py"]


# --- symlinks out of (and within) the workspace ------------------------------------------


@pytest.fixture
def linked(tmp_path: Path, root: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("root:x:0:0:TOP-SECRET\n")
    (root / "pw").symlink_to(outside / "secret.txt")
    (root / "up").symlink_to(outside)  # a directory link out
    (root / "loop").symlink_to(root)  # a directory link loop
    (root / "docs").mkdir()
    (root / "docs" / "real.md").write_text("root: inside the project\n")
    (root / "alias.md").symlink_to(root / "docs" / "real.md")  # a legitimate link inside
    return root


async def test_grep_does_not_follow_links_out_of_the_workspace(linked: Path) -> None:
    result = await run_tool(GrepTool(), linked, pattern="root:")
    assert "TOP-SECRET" not in result.output
    assert "File: pw" not in result.output
    assert "File: alias.md" in result.output and "File: docs/real.md" in result.output


async def test_glob_does_not_list_links_out_of_the_workspace(linked: Path) -> None:
    result = await run_tool(GlobTool(), linked, pattern="**/*")
    listed = set(result.output.split("\n---\n")[1].splitlines())
    assert str(linked / "pw") not in listed
    assert not any("secret" in p for p in listed)
    assert {str(linked / "alias.md"), str(linked / "docs" / "real.md")} <= listed


async def test_grep_on_a_link_named_directly_is_refused(linked: Path) -> None:
    result = await run_tool(GrepTool(), linked, pattern="root:", path=str(linked / "pw"))
    assert result.is_error and "outside the workspace" in result.output


# --- through the real server ---------------------------------------------------------------


def skill(ws: Path, name: str, paths: list[str]) -> None:
    d = ws / ".qwen" / "skills" / name
    d.mkdir(parents=True)
    quoted = ", ".join(f'"{p}"' for p in paths)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} skill\npaths: [{quoted}]\n---\nSteps for {name}\n")


@pytest.fixture
def hostile_ws(root: Path) -> Path:
    (root / ".git").mkdir()
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ("a" * 60)).write_text("bait\n")
    (root / "bait.txt").write_text("a" * 60 + "!\n" + "aaa\n")
    skill(root, "bomb", ["**/+(?|?)Q"])
    skill(root, "ranged", ["f{1..2000}.py", "src/**"])
    skill(root, "plain", ["**/*.py"])
    rules = root / ".qwen" / "rules"
    rules.mkdir(parents=True)
    (rules / "bomb.md").write_text('---\npaths: ["**/+(?|?)Q"]\n---\nBomb rule.\n')
    (rules / "ranged.md").write_text('---\npaths: ["x{1..2000}.py", "**/*.py"]\n---\nRanged rule text.\n')
    return root


@pytest_asyncio.fixture
async def lsp(home: Path, hostile_ws: Path, scripted: ScriptedOpenAI):
    async with running_server(home, hostile_ws, scripted.base_url) as client:
        yield client


async def test_hostile_paths_globs_leave_didopen_and_other_skills_working(lsp, hostile_ws: Path, scripted: ScriptedOpenAI) -> None:
    open_doc(lsp, hostile_ws / ("a" * 60), "plaintext")  # the name the exponential glob chokes on
    open_doc(lsp, hostile_ws / "src" / "app.py", "plaintext")
    activated = lambda: {n for c in lsp.rec.skills_changed for n in as_dict(c)["activated"]}  # noqa: E731
    await wait_for(lambda: {"ranged", "plain"} <= activated(), "the other skills to activate", HANG)
    assert "bomb" not in activated()
    listed = as_dict(await asyncio.wait_for(lsp.protocol.send_request_async("qwen/skills/list", {}), HANG))
    assert any("f{1..2000}.py" in e["path"] + e["message"] for e in listed["errors"])
    scripted.enqueue(Reply(chunks=["ok"]))
    await asyncio.wait_for(lsp.protocol.send_request_async("qwen/chat", {"prompt": "hi"}), HANG)
    sent = str(scripted.chat_requests()[-1].body["messages"])
    assert "Ranged rule text." in sent and "Bomb rule." not in sent


async def test_cancel_is_answered_while_a_catastrophic_grep_runs(lsp, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("grep_search", {"pattern": "(a+)+$"}, id="g1")]),
        Stall(chunks=["thinking"]),
    )
    task = asyncio.ensure_future(lsp.protocol.send_request_async("qwen/chat", {"prompt": "search"}, msg_id=777))
    await wait_for(lambda: any(as_dict(e)["kind"] == "toolCall" for e in lsp.rec.chat_events), "the grep call", HANG)
    lsp.cancel_request(types.CancelParams(id=777))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(task, HANG)
    # the server is alive and answers the next request
    listed = as_dict(await asyncio.wait_for(lsp.protocol.send_request_async("qwen/skills/list", {}), HANG))
    assert listed["skills"]


async def test_grep_through_the_server_returns_and_reaches_the_model(lsp, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("grep_search", {"pattern": "(a+)+$"}, id="g1")]),
        Reply(chunks=["done"]),
    )
    await asyncio.wait_for(lsp.protocol.send_request_async("qwen/chat", {"prompt": "search"}), HANG)
    tool_msgs = [m for m in scripted.chat_requests()[-1].body["messages"] if m["role"] == "tool"]
    assert tool_msgs and "bait.txt" in tool_msgs[-1]["content"]


def test_symlink_fixture_really_points_outside(linked: Path) -> None:
    """Guards the symlink tests above: the link must resolve outside for them to mean anything."""
    assert not Path(os.path.realpath(linked / "pw")).is_relative_to(linked)
