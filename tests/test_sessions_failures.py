"""A failed turn's error in the session file, and how a reopened chat shows it.

The record shape is checked against a file the Qwen Code 0.24.4 CLI wrote
after its endpoint answered HTTP 500 to every attempt
(``tests/data/sessions/qwen024_http500.jsonl``, kept byte for byte).
"""

from __future__ import annotations

import json
from pathlib import Path

from qwen_lsp.sessions.failures import MAX_ERROR_CHARS, REDACTED, TELEMETRY_SUBTYPE, failure_payload, recorded_failure, redact
from qwen_lsp.sessions.reader import build_conversation, read_records
from qwen_lsp.sessions.recording import SessionRecorder, iso_timestamp
from qwen_lsp.sessions.shown import NO_ANSWER, ShownMessage, shown_transcript

CLI_SESSION = Path(__file__).parent / "data" / "sessions" / "qwen024_http500.jsonl"


def reopened(path: Path) -> list[ShownMessage]:
    return shown_transcript(build_conversation(read_records(path).records))


def payload(message: str, kind: str = "server", status: int | None = 500, secrets: tuple[str, ...] = ()) -> dict:
    return failure_payload(
        message, kind, status=status, model="m", duration_ms=12, prompt_id="s########t", timestamp=iso_timestamp(), secrets=secrets  # type: ignore[arg-type]
    )


def test_the_record_has_the_shape_the_cli_writes_for_a_failed_request(home: Path, tmp_path: Path) -> None:
    cli = [json.loads(line) for line in CLI_SESSION.read_text("utf-8").splitlines()]
    cli_errors = [r for r in cli if r.get("subtype") == TELEMETRY_SUBTYPE]
    assert cli_errors and all(r["systemPayload"]["uiEvent"]["event.name"] == "qwen-code.api_error" for r in cli_errors)

    rec = SessionRecorder(tmp_path, version="0.1.0")
    rec.record_user("hi")
    rec.record_system(TELEMETRY_SUBTYPE, payload("The model server at http://x/v1 failed (HTTP 500)."))
    ours = json.loads(rec.path.read_text("utf-8").splitlines()[-1])
    theirs = cli_errors[-1]
    assert [k for k in ours if k != "gitBranch"] == [k for k in theirs if k != "gitBranch"]
    assert list(ours["systemPayload"]) == ["uiEvent"]
    assert list(ours["systemPayload"]["uiEvent"]) == list(theirs["systemPayload"]["uiEvent"])
    assert ours["provenance"] == theirs["provenance"] == "system"


def test_a_cli_session_whose_every_attempt_failed_reopens_with_its_error_and_a_kind_from_the_status() -> None:
    messages = reopened(CLI_SESSION)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[0].text == "hello there"
    assert messages[1].error == "500 Scripted failure: upstream exploded at https://example.invalid/x"
    assert messages[1].error_kind == "server"


def test_a_failed_turn_shows_its_error_and_kind_and_an_old_file_still_says_none_was_recorded(home: Path, tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, version="0.1.0")
    rec.record_user("first")  # a file written before errors were recorded: nothing after the prompt
    rec.record_user("second")
    rec.record_system(TELEMETRY_SUBTYPE, payload("The API key was rejected by http://x/v1 (HTTP 401).", "auth", 401))
    rec.record_user("third")
    rec.record_model("Partial answ", usage=None, model="m", interrupted=True)
    rec.record_system(TELEMETRY_SUBTYPE, payload("The model stream broke off.", "protocol", None))
    rec.record_user("fourth")
    rec.record_model("fine", usage=None, model="m")

    messages = reopened(rec.path)
    assert [(m.role, m.text) for m in messages] == [
        ("user", "first"),
        ("assistant", ""),
        ("user", "second"),
        ("assistant", ""),
        ("user", "third"),
        ("assistant", "Partial answ"),
        ("user", "fourth"),
        ("assistant", "fine"),
    ]
    assert (messages[1].error, messages[1].error_kind) == (NO_ANSWER, None)
    assert (messages[3].error, messages[3].error_kind) == ("The API key was rejected by http://x/v1 (HTTP 401).", "auth")
    assert (messages[5].error, messages[5].error_kind, messages[5].interrupted) == ("The model stream broke off.", "protocol", True)
    assert messages[7].error is None


def test_an_error_followed_by_an_answer_in_the_same_turn_was_retried_and_is_not_shown(home: Path, tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, version="0.1.0")
    rec.record_user("q")
    rec.record_system(TELEMETRY_SUBTYPE, payload("500 try again"))
    rec.record_model("answered on the second attempt", usage=None, model="m")
    messages = reopened(rec.path)
    assert messages[1].text == "answered on the second attempt" and messages[1].error is None


def test_credentials_are_redacted_and_the_text_is_bounded() -> None:
    key = "sk-0123456789abcdef0123456789abcdef"
    said = (
        f"The model server failed. Server said: key {key} is bad; Authorization: Bearer abcdefgh12345678 "
        "sent to https://alice:hunter2@proxy.example/v1 and api_key=zzzz9999"
    )
    event = payload(said, secrets=(key,))["uiEvent"]
    text = event["error_message"]
    for secret in (key, "abcdefgh12345678", "hunter2", "zzzz9999"):
        assert secret not in text
    assert text.count(REDACTED) == 4
    assert "https://alice:[redacted]@proxy.example/v1" in text
    # Our own messages keep their advice: setting names are not mistaken for credentials.
    advice = "The API key was rejected by http://x/v1 (HTTP 401). Check OPENAI_API_KEY or model.apiKey."
    assert redact(advice) == advice

    long = redact("x" * 50_000 + key, (key,))
    assert len(long) == MAX_ERROR_CHARS and long.endswith("…")


def test_a_record_written_by_anyone_is_read_back_bounded_and_an_unknown_kind_is_dropped() -> None:
    record = {
        "type": "system",
        "subtype": TELEMETRY_SUBTYPE,
        "systemPayload": {"uiEvent": {"event.name": "qwen-code.api_error", "error_message": "y" * 100_000, "error_type": "NotAKind"}},
    }
    failure = recorded_failure(record)
    assert failure is not None and len(failure.message) == MAX_ERROR_CHARS and failure.kind is None
    assert recorded_failure({**record, "systemPayload": {"uiEvent": {"event.name": "qwen-code.api_response"}}}) is None
    assert recorded_failure({**record, "systemPayload": "x"}) is None
