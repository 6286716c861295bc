"""Compression checkpoints in session JSONL: the record, resume from it, and the restored token counts.

The golden is a session the real Qwen Code CLI (0.24.4) compacted with
``qwen --resume <id> -p /compress`` against the scripted server
(tests/data/sessions/qwen024_compressed.jsonl, kept byte for byte).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from qwen_lsp.context import ContextAssembler, ContextSettings, SessionContext
from qwen_lsp.files.paths import chats_dir
from qwen_lsp.sessions.reader import active_branch, build_history, read_records
from qwen_lsp.sessions.recording import SessionRecorder
from qwen_lsp.sessions.registry import SessionRegistry
from qwen_lsp.sessions.resume_tokens import ResumeTokenCounts, resume_token_counts

CLI_SESSION = Path(__file__).parent / "data" / "sessions" / "qwen024_compressed.jsonl"
CLI_SESSION_ID = "ead73c12-fdfd-46e0-a1bb-16f9add5d47d"
SUMMARY = [
    {"role": "user", "parts": [{"text": "<state_snapshot>the summary</state_snapshot>\n\nResume the prior task."}]},
    {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]},
]
INFO = {"originalTokenCount": 9000, "newTokenCount": 1200, "newTokenCountIsEstimated": True, "compressionStatus": 1, "triggerReason": "auto"}


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def cli_records() -> list[dict]:
    return lines_of(CLI_SESSION)


def texts(history: list) -> list[str]:
    return [" + ".join(p.get("text", json.dumps(p)) for p in c["parts"]) for c in history]


# --- the record ------------------------------------------------------------------------


def test_checkpoint_record_is_shaped_as_the_cli_writes_it(project: Path) -> None:
    [golden] = [r for r in cli_records() if r.get("subtype") == "chat_compression"]
    rec = SessionRecorder(project, version="0.24.4")
    rec.record_user("say hi")
    uid = rec.record_chat_compression(golden["systemPayload"]["compressedHistory"], golden["systemPayload"]["info"])
    ours = lines_of(rec.path)[-1]
    assert list(ours) == list(golden)  # field order, no gitBranch outside a repository
    assert ours["systemPayload"] == golden["systemPayload"]
    assert list(ours["systemPayload"]) == ["info", "compressedHistory", "completedToolCallIds"]
    assert {k: ours[k] for k in ("type", "subtype", "provenance", "version")} == {
        k: golden[k] for k in ("type", "subtype", "provenance", "version")
    }
    assert ours["uuid"] == uid and ours["parentUuid"] == lines_of(rec.path)[0]["uuid"]


def test_checkpoint_carries_completed_tool_call_ids(project: Path) -> None:
    rec = SessionRecorder(project, version="t")
    rec.record_chat_compression(SUMMARY, INFO, completed_tool_call_ids=["call_1", "call_2"])
    assert lines_of(rec.path)[-1]["systemPayload"]["completedToolCallIds"] == ["call_1", "call_2"]


@pytest.mark.parametrize(
    ("history", "info", "message"),
    [
        ([{"role": "system", "parts": [{"text": "x"}]}], INFO, r"compressed_history\[0\]: role is not"),
        ([{"role": "user", "parts": [{"functionCall": "x"}]}], INFO, "functionCall is not an object"),
        (SUMMARY, {**INFO, "newTokenCount": None}, "newTokenCount"),
        (SUMMARY, {**INFO, "newTokenCount": -1}, "newTokenCount"),
        (SUMMARY, {"originalTokenCount": 5}, "newTokenCount"),
    ],
)
def test_a_checkpoint_resume_could_not_use_is_refused_and_nothing_written(
    project: Path, history: list, info: dict, message: str
) -> None:
    rec = SessionRecorder(project, version="t")
    rec.record_user("hi")
    before = rec.path.read_bytes()
    with pytest.raises(ValueError, match=message):
        rec.record_chat_compression(history, info)
    assert rec.path.read_bytes() == before


# --- resume ----------------------------------------------------------------------------


def long_session(rec: SessionRecorder) -> None:
    rec.record_user("old question")
    rec.record_model("old answer", usage={"prompt_tokens": 8000, "completion_tokens": 50, "total_tokens": 8050}, model="m")
    rec.record_model([{"functionCall": {"id": "c1", "name": "read_file", "args": {"file_path": "a.py"}}}], usage=None, model="m")
    rec.record_tool_result([{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "x"}}}], None)


def test_resume_continues_from_the_last_checkpoint_plus_later_records(project: Path) -> None:
    rec = SessionRecorder(project, version="t")
    long_session(rec)
    rec.record_chat_compression([{"role": "user", "parts": [{"text": "first summary"}]}, SUMMARY[1]], INFO)
    rec.record_user("middle question")
    rec.record_model("middle answer", usage=None, model="m")
    rec.record_chat_compression(SUMMARY, {**INFO, "newTokenCount": 700})
    rec.record_system("ui_telemetry", {"uiEvent": {}})
    rec.record_user("new question")
    rec.record_user("and also this", subtype="mid_turn_user_message", systemPayload={"displayText": "and also this"})
    rec.record_model("new answer", usage={"prompt_tokens": 2100, "completion_tokens": 30, "total_tokens": 2130}, model="m")

    records = read_records(rec.path).records
    history = build_history(records)
    assert texts(history) == [
        SUMMARY[0]["parts"][0]["text"],
        "Got it. Thanks for the additional context!",
        "new question + and also this",
        "new answer",
    ]
    assert resume_token_counts(active_branch(records)) == ResumeTokenCounts(2100, 30, estimated=False)


def test_a_checkpoint_after_the_last_answer_sets_the_count_to_its_estimate(project: Path) -> None:
    rec = SessionRecorder(project, version="t")
    long_session(rec)
    rec.record_chat_compression(SUMMARY, INFO)
    assert resume_token_counts(read_records(rec.path).records) == ResumeTokenCounts(1200, 0, estimated=True)
    rec.record_chat_compression(SUMMARY, {**INFO, "newTokenCount": 900, "newTokenCountIsEstimated": False})
    assert resume_token_counts(read_records(rec.path).records) == ResumeTokenCounts(900, 0, estimated=False)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"promptTokenCount": 500, "candidatesTokenCount": 9, "totalTokenCount": 520}, ResumeTokenCounts(500, 20, False)),
        ({"promptTokenCount": 500, "candidatesTokenCount": 9, "thoughtsTokenCount": 4}, ResumeTokenCounts(500, 9, False)),
        ({"promptTokenCount": 500, "candidatesTokenCount": 3, "thoughtsTokenCount": 4}, ResumeTokenCounts(500, 7, False)),
        ({"totalTokenCount": 640}, ResumeTokenCounts(640, 0, False)),
        ({"promptTokenCount": 0, "totalTokenCount": 640}, ResumeTokenCounts(111, 0, True)),  # JS `0 ?? total` is 0: skipped
        ({"promptTokenCount": "500"}, ResumeTokenCounts(111, 0, True)),
        (None, ResumeTokenCounts(111, 0, True)),
    ],
)
def test_usage_counts_follow_get_resume_token_counts(usage: dict | None, expected: ResumeTokenCounts) -> None:
    records = [
        {"type": "system", "subtype": "chat_compression", "systemPayload": {"info": {"newTokenCount": 111}, "compressedHistory": []}},
        {"type": "assistant", "message": {"role": "model", "parts": [{"text": "a"}]}, "usageMetadata": usage},
    ]
    assert resume_token_counts(records) == expected


def test_no_usage_and_no_checkpoint_restores_nothing() -> None:
    assert resume_token_counts([{"type": "user", "message": {"role": "user", "parts": [{"text": "hi"}]}}]) is None
    bad = {"type": "system", "subtype": "chat_compression", "systemPayload": {"info": {"newTokenCount": "many"}}}
    assert resume_token_counts([bad]) is None


def test_mid_turn_message_right_after_a_checkpoint_merges_into_its_last_user_turn(project: Path) -> None:
    rec = SessionRecorder(project, version="t")
    rec.record_chat_compression(
        [*SUMMARY, {"role": "user", "parts": [{"text": "attachments"}]}], INFO
    )
    rec.record_user("steer", subtype="mid_turn_user_message", systemPayload={"displayText": "steer"})
    assert texts(build_history(read_records(rec.path).records))[-1] == "attachments + steer"


def test_torn_lines_around_a_checkpoint_lose_only_themselves(project: Path) -> None:
    rec = SessionRecorder(project, version="t")
    long_session(rec)
    rec.record_chat_compression(SUMMARY, INFO)
    with open(rec.path, "ab") as fh:  # a crash tore a record; the next run goes on after it
        fh.write(b'{"uuid":"torn","type":"user","message":{"role":"us')
    again = SessionRecorder(project, rec.session_id, version="t")
    again.record_user("after the crash")
    again.record_model("fine", usage={"prompt_tokens": 1300, "completion_tokens": 2, "total_tokens": 1302}, model="m")
    with open(rec.path, "ab") as fh:
        fh.write(b'{"uuid":"tail","type":"assistant","mess')

    result = read_records(rec.path)
    assert [reason for _, reason in result.skipped][-1] == "torn last line (incomplete write)"
    assert len(result.skipped) == 2
    history = build_history(result.records)
    assert texts(history) == [SUMMARY[0]["parts"][0]["text"], SUMMARY[1]["parts"][0]["text"], "after the crash", "fine"]
    assert resume_token_counts(active_branch(result.records)) == ResumeTokenCounts(1300, 2, estimated=False)


def test_a_damaged_checkpoint_falls_back_to_the_full_history(project: Path) -> None:
    rec = SessionRecorder(project, version="t")
    long_session(rec)
    rec.record_chat_compression(SUMMARY, INFO)
    rec.record_user("later")
    lines = rec.path.read_bytes().splitlines(keepends=True)
    lines[4] = lines[4][: len(lines[4]) // 2] + b"\n"  # the checkpoint, cut in half
    rec.path.write_bytes(b"".join(lines))
    history = build_history(read_records(rec.path).records)
    assert texts(history)[:2] == ["old question", "old answer"]
    assert texts(history)[-1] == "later"


# --- the CLI's own compacted session -----------------------------------------------------


def test_a_session_the_cli_compacted_resumes_with_its_counts(project: Path) -> None:
    target = chats_dir(project) / f"{CLI_SESSION_ID}.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copyfile(CLI_SESSION, target)
    assembler = ContextAssembler(project, ContextSettings(model="m"), env={})
    registry = SessionRegistry(project, version="t", new_context=lambda: SessionContext(assembler))
    session = registry.load(CLI_SESSION_ID)
    [checkpoint] = [r for r in cli_records() if r.get("subtype") == "chat_compression"]
    assert session.history == checkpoint["systemPayload"]["compressedHistory"]
    assert session.prompt_tokens == checkpoint["systemPayload"]["info"]["newTokenCount"] == 5914
