"""The session list reads two bounded windows of each file, and titles a session from its recap dialog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qwen_lsp.files.paths import chats_dir
from qwen_lsp.sessions.listing import HEAD_BYTES, TAIL_BYTES, list_sessions, summarize
from qwen_lsp.sessions.reader import read_records
from qwen_lsp.sessions.recap import RECENT_DIALOG_MESSAGES, filter_to_dialog, recap_title, take_recent_dialog

SID = "12345678-1234-4234-8234-123456789abc"
PROC_IO = Path("/proc/self/io")


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


def rec(n: int, type_: str, text: str | None = None, **more) -> dict:
    record = {"uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None, "sessionId": SID,
              "timestamp": f"2026-03-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z", "type": type_}
    if text is not None:
        record["message"] = {"role": "model" if type_ == "assistant" else "user", "parts": [{"text": text}]}
    record.update(more)
    return record


def jsonl(records: list[dict]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def bytes_read() -> int:
    """``rchar``: bytes this process has read through read(2) and friends, whatever the file."""
    for line in PROC_IO.read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def write_big_session(path: Path, head: list[dict], tail: list[dict], middle_mb: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    junk = (b'{"uuid":"g","type":"user","message":{"role":"us\x00\xff garbage ' * 300 + b"\n") * 60
    with open(path, "wb") as fh:
        fh.write(jsonl(head))
        for _ in range(middle_mb * (1 << 20) // len(junk)):
            fh.write(junk)
        fh.write(b"\x00" * 5000)  # the middle ends mid-line: the tail window starts in it
        fh.write(b"\n" + jsonl(tail))


# --- bounded reads ----------------------------------------------------------------------


@pytest.mark.skipif(not PROC_IO.exists(), reason="needs Linux /proc/self/io to count bytes read")
def test_a_50_mb_session_with_a_garbage_middle_lists_from_its_windows(project: Path) -> None:
    path = chats_dir(project) / f"{SID}.jsonl"
    head = [rec(0, "user", "how do I parse the config?"), rec(1, "assistant", "use tomllib")]
    tail = [rec(500, "user", "  now make the   loader async "), rec(501, "assistant", "done"),
            rec(502, "system", subtype="ui_telemetry", systemPayload={})]
    write_big_session(path, head, tail, middle_mb=50)
    size = path.stat().st_size
    assert size > 50_000_000

    before = bytes_read()
    summary = summarize(path)
    spent = bytes_read() - before
    assert spent <= HEAD_BYTES + TAIL_BYTES + 64 * 1024  # the two windows, plus buffering slack
    assert summary is not None
    assert summary.title == "now make the loader async"
    assert summary.updated_at.isoformat() == "2026-03-01T10:08:22+00:00"
    assert summary.answered and not summary.count_is_exact
    assert summary.message_count >= 4

    before = bytes_read()
    read_records(path)  # the measure can tell: a whole read costs the whole file
    assert bytes_read() - before >= size

    [listed] = list_sessions(project)
    assert listed.session_id == SID and listed.title == summary.title


def test_a_large_file_whose_tail_has_no_prompt_is_titled_by_its_first_prompt(project: Path) -> None:
    path = chats_dir(project) / f"{SID}.jsonl"
    head = [rec(0, "system", subtype="session_source", systemPayload={}), rec(1, "user", "first prompt"), rec(2, "assistant", "a")]
    tool = {"functionResponse": {"id": "c", "name": "read_file", "response": {"output": "x" * 100}}}
    tail = [rec(9, "tool_result", message={"role": "user", "parts": [tool]}), rec(10, "assistant", "still working")]
    write_big_session(path, head, tail, middle_mb=1)
    summary = summarize(path)
    assert summary is not None and summary.title == "first prompt"


def test_custom_title_is_preferred_from_the_tail_then_the_head(project: Path) -> None:
    path = chats_dir(project) / f"{SID}.jsonl"
    named = rec(2, "system", subtype="custom_title", systemPayload={"customTitle": "Config work", "titleSource": "manual"})
    write_big_session(path, [rec(0, "user", "first"), rec(1, "assistant", "a"), named], [rec(9, "user", "recent")], middle_mb=1)
    assert summarize(path).title == "Config work"  # type: ignore[union-attr]
    renamed = rec(10, "system", subtype="custom_title", systemPayload={"customTitle": "Loader", "titleSource": "auto"})
    with open(path, "ab") as fh:
        fh.write(jsonl([renamed]))
    assert summarize(path).title == "Loader"  # type: ignore[union-attr]


def test_message_count_of_a_large_file_is_a_close_estimate(project: Path) -> None:
    path = chats_dir(project) / f"{SID}.jsonl"
    records = [rec(n, "user" if n % 2 == 0 else "assistant", f"message {n} " + "words " * 40) for n in range(4000)]
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl(records))
    assert path.stat().st_size > 4 * (HEAD_BYTES + TAIL_BYTES)
    summary = summarize(path)
    assert summary is not None and not summary.count_is_exact
    assert 3600 <= summary.message_count <= 4400


def test_a_small_file_is_read_whole_and_counted_exactly(project: Path) -> None:
    path = chats_dir(project) / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl([rec(0, "user", "q"), rec(1, "assistant", "a"), rec(2, "user", "q2")]) + b'{"torn')
    summary = summarize(path)
    assert summary is not None and summary.count_is_exact and summary.message_count == 3
    assert path.stat().st_size <= HEAD_BYTES + TAIL_BYTES


# --- the recap title -------------------------------------------------------------------


def test_title_is_the_first_user_message_of_the_last_30_dialog_messages(project: Path) -> None:
    records: list[dict] = []
    n = 0
    for turn in range(20):
        records.append(rec(n, "user", f"request {turn}"))
        call = {"functionCall": {"id": f"c{turn}", "name": "read_file", "args": {}}}
        records.append(rec(n + 1, "assistant", message={"role": "model", "parts": [{"text": "hmm", "thought": True}, call]}))
        records.append(rec(n + 2, "tool_result", message={"role": "user", "parts": [{"functionResponse": {"id": f"c{turn}", "name": "read_file", "response": {}}}]}))
        records.append(rec(n + 3, "assistant", f"answer {turn}"))
        n += 4
    path = chats_dir(project) / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(jsonl(records))
    # 40 dialog messages (thoughts, calls and results filtered out); the last 30 start at request 5
    assert summarize(path).title == "request 5"  # type: ignore[union-attr]


def test_filter_to_dialog_keeps_only_spoken_text() -> None:
    history = [
        {"role": "user", "parts": [{"text": "hi"}, {"text": "   "}]},
        {"role": "model", "parts": [{"text": "plan", "thought": True}, {"text": "sig", "thoughtSignature": "x"}, {"text": "hello"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        {"role": "system", "parts": [{"text": "not dialog"}]},
        {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": ""}}, {"text": "see image"}]},
    ]
    assert filter_to_dialog(history) == [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
        {"role": "user", "parts": [{"text": "see image"}]},
    ]


def test_take_recent_dialog_starts_at_a_user_message() -> None:
    def msg(role: str, i: int) -> dict:
        return {"role": role, "parts": [{"text": str(i)}]}

    short = [msg("model", 0), msg("user", 1)]
    assert take_recent_dialog(short) == short  # no longer than 30: whole, whatever opens it
    models_then_user = [msg("model", i) for i in range(40)] + [msg("user", 40)]
    assert take_recent_dialog(models_then_user) == [msg("user", 40)]
    assert take_recent_dialog([msg("model", i) for i in range(31)]) == []
    assert recap_title([msg("model", i) for i in range(31)]) == ""


def test_recap_title_skips_injected_reminders_and_trims() -> None:
    history = [
        {"role": "user", "parts": [{"text": "<system-reminder>ctx</system-reminder>"}]},
        {"role": "user", "parts": [{"text": "<system-reminder>ctx</system-reminder>"}, {"text": "fix   the\nbug " + "x" * 100}]},
    ]
    title = recap_title(history)
    assert title.startswith("fix the bug x") and len(title) == 80 and title.endswith("…")


@given(st.lists(st.sampled_from(["user", "model"]), max_size=80))
def test_take_recent_dialog_is_a_bounded_suffix_opening_with_a_user_message(roles: list[str]) -> None:
    dialog = [{"role": r, "parts": [{"text": str(i)}]} for i, r in enumerate(roles)]
    recent = take_recent_dialog(dialog)
    assert len(recent) <= RECENT_DIALOG_MESSAGES or recent == dialog
    assert recent == dialog[len(dialog) - len(recent) :]
    if len(dialog) > RECENT_DIALOG_MESSAGES:
        assert not recent or recent[0]["role"] == "user"
        skipped = dialog[len(dialog) - RECENT_DIALOG_MESSAGES : len(dialog) - len(recent)]
        assert all(c["role"] == "model" for c in skipped)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.binary(max_size=4000), repeat=st.integers(0, 200), shift=st.integers(0, 3000))
def test_any_bytes_before_the_last_records_never_break_a_row(project: Path, junk: bytes, repeat: int, shift: int) -> None:
    path = chats_dir(project) / f"{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    last = [rec(7, "user", "the last request"), rec(8, "assistant", "x" * shift)]
    path.write_bytes(junk * repeat + b"\n" + jsonl(last))
    summary = summarize(path)
    assert summary is not None
    assert summary.updated_at.isoformat() == "2026-03-01T10:00:08+00:00"
    assert summary.title == "the last request"
