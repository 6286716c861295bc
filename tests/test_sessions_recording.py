"""SessionRecorder: Qwen Code's on-disk layout and record shape, durability, concurrency."""

from __future__ import annotations

import json
import re
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from qwen_lsp.llm.errors import LLMError
from qwen_lsp.sessions.reader import active_branch, build_conversation, build_history, read_records
from qwen_lsp.sessions.recording import SessionRecorder, SessionWriteError, iso_timestamp, usage_metadata



@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "my_repo.v2"
    project.mkdir()
    return project


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_file_lives_where_qwen_code_puts_it_and_only_after_first_record(home: Path, project: Path) -> None:
    rec = SessionRecorder(project, version="0.1.0")
    sanitized = re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))
    assert rec.path == home / ".qwen" / "projects" / sanitized / "chats" / f"{rec.session_id}.jsonl"
    assert uuid.UUID(rec.session_id).version == 4
    assert not rec.path.exists()
    rec.record_user("hi")
    assert rec.path.is_file()


def test_qwen_home_moves_the_sessions(tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "qh"))
    rec = SessionRecorder(project, "abc-123", version="0.1.0")
    rec.record_user("hi")
    assert rec.path.parent.parent.parent.parent == tmp_path / "qh"


def test_record_shapes_and_field_order_match_the_cli(home: Path, project: Path) -> None:
    rec = SessionRecorder(project, version="0.1.0", git_branch="main")
    u = rec.record_user("hi")
    m = rec.record_model(
        "hello",
        usage={"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
        model="qwen3-coder",
    )
    call = [{"functionCall": {"id": "call_1", "name": "read_file", "args": {"file_path": "/x"}}}]
    c = rec.record_model(call, usage=None, model="qwen3-coder")
    t = rec.record_tool_result(
        [{"functionResponse": {"id": "call_1", "name": "read_file", "response": {"output": "x"}}}],
        {"callId": "call_1", "status": "success", "resultDisplay": ""},
    )
    s = rec.record_system("custom_title", {"customTitle": "T"})
    user, model, calling, tool, system = lines_of(rec.path)

    base = ["uuid", "parentUuid", "sessionId", "timestamp", "type", "provenance", "cwd", "version", "gitBranch"]
    assert list(user) == [*base, "message"]
    assert list(model) == [*base, "model", "message", "usageMetadata"]
    assert list(calling) == [*base, "model", "message"]
    assert list(tool) == [*base, "message", "toolCallResult"]
    assert list(system) == [*base, "subtype", "systemPayload"]

    assert [r["uuid"] for r in (user, model, calling, tool, system)] == [u, m, c, t, s]
    assert [r["parentUuid"] for r in (user, model, calling, tool, system)] == [None, u, m, c, t]
    assert [r["type"] for r in (user, model, tool, system)] == ["user", "assistant", "tool_result", "system"]
    assert [r["provenance"] for r in (user, model, tool, system)] == [
        "real_user",
        "assistant_output",
        "tool_result",
        "system",
    ]
    assert user["message"] == {"role": "user", "parts": [{"text": "hi"}]}
    assert model["message"] == {"role": "model", "parts": [{"text": "hello"}]}
    assert tool["message"]["role"] == "user"
    assert model["usageMetadata"] == {
        "promptTokenCount": 100,
        "candidatesTokenCount": 5,
        "thoughtsTokenCount": 0,
        "totalTokenCount": 105,
        "cachedContentTokenCount": 0,
    }
    assert user["cwd"] == str(project.resolve())
    assert user["version"] == "0.1.0" and user["gitBranch"] == "main"
    assert system["systemPayload"] == {"customTitle": "T"}


def test_no_git_branch_means_no_field(home: Path, project: Path) -> None:
    rec = SessionRecorder(project, version="0.1.0")
    rec.record_user("hi")
    assert "gitBranch" not in lines_of(rec.path)[0]


def test_lines_are_compact_and_keep_non_ascii_raw(home: Path, project: Path) -> None:
    rec = SessionRecorder(project, version="0.1.0")
    rec.record_user("héllo 你好")
    raw = rec.path.read_bytes()
    assert "héllo 你好".encode() in raw
    assert b'", "' not in raw and raw.endswith(b"}\n") and raw.count(b"\n") == 1


def test_lone_surrogate_is_escaped_not_fatal(home: Path, project: Path) -> None:
    rec = SessionRecorder(project, version="0.1.0")
    rec.record_user("bad \ud800 text")
    rec.record_user("after")
    assert [r["message"]["parts"][0]["text"] for r in read_records(rec.path).records] == ["bad \ud800 text", "after"]


def test_timestamp_is_js_iso_format() -> None:
    assert iso_timestamp(datetime(2026, 8, 19, 12, 0, 0, 123456, tzinfo=UTC)) == "2026-08-19T12:00:00.123Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", iso_timestamp())


