"""Hostile sizes and poisoned session files (docs/security.md).

Each attack is built as files in a temp dir and run against the real server
(over stdio, with the scripted model) or the real core.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest
import pytest_asyncio
from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, running_server, session_records
from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.agent.tools.read_file import ReadFileArgs, ReadFileTool
from qwen_lsp.files.text import MAX_OUTPUT_CHARS, TRUNCATION_MARK
from qwen_lsp.context.attachments import TRUNCATED_WARNING, Attachment, attachment_parts
from qwen_lsp.files.paths import sanitize_cwd
from qwen_lsp.sessions.lines import MAX_LINE_BYTES
from qwen_lsp.sessions.listing import list_sessions
from qwen_lsp.sessions.reader import build_history, read_records
from qwen_lsp.skills import SkillListingTracker, SkillManager
from qwen_lsp.skills.listing import MAX_LISTING_CHARS

SECRET = "TOP-SECRET-OUTSIDE-THE-WORKSPACE"
GOOD_ID = "11111111-1111-4111-8111-111111111111"
POISONED_ID = "22222222-2222-4222-8222-222222222222"
HUGE_ID = "33333333-3333-4333-8333-333333333333"


# ----------------------------------------------------------------- fixtures
# ``home`` (conftest): a scratch HOME, set here and passed to the server.
@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text(SECRET + "\n")
    return d


@pytest.fixture
def workspace(tmp_path: Path, outside: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "notes.txt").write_text("plain notes\n")
    (ws / "leak.txt").symlink_to(outside / "secret.txt")
    (ws / "outdir").symlink_to(outside, target_is_directory=True)
    with open(ws / "huge.log", "wb") as fh:  # 300 MB sparse: no disk, no newline
        fh.truncate(300 * 1024 * 1024)
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url) as client:
        yield client


def user_texts(body: dict) -> list[str]:
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    return [content] if isinstance(content, str) else [p["text"] for p in content]


# ----------------------------------------------------------------- attachments
async def test_huge_outside_and_binary_attachments_are_refused_and_the_turn_goes_on(
    lsp, scripted: ScriptedOpenAI, workspace: Path, home: Path
):
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02binary" * 100)
    scripted.enqueue(Reply(chunks=["ok"]))
    files = ["huge.log", "leak.txt", "outdir/secret.txt", "blob.bin", "notes.txt"]
    res = as_dict(await chat(lsp, "look", attachments=[{"uri": (workspace / f).as_uri()} for f in files]))
    assert res["text"] == "ok"
    request = scripted.chat_requests()[-1]
    assert len(request.raw) < 200_000
    assert SECRET.encode() not in request.raw
    block = next(t for t in user_texts(request.body) if t.startswith("--- Content from referenced files ---"))
    assert "Content from @huge.log:\n[not attached: File size exceeds the 10MB limit (300.00MB)]" in block
    # The server resolves attachment URIs, so both links are named by their (outside) target here.
    assert block.count(":\n[not attached: it resolves outside the workspace]\n") == 2
    assert "Content from @blob.bin:\n[not attached: binary file]" in block
    assert "Content from @notes.txt:\nplain notes\n" in block
    line_sizes = [len(json.dumps(r)) for r in session_records(home, res["sessionId"])]
    assert max(line_sizes) < 200_000


def test_attachment_window_matches_read_file_caps(tmp_path: Path) -> None:
    root = tmp_path
    big = root / "big.py"
    big.write_text("".join(f"line {i}\n" for i in range(5000)))
    wide = root / "wide.min.js"
    wide.write_text("x" * 3_000_000)  # one line, no newline
    parts = attachment_parts(
        [Attachment(big), Attachment(big, start_line=4000, end_line=4001), Attachment(wide, start_line=0, end_line=0)],
        root,
    )
    text = parts[0]["text"]
    whole, selection, minified = text.split("Content from @")[1:]
    assert whole.startswith(f"big.py:\n{TRUNCATED_WARNING}\n\nline 0\n") and "line 999\n" in whole
    assert "line 1000\n" not in whole
    assert selection == "big.py:\nline 4000\nline 4001\n"
    assert minified.startswith(f"wide.min.js:\n{TRUNCATED_WARNING}\n\n" + "x" * 2000 + TRUNCATION_MARK)
    assert len(text) < 3 * MAX_OUTPUT_CHARS


def test_symlink_inside_the_workspace_still_attaches(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("inside\n")
    (tmp_path / "alias.md").symlink_to(tmp_path / "real.md")
    text = attachment_parts([Attachment(tmp_path / "alias.md")], tmp_path)[0]["text"]
    assert "Content from @alias.md:\ninside\n" in text


# ----------------------------------------------------------------- read_file
def read_file(root: Path, path: Path, **args: int):
    ctx = ToolContext(workspace_root=root, cwd=root, touched=lambda _p: None)
    return ReadFileTool().execute(ReadFileArgs(file_path=str(path), **args), ctx).result


def test_read_file_streams_a_file_without_newlines(tmp_path: Path) -> None:
    path = tmp_path / "one-line.txt"
    path.write_bytes(b"y" * (9 * 1024 * 1024))  # under the 10 MB limit, one 9 MB line
    tracemalloc.start()
    try:
        result = read_file(tmp_path, path)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.output == "y" * 2000 + TRUNCATION_MARK
    assert peak < 2 * 1024 * 1024  # the old reader held the whole line, twice


async def test_read_file_refuses_a_file_over_the_10mb_limit(tmp_path: Path) -> None:
    path = tmp_path / "dump.txt"
    with open(path, "wb") as fh:
        fh.truncate(2 * 1024 * 1024 * 1024)
    ctx = ToolContext(workspace_root=tmp_path, cwd=tmp_path, touched=lambda _p: None)
    result = await ReadFileTool().run({"file_path": str(path), "offset": 0, "limit": 1}, ctx)
    assert result.is_error
    assert result.output.startswith(f"File size exceeds the 10MB limit (2048.00MB): {path}.")


# ----------------------------------------------------------------- sessions
def record(kind: str, text: str, uuid: str, parent: str | None, **extra: object) -> dict:
    role = "user" if kind == "user" else "model"
    rec = {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "timestamp": "2026-08-19T12:00:00.000Z",
        "type": kind,
        "message": {"role": role, "parts": [{"text": text}]},
    }
    rec.update(extra)
    return rec


def write_lines(path: Path, lines: list[str | bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for line in lines:
            fh.write((line if isinstance(line, bytes) else line.encode()) + b"\n")


def poisoned_lines() -> list[str | bytes]:
    return [
        json.dumps(record("user", "first question", "u1", None)),
        json.dumps(record("assistant", "first answer", "a1", "u1", timestamp="0001-01-01T00:00:00+01:00")),
        "[" * 100_000,
        json.dumps({"uuid": "x1", "parentUuid": "a1", "type": "user", "message": {"role": "user", "parts": [123]}}),
        json.dumps({"uuid": "x2", "parentUuid": "x1", "type": "assistant", "message": {"role": "model", "parts": [{"functionCall": "x"}]}}),
        json.dumps({"uuid": "x3", "parentUuid": "x2", "type": "user", "timestamp": 5, "message": {"role": "user", "parts": [{"text": 7}]}}),
        json.dumps({"uuid": "x4", "type": "system", "subtype": "chat_compression", "systemPayload": {"compressedHistory": [{"role": "user", "parts": "no"}]}}),
        json.dumps(record("user", "second question", "u2", "x3")),
        json.dumps(record("assistant", "second answer", "a2", "u2")),
        b'{"uuid": "torn", "type": "user", "mess',
    ]


def test_reader_keeps_the_good_records_of_a_poisoned_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_lines(path, poisoned_lines())
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # the last line is torn
    result = read_records(path)
    texts = [r["message"]["parts"][0]["text"] for r in result.records if "message" in r]
    assert texts == ["first question", "first answer", "second question", "second answer"]
    assert [c["parts"][0]["text"] for c in build_history(result.records)] == texts
    reasons = dict(result.skipped)
    assert reasons[3].startswith("nested deeper than")
    assert "parts[0]: not an object" in reasons[4]
    assert "functionCall is not an object" in reasons[5]
    assert "text is not a string" in reasons[6]
    assert "compressedHistory[0]: parts is not a list" in reasons[7]
    assert reasons[10] == "torn last line (incomplete write)"
    assert "timestamp" not in result.records[1]  # unusable date dropped, record kept


def test_deep_but_parseable_nesting_is_skipped_before_it_can_overflow_copies(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    deep = "[" * 500 + "]" * 500
    write_lines(
        path,
        [
            json.dumps(record("user", "hi", "u1", None)),
            '{"uuid": "d", "parentUuid": "u1", "type": "assistant", "message": {"role": "model", "parts": '
            '[{"functionCall": {"name": "f", "args": {"x": ' + deep + "}}}]}}",
        ],
    )
    result = read_records(path)
    assert [r["uuid"] for r in result.records] == ["u1"]
    assert result.skipped[0][1].startswith("nested deeper than")


def test_over_long_lines_are_passed_over_without_being_loaded(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_lines(path, [json.dumps(record("user", "before", "u1", None))])
    with open(path, "r+b") as fh:  # a 64 MB line of NULs (a hole), then a good record
        fh.seek(64 * 1024 * 1024, os.SEEK_END)
        fh.write(b"\n" + json.dumps(record("assistant", "after", "a1", "u1")).encode() + b"\n")
    tracemalloc.start()
    try:
        result = read_records(path)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r["uuid"] for r in result.records] == ["u1", "a1"]
    assert result.skipped == [(2, f"line of {64 * 1024 * 1024} bytes is longer than the {MAX_LINE_BYTES} byte limit; not read")]
    assert peak < 3 * MAX_LINE_BYTES  # one capped line (and its copy), not 64 MB


def test_listing_survives_poisoned_and_huge_files(tmp_path: Path, home: Path) -> None:
    chats = home / ".qwen" / "projects" / sanitize_cwd(tmp_path.resolve()) / "chats"
    make_sessions(chats)
    listed = {s.session_id: s for s in list_sessions(tmp_path)}
    assert set(listed) == {GOOD_ID, POISONED_ID, HUGE_ID}
    assert listed[POISONED_ID].title == "first question" and listed[POISONED_ID].message_count == 4
    assert listed[HUGE_ID].title == "before the huge line"


def make_sessions(chats: Path) -> None:
    write_lines(chats / f"{GOOD_ID}.jsonl", [json.dumps(record("user", "good question", "g1", None)), json.dumps(record("assistant", "good answer", "g2", "g1"))])
    write_lines(chats / f"{POISONED_ID}.jsonl", poisoned_lines())
    huge = chats / f"{HUGE_ID}.jsonl"
    write_lines(huge, [json.dumps(record("user", "before the huge line", "h1", None)), json.dumps(record("assistant", "an answer", "h2", "h1"))])
    with open(huge, "ab") as fh:  # then 512 MB of one sparse line, not even ended
        fh.truncate(512 * 1024 * 1024)


async def test_server_lists_resumes_and_chats_on_poisoned_sessions(
    home: Path, workspace: Path, scripted: ScriptedOpenAI
):
    make_sessions(home / ".qwen" / "projects" / sanitize_cwd(workspace.resolve()) / "chats")
    async with running_server(home, workspace, scripted.base_url) as lsp:
        listed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/list", {}))["sessions"]
        assert {s["sessionId"] for s in listed} == {GOOD_ID, POISONED_ID, HUGE_ID}

        resumed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": POISONED_ID}))
        assert [m["text"] for m in resumed["messages"]] == ["first question", "first answer", "second question", "second answer"]

        report = as_dict(await lsp.protocol.send_request_async("qwen/context", {"sessionId": POISONED_ID}))
        assert report["totalTokens"] == sum(s["tokens"] for s in report["sections"])

        scripted.enqueue(Reply(chunks=["third answer"]))
        res = as_dict(await chat(lsp, "third question", sessionId=POISONED_ID))
        assert res["text"] == "third answer"
        sent = [m.get("content") for m in scripted.chat_requests()[-1].body["messages"]]
        assert "first answer" in sent and "second answer" in sent

        scripted.enqueue(Reply(chunks=["fine"]))
        assert as_dict(await chat(lsp, "go on", sessionId=HUGE_ID))["text"] == "fine"
        assert len(scripted.chat_requests()[-1].raw) < 200_000


# ----------------------------------------------------------------- skills listing
def test_five_thousand_skills_listing_stays_under_budget(tmp_path: Path, home: Path) -> None:
    skills = tmp_path / "proj" / ".qwen" / "skills"
    for i in range(5000):
        d = skills / f"skill-{i:04}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"---\nname: skill-{i:04}\ndescription: {'does many things ' * 20}\n---\nbody\n")
    manager = SkillManager(tmp_path / "proj", bundled_dir=tmp_path / "none")
    manager.refresh()
    listing = SkillListingTracker().reminder(manager)
    assert listing is not None
    shown = listing.count("<skill>")
    assert 0 < shown < 5000
    assert f"\u2026 and {5000 - shown} more skills not listed" in listing
    assert len(listing) < MAX_LISTING_CHARS + 2000
    assert "<name>\nskill-0000\n</name>" in listing


def test_unchanged_files_are_not_read_again_by_listing(tmp_path: Path, home: Path, caplog: pytest.LogCaptureFixture) -> None:
    chats = home / ".qwen" / "projects" / sanitize_cwd(tmp_path.resolve()) / "chats"
    make_sessions(chats)
    list_sessions(tmp_path)
    caplog.clear()
    again = {s.session_id: s for s in list_sessions(tmp_path)}
    assert set(again) == {GOOD_ID, POISONED_ID, HUGE_ID}
    assert not [r for r in caplog.records if "skipping line" in r.getMessage()]  # nothing re-read
    with open(chats / f"{GOOD_ID}.jsonl", "a") as fh:
        fh.write(json.dumps(record("user", "one more", "g3", "g2")) + "\n")
    assert {s.session_id: s for s in list_sessions(tmp_path)}[GOOD_ID].message_count == 3
