"""Reading sessions back: damaged files, listing, resume history, deletion."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qwen_lsp.files.paths import chats_dir
from qwen_lsp.sessions.listing import list_sessions
from qwen_lsp.sessions.reader import (
    active_branch,
    build_history,
    delete_session,
    read_records,
)
from qwen_lsp.sessions.recording import SessionRecorder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    project = tmp_path / "proj"
    project.mkdir()
    return project


def rec(uuid: str, parent: str | None, type_: str = "user", text: str | None = None, **more) -> dict:
    record = {"uuid": uuid, "parentUuid": parent, "sessionId": "s", "timestamp": "2026-01-01T00:00:00.000Z", "type": type_}
    if text is not None:
        record["message"] = {"role": "model" if type_ == "assistant" else "user", "parts": [{"text": text}]}
    record.update(more)
    return record


def write_jsonl(path: Path, records: list[dict], tail: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)
    return path


# --- read_records -------------------------------------------------------------------


def test_torn_last_line_is_skipped_and_everything_before_kept(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [rec("a", None, text="1"), rec("b", "a", text="2")], b'{"uuid":"c","par')
    result = read_records(path)
    assert [r["uuid"] for r in result.records] == ["a", "b"]
    assert result.skipped == [(3, "torn last line (incomplete write)")]


def test_junk_and_invalid_utf8_lines_are_skipped_with_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        json.dumps(rec("a", None, text="1")).encode()
        + b"\nnot json at all\n\xff\xfe{}\n[1, 2]\n\n"
        + json.dumps(rec("b", "a", text="2")).encode()
        + b"\n"
    )
    result = read_records(path)
    assert [r["uuid"] for r in result.records] == ["a", "b"]
    assert [n for n, _ in result.skipped] == [2, 3, 4]
    assert result.skipped[1][1].startswith("invalid UTF-8")
    assert result.skipped[2][1] == "not a JSON object"
    assert result.skipped[0][1].startswith("invalid JSON")


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    result = read_records(tmp_path / "nope.jsonl")
    assert result.records == [] and result.skipped == []


def test_recorded_order_is_append_order(project: Path) -> None:
    r = SessionRecorder(project, version="t")
    ids = [r.record_user(f"m{i}") for i in range(20)]
    assert [x["uuid"] for x in read_records(r.path).records] == ids


# --- active branch / build_history ---------------------------------------------------


def test_history_without_checkpoint_is_the_linear_messages_without_system(project: Path) -> None:
    r = SessionRecorder(project, version="t")
    r.record_user("q1")
    r.record_system("ui_telemetry", {"uiEvent": {}})
    r.record_model([{"text": "thinking", "thought": True}, {"text": "a1"}], usage=None, model="m")
    call = {"functionCall": {"id": "c1", "name": "glob", "args": {"pattern": "*"}}}
    r.record_model([call], usage=None, model="m")
    resp = {"functionResponse": {"id": "c1", "name": "glob", "response": {"output": "x"}}}
    r.record_tool_result([resp], {"callId": "c1"})
    records = read_records(r.path).records
    assert build_history(records) == [
        {"role": "user", "parts": [{"text": "q1"}]},
        {"role": "model", "parts": [{"text": "thinking", "thought": True}, {"text": "a1"}]},
        {"role": "model", "parts": [call]},
        {"role": "user", "parts": [resp]},
    ]
    stripped = build_history(records, strip_thoughts=True)
    assert stripped[1] == {"role": "model", "parts": [{"text": "a1"}]}


def test_strip_thoughts_drops_contents_left_empty() -> None:
    records = [rec("a", None, text="q"), rec("b", "a", "assistant", message={"role": "model", "parts": [{"text": "t", "thought": True}]})]
    assert build_history(records, strip_thoughts=True) == [{"role": "user", "parts": [{"text": "q"}]}]


def test_history_resumes_from_the_last_compression_checkpoint(project: Path) -> None:
    r = SessionRecorder(project, version="t")
    r.record_user("old question")
    r.record_model("old answer", usage=None, model="m")
    r.record_system("chat_compression", {"info": {}, "compressedHistory": [{"role": "user", "parts": [{"text": "summary 1"}]}]})
    r.record_user("middle")
    r.record_system(
        "chat_compression",
        {
            "info": {"newTokenCount": 10},
            "compressedHistory": [
                {"role": "user", "parts": [{"text": "summary 2"}]},
                {"role": "model", "parts": [{"text": "Got it."}]},
            ],
        },
    )
    r.record_system("chat_compression", {"info": {}})  # no compressedHistory: not a checkpoint
    r.record_user("new question")
    r.record_model("new answer", usage=None, model="m")
    assert build_history(read_records(r.path).records) == [
        {"role": "user", "parts": [{"text": "summary 2"}]},
        {"role": "model", "parts": [{"text": "Got it."}]},
        {"role": "user", "parts": [{"text": "new question"}]},
        {"role": "model", "parts": [{"text": "new answer"}]},
    ]


def test_mid_turn_user_message_merges_into_the_preceding_user_turn(project: Path) -> None:
    r = SessionRecorder(project, version="t")
    r.record_user("go")
    r.record_model([{"functionCall": {"id": "c", "name": "glob", "args": {}}}], usage=None, model="m")
    resp = {"functionResponse": {"id": "c", "name": "glob", "response": {"output": ""}}}
    r.record_tool_result([resp], None)
    r.record_user("also check tests", subtype="mid_turn_user_message", systemPayload={"displayText": "also check tests"})
    history = build_history(read_records(r.path).records)
    assert history[-1] == {"role": "user", "parts": [resp, {"text": "also check tests"}]}
    assert len(history) == 3


def test_build_history_returns_copies() -> None:
    records = [rec("a", None, text="q")]
    history = build_history(records)
    history[0]["parts"].append({"text": "mutated"})
    assert records[0]["message"]["parts"] == [{"text": "q"}]


def test_active_branch_follows_parent_links_after_a_rewind() -> None:
    records = [
        rec("a", None, text="q1"),
        rec("b", "a", "assistant", text="abandoned"),
        rec("c", "a", "assistant", text="kept"),  # the CLI rewound to "a" and answered again
    ]
    assert [r["uuid"] for r in active_branch(records)] == ["a", "c"]
    assert [c["parts"][0]["text"] for c in build_history(records)] == ["q1", "kept"]


def test_active_branch_bridges_a_skipped_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = [rec("a", None, text="1"), rec("b", "a", "assistant", text="2")]
    after = rec("d", "c", text="4")  # its parent "c" was on the damaged line
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in good) + b"garbage\n" + json.dumps(after).encode() + b"\n")
    assert [c["parts"][0]["text"] for c in build_history(read_records(path).records)] == ["1", "2", "4"]


def test_active_branch_survives_a_cycle() -> None:
    records = [rec("a", "b", text="1"), rec("b", "a", text="2")]
    assert [r["uuid"] for r in active_branch(records)] == ["a", "b"]


# --- list_sessions --------------------------------------------------------------------


def test_list_sessions_newest_first_with_titles_and_counts(project: Path) -> None:
    directory = chats_dir(project)
    older = [
        rec("a", None, text="  first   question\nwith newlines ", timestamp="2026-01-01T10:00:00.000Z"),
        rec("b", "a", "assistant", text="answer", timestamp="2026-01-01T10:00:01.000Z"),
        rec("c", "b", "tool_result", message={"role": "user", "parts": []}, timestamp="2026-01-01T10:00:02.000Z"),
    ]
    newer = [
        rec("x", None, text="long " * 40, timestamp="2026-02-01T10:00:00.000Z"),
        rec("x2", "x", "assistant", text="ok", timestamp="2026-02-01T10:00:01.000Z"),
        rec("y", "x2", "system", subtype="ui_telemetry", systemPayload={}, timestamp="2026-02-01T10:00:05.000Z"),
    ]
    titled = [
        rec("p", None, text="untitled prompt", timestamp="2026-01-15T00:00:00.000Z"),
        rec("q", "p", "system", subtype="custom_title", systemPayload={"customTitle": "Old"}, timestamp="2026-01-15T00:00:01.000Z"),
        rec("r", "q", "system", subtype="custom_title", systemPayload={"customTitle": "Renamed"}, timestamp="2026-01-15T00:00:02.000Z"),
    ]
    write_jsonl(directory / "11111111-1111-4111-8111-111111111111.jsonl", older)
    write_jsonl(directory / "22222222-2222-4222-8222-222222222222.jsonl", newer)
    write_jsonl(directory / "33333333-3333-4333-8333-333333333333.jsonl", titled)
    # junk that must not break the listing
    (directory / "notes.txt").write_text("hello")
    (directory / "44444444-4444-4444-8444-444444444444.jsonl").write_bytes(b"\x00\x01garbage")
    (directory / "bad.name.jsonl").write_text(json.dumps(rec("z", None, text="hidden")) + "\n")
    (directory / "55555555-5555-4555-8555-555555555555.jsonl").mkdir()

    sessions = list_sessions(project)
    assert [s.session_id[:8] for s in sessions] == ["22222222", "33333333", "11111111"]
    newest, titled_s, oldest = sessions
    assert newest.updated_at.isoformat() == "2026-02-01T10:00:05+00:00"
    assert len(newest.title) == 80 and newest.title.endswith("…")
    assert titled_s.title == "Renamed"
    assert oldest.title == "first question with newlines"
    assert oldest.message_count == 2
    assert oldest.path == directory / "11111111-1111-4111-8111-111111111111.jsonl"


def test_a_session_never_answered_stays_on_disk_but_is_not_listed(project: Path) -> None:
    directory = chats_dir(project)
    failed = directory / "66666666-6666-4666-8666-666666666666.jsonl"
    write_jsonl(failed, [rec("a", None, text="hi"), rec("b", "a", text="hi again")])
    empty_answer = [rec("a", None, text="hi"), rec("b", "a", "assistant", message={"role": "model", "parts": []})]
    write_jsonl(directory / "77777777-7777-4777-8777-777777777777.jsonl", empty_answer)
    interrupted = [rec("a", None, text="hi"), rec("b", "a", "assistant", text="partial", interrupted=True)]
    write_jsonl(directory / "88888888-8888-4888-8888-888888888888.jsonl", interrupted)
    renamed = [rec("a", None, text="hi"), rec("b", "a", "system", subtype="custom_title", systemPayload={"customTitle": "Keep"})]
    write_jsonl(directory / "99999999-9999-4999-8999-999999999999.jsonl", renamed)
    assert sorted(s.session_id[:8] for s in list_sessions(project)) == ["88888888", "99999999"]
    # The prompts are still there: resuming by id continues from them.
    assert [c["parts"][0]["text"] for c in build_history(read_records(failed).records)] == ["hi", "hi again"]


def test_list_sessions_of_a_project_without_sessions_is_empty(project: Path) -> None:
    assert list_sessions(project) == []


def test_list_sessions_sees_recorded_sessions(project: Path) -> None:
    r = SessionRecorder(project, version="t")
    r.record_user("hello there")
    r.record_model("hi", usage=None, model="m")
    [summary] = list_sessions(project)
    assert (summary.session_id, summary.title, summary.message_count) == (r.session_id, "hello there", 2)


# --- delete_session ---------------------------------------------------------------------


def test_delete_session_removes_only_that_file(project: Path) -> None:
    a = SessionRecorder(project, version="t")
    a.record_user("a")
    b = SessionRecorder(project, version="t")
    b.record_user("b")
    assert delete_session(project, a.session_id) is True
    assert not a.path.exists() and b.path.exists()
    assert delete_session(project, a.session_id) is False


@pytest.mark.parametrize(
    "bad_id",
    ["../victim", "..", "a/b", "a\\b", "/etc/passwd", "", ".hidden", "x.jsonl", "a\x00b", "../" * 3 + "victim"],
)
def test_delete_session_refuses_malicious_ids(project: Path, tmp_path: Path, bad_id: str) -> None:
    victim = chats_dir(project).parent / "victim.jsonl"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text("{}\n")
    outside = tmp_path / "victim.jsonl"
    outside.write_text("{}\n")
    assert delete_session(project, bad_id) is False
    assert victim.exists() and outside.exists()


def test_delete_session_with_non_string_id(project: Path) -> None:
    assert delete_session(project, 42) is False  # type: ignore[arg-type]


def test_unreadable_file_is_reported_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.mkdir()
    result = read_records(path)
    assert result.records == [] and result.skipped and result.skipped[0][0] == 0
    assert os.path.isdir(path)


@settings(max_examples=60, deadline=None)
@given(tail=st.binary(max_size=64).filter(lambda b: b"\n" not in b))
def test_any_torn_tail_keeps_every_earlier_record(tmp_path_factory: pytest.TempPathFactory, tail: bytes) -> None:
    path = tmp_path_factory.mktemp("torn") / "s.jsonl"
    records = [rec(str(i), str(i - 1) if i else None, text=f"m{i}") for i in range(3)]
    write_jsonl(path, records, tail)
    result = read_records(path)
    assert result.records[:3] == records
    assert len(result.records) + len(result.skipped) == 3 + (1 if tail.strip() else 0)