def test_usage_mapping_from_openai_details_and_passthrough() -> None:
    assert usage_metadata(None) is None
    assert usage_metadata(
        {
            "prompt_tokens": 10,
            "completion_tokens": 7,
            "total_tokens": 17,
            "prompt_tokens_details": {"cached_tokens": 4},
            "completion_tokens_details": {"reasoning_tokens": 3},
        }
    ) == {
        "promptTokenCount": 10,
        "candidatesTokenCount": 7,
        "thoughtsTokenCount": 3,
        "totalTokenCount": 17,
        "cachedContentTokenCount": 4,
    }
    gemini = {"promptTokenCount": 1, "totalTokenCount": 2}
    assert usage_metadata(gemini) == gemini


def test_interrupted_answer_is_marked_and_resumes_with_partial_text(home: Path, project: Path) -> None:
    rec = SessionRecorder(project, version="0.1.0")
    rec.record_user("write a poem")
    rec.record_model("Roses are", usage=None, model="m", interrupted=True)
    record = lines_of(rec.path)[1]
    assert record["interrupted"] is True and record["type"] == "assistant"
    assert build_history(read_records(rec.path).records)[-1] == {"role": "model", "parts": [{"text": "Roses are"}]}


def test_extra_user_fields_are_recorded(home: Path, project: Path) -> None:
    rec = SessionRecorder(project, version="0.1.0")
    rec.record_user("also this", subtype="mid_turn_user_message", systemPayload={"displayText": "also this"})
    record = lines_of(rec.path)[0]
    assert record["subtype"] == "mid_turn_user_message"
    assert list(record)[-3:] == ["subtype", "systemPayload", "message"]


def test_recorder_for_existing_session_continues_the_chain(home: Path, project: Path) -> None:
    first = SessionRecorder(project, version="0.1.0")
    last = first.record_model("a", usage=None, model="m")
    again = SessionRecorder(project, first.session_id, version="0.1.0")
    again.record_user("b")
    assert lines_of(first.path)[-1]["parentUuid"] == last


def test_append_after_a_torn_tail_keeps_the_new_record(home: Path, project: Path) -> None:
    first = SessionRecorder(project, version="0.1.0")
    good = first.record_user("kept")
    with open(first.path, "ab") as fh:
        fh.write(b'{"uuid":"torn","parentUu')  # a crash mid-write
    again = SessionRecorder(project, first.session_id, version="0.1.0")
    again.record_user("new")
    result = read_records(first.path)
    assert [r["message"]["parts"][0]["text"] for r in result.records] == ["kept", "new"]
    assert result.records[1]["parentUuid"] == good
    assert len(result.skipped) == 1


def test_concurrent_appends_never_interleave(home: Path, project: Path) -> None:
    rec = SessionRecorder(project, version="0.1.0")
    per_thread = 40
    payload = "x" * 5000  # lines bigger than a pipe buffer, to make interleaving visible

    def work(n: int) -> None:
        for i in range(per_thread):
            rec.record_user(f"{n}-{i}-{payload}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    result = read_records(rec.path)
    assert result.skipped == []
    assert len(result.records) == 6 * per_thread
    # one unbroken chain, in file order
    assert [r["parentUuid"] for r in result.records[1:]] == [r["uuid"] for r in result.records[:-1]]
    for n in range(6):
        mine = [r["message"]["parts"][0]["text"].split("-")[1] for r in result.records if r["message"]["parts"][0]["text"].startswith(f"{n}-")]
        assert mine == [str(i) for i in range(per_thread)]


def test_write_failure_raises_actionable_error_and_keeps_earlier_records(
    home: Path, project: Path, tmp_path: Path
) -> None:
    rec = SessionRecorder(project, version="0.1.0")
    kept = rec.record_user("kept")
    saved = rec.path.read_bytes()
    rec.path.unlink()
    rec.path.mkdir()  # the session path is now a directory: appends fail with EISDIR
    with pytest.raises(SessionWriteError) as info:
        rec.record_user("lost")
    message = str(info.value)
    assert str(rec.path) in message and "writable" in message
    assert rec.last_uuid == kept  # the chain did not advance past the failed record
    rec.path.rmdir()
    rec.path.write_bytes(saved)
    rec.record_user("after")
    records = read_records(rec.path).records
    assert [r["message"]["parts"][0]["text"] for r in records] == ["kept", "after"]
    assert records[1]["parentUuid"] == kept


def test_chats_dir_being_a_file_is_a_clear_error(home: Path, project: Path) -> None:
    rec = SessionRecorder(project, version="0.1.0")
    rec.path.parent.parent.mkdir(parents=True)
    rec.path.parent.write_text("not a directory")
    with pytest.raises(SessionWriteError, match="Could not save the chat"):
        rec.record_user("hi")


def test_invalid_session_id_is_refused(home: Path, project: Path) -> None:
    with pytest.raises(ValueError, match="Invalid session id"):
        SessionRecorder(project, "../escape", version="0.1.0")


def test_a_second_writer_of_one_session_keeps_the_chain_through_both(home: Path, project: Path) -> None:
    """Two windows continuing one session: each record's parent is the last record in the file, whoever wrote it."""
    first = SessionRecorder(project, version="0.1.0")
    a1 = first.record_user("A1")
    second = SessionRecorder(project, first.session_id, version="0.1.0")
    b2 = second.record_user("B2")
    a3 = first.record_user("A3")
    lines = lines_of(first.path)
    assert [(r["uuid"], r["parentUuid"]) for r in lines] == [(a1, None), (b2, a1), (a3, b2)]
    assert [c["parts"][0]["text"] for c in build_history(read_records(first.path).records)] == ["A1", "B2", "A3"]


def test_rewind_failed_turn_makes_the_retried_prompt_a_sibling_of_the_failed_one(home: Path, project: Path) -> None:
    """Retry: the file stays append-only; the failed prompt and its error leave the active branch."""
    rec = SessionRecorder(project, version="0.1.0")
    assert not rec.rewind_failed_turn(), "no file yet: nothing to take back"
    first = rec.record_user("hello")
    rec.record_model("hi", usage=None, model="m")
    assert not rec.rewind_failed_turn(), "the last turn was answered"
    failed = rec.record_user("flaky")
    rec.record_failure(LLMError("server", "boom", 500), model="m", duration_ms=1, prompt_id="p")
    before = rec.path.stat().st_size
    assert rec.rewind_failed_turn()
    assert rec.path.stat().st_size == before, "nothing is written or removed"
    retried = rec.record_user("flaky")
    rec.record_model("done", usage=None, model="m")
    records = read_records(rec.path).records
    by_uuid = {r["uuid"]: r for r in records}
    assert by_uuid[retried]["parentUuid"] == by_uuid[failed]["parentUuid"]
    branch = active_branch(records)
    assert failed not in [r["uuid"] for r in branch] and retried in [r["uuid"] for r in branch]
    assert [c["parts"][0]["text"] for c in build_history(records)] == ["hello", "hi", "flaky", "done"]
    assert all(content is not None for content, _ in build_conversation(records)), "the failure is off the branch"
    # A fresh recorder (a restarted server) rewinds from what is on disk: a prompt that never got an answer.
    rec.record_user("unanswered")
    again = SessionRecorder(project, rec.session_id, version="0.1.0")
    assert again.rewind_failed_turn()
    again.record_user("unanswered")
    assert [c["parts"][0]["text"] for c in build_history(read_records(rec.path).records)][-2:] == ["done", "unanswered"]
