"""Recording a conversation to session JSONL, record by record, as it happens.

The layout and record shape are Qwen Code's (``chatRecordingService.ts``, checked against the
files the 0.24.4 CLI writes), so the CLI can resume our sessions and we can
resume its: ``~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl``,
one compact JSON object per line, each record's ``parentUuid`` naming the
record written before it. Field order follows the CLI's
(``uuid, parentUuid, sessionId, timestamp, type, provenance, cwd, version,
gitBranch`` and then the type's own fields) so files diff cleanly.

Durability: every record is one ``write`` of a whole line to a file opened in
append mode, then ``flush``; a crash can at worst tear the last line, which
the reader skips. The ``os.fsync`` runs on one worker thread: records are
written on the event loop, an fsync takes milliseconds, and 20 chats ending
their turns at once stalled every stream for tens of ms
(``bench/load_streams.py``). A killed process loses nothing by it (the page
cache outlives the process); only a power loss within those milliseconds can. A lock serialises writers so lines from
concurrent threads never interleave. Before the first append to an existing
file, and after any failed write, a missing final newline is restored so a
torn tail never swallows the next record. When another process appended to
the file since our last write (the same session continued in two editor
windows), the chain continues from its last record, so no window's turns
fall off the branch that resume follows.

Interrupted answers: Qwen Code records a cancelled partial answer as an
ordinary ``assistant`` record with no marker. We add ``"interrupted": true``
to that record — an extra field the CLI ignores — so our editor can show the
answer as cut short; resume treats it like any other model turn, so the
partial text is kept.

Answers still streaming are saved in pieces (``sessions.draft``): records
that share one ``uuid``, each carrying the text that arrived since the last
piece, which Qwen Code's reader (and ours) merges into one message. The
round's final record is a sibling of them (same ``parentUuid``, new uuid), so
once it exists the pieces are a dead branch that neither reader shows.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
import uuid as uuid_mod
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..llm.content import Content, Part
from ..llm.errors import LLMError
from .failures import TELEMETRY_SUBTYPE, failure_payload, recorded_failure
from .files import session_path
from .reader import active_branch, read_records
from .records import content_problem

log = logging.getLogger(__name__)

_SYNCER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="session-fsync")
"""Where records are fsynced, in order; Python joins it at exit, so a clean exit syncs everything."""


def wait_for_syncs(timeout: float | None = None) -> None:
    """Block until every record written so far is fsynced and its descriptor closed (the syncer works in
    order, so one empty job behind them is done last): for a caller that counts open files or must know
    the records are on disk."""
    _SYNCER.submit(lambda: None).result(timeout=timeout)


def _sync_and_close(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:
        log.warning("could not fsync a session file: %s", exc.strerror or exc)
    finally:
        os.close(fd)


MessageInput = str | Content | list[Part]
"""A message to record: plain text, a list of parts, or a whole Content."""

_PROVENANCE = {"user": "real_user", "assistant": "assistant_output", "tool_result": "tool_result", "system": "system"}
"""Qwen Code ≥0.24 tags each record with its source; older readers ignore it."""


class SessionWriteError(OSError):
    """A record could not be saved. Earlier records on disk are untouched."""


def iso_timestamp(now: datetime | None = None) -> str:
    """UTC time as JS ``Date.prototype.toISOString()`` prints it: ``2026-08-19T12:00:00.000Z``."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def usage_metadata(usage: Mapping[str, Any] | None) -> dict[str, int] | None:
    """OpenAI ``usage`` as Qwen Code's (Gemini-style) ``usageMetadata``.

    The CLI writes ``promptTokenCount, candidatesTokenCount,
    thoughtsTokenCount, totalTokenCount, cachedContentTokenCount`` in that
    order. A mapping already in that shape is passed through unchanged.
    """
    if not usage:
        return None
    if "promptTokenCount" in usage or "totalTokenCount" in usage:
        return {k: v for k, v in usage.items() if isinstance(v, int)}
    prompt = _int(usage.get("prompt_tokens"))
    completion = _int(usage.get("completion_tokens"))
    total = _int(usage.get("total_tokens")) or prompt + completion
    completion_details = usage.get("completion_tokens_details") or {}
    prompt_details = usage.get("prompt_tokens_details") or {}
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": completion,
        "thoughtsTokenCount": _int(completion_details.get("reasoning_tokens")),
        "totalTokenCount": total,
        "cachedContentTokenCount": _int(prompt_details.get("cached_tokens")),
    }


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _content(role: str, message: MessageInput) -> Content:
    if isinstance(message, str):
        return {"role": role, "parts": [{"text": message}]}  # type: ignore[typeddict-item]
    if isinstance(message, Mapping):
        return {"role": role, "parts": list(message.get("parts", []))}  # type: ignore[typeddict-item]
    return {"role": role, "parts": list(message)}  # type: ignore[typeddict-item]


def _dump(record: Mapping[str, Any]) -> bytes:
    """One compact line, non-ASCII kept raw like ``JSON.stringify``.

    A string with a lone surrogate cannot be UTF-8 encoded raw; that record
    falls back to ``\\u`` escapes, which is what JS writes for it anyway.
    """
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise SessionWriteError(f"Session record is not JSON-serialisable: {exc}") from exc
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(record, separators=(",", ":")).encode("ascii") + b"\n"


class SessionRecorder:
    """Appends the records of one session to its JSONL file.

    The file is created on the first record, so a session that never says
    anything leaves nothing behind. A recorder given the id of an existing
    session continues its ``parentUuid`` chain from the last record on disk.
    Thread-safe: every method may be called from any thread.
    """

    def __init__(
        self,
        cwd: Path,
        session_id: str | None = None,
        *,
        version: str,
        git_branch: str | None = None,
    ) -> None:
        self.cwd = Path(cwd).resolve()
        self.session_id = session_id or str(uuid_mod.uuid4())
        self.path = session_path(self.cwd, self.session_id)
        self.version = version
        self.git_branch = git_branch
        self._lock = threading.Lock()
        self._last_uuid: str | None = None
        self._opened = False
        self._tail_suspect = True
        """True when the file may end without a newline: before our first write, after a failure."""
        self._end: int | None = None
        """The file's size after our last write; another size means another writer appended since."""

    @property
    def last_uuid(self) -> str | None:
        """The uuid of the last record saved (the next record's ``parentUuid``)."""
        return self._last_uuid

    def record_user(self, content: MessageInput, **extra: Any) -> str:
        """A user prompt. ``extra`` adds top-level fields (``subtype``, ``systemPayload``, ``promptId``…)."""
        return self._append("user", {**extra, "message": _content("user", content)})

    def record_model(
        self,
        content: MessageInput,
        *,
        usage: Mapping[str, Any] | None,
        model: str | None,
        interrupted: bool = False,
    ) -> str:
        """A model answer (text, thoughts, function calls). ``usage`` may be OpenAI- or Gemini-shaped."""
        fields: dict[str, Any] = {}
        if model is not None:
            fields["model"] = model
        fields["message"] = _content("model", content)
        metadata = usage_metadata(usage)
        if metadata is not None:
            fields["usageMetadata"] = metadata
        if interrupted:
            fields["interrupted"] = True
        return self._append("assistant", fields)

    def record_model_piece(self, piece_uuid: str, content: Content, *, model: str | None, still_wanted: Callable[[], bool]) -> bool:
        """Append one piece of an answer still streaming (``sessions.draft``), marked interrupted.

        Every piece of one answer shares ``piece_uuid`` and the ``parentUuid``
        the next real record would get; the chain does not advance, so the
        round's final record becomes the pieces' sibling. ``still_wanted`` is
        asked under the writer lock: once the round has settled it answers
        False and nothing is written, so a piece can never land after the
        final record. Returns whether the piece was written.
        """
        fields: dict[str, Any] = {}
        if model is not None:
            fields["model"] = model
        fields["message"] = _content("model", content)
        fields["interrupted"] = True
        with self._lock:
            if not still_wanted():
                return False
            self._append_locked("assistant", fields, record_uuid=piece_uuid, advance=False)
            return True

    def record_tool_result(self, content: MessageInput, tool_call_result: Mapping[str, Any] | None) -> str:
        """Function responses sent back to the model (role ``user``), with the UI's call metadata."""
        fields: dict[str, Any] = {"message": _content("user", content)}
        if tool_call_result is not None:
            fields["toolCallResult"] = dict(tool_call_result)
        return self._append("tool_result", fields)

    def record_system(self, subtype: str, payload: Mapping[str, Any]) -> str:
        """A system event such as ``custom_title``; compression has :meth:`record_chat_compression`."""
        return self._append("system", {"subtype": subtype, "systemPayload": dict(payload)})

    def record_failure(self, exc: LLMError, *, model: str | None, duration_ms: int, prompt_id: str, secrets: Sequence[str] = ()) -> None:
        """A failed turn's error as Qwen Code 0.24.4's ``api_error`` record (``sessions.failures``), so a reopened chat shows it.

        A write that fails is logged, not raised: the user must see the model's error, not the disk's.
        """
        payload = failure_payload(
            exc.message,
            exc.kind,
            status=exc.status,
            model=model,
            duration_ms=duration_ms,
            prompt_id=prompt_id,
            timestamp=iso_timestamp(),
            secrets=secrets,
        )
        try:
            self.record_system(TELEMETRY_SUBTYPE, payload)
        except SessionWriteError as err:
            log.warning("The failed turn's error was not saved: %s", err)

    def rewind_failed_turn(self) -> bool:
        """Retry: the next record continues from before the failed turn's prompt, so that turn leaves the active branch.

        The file stays append-only: the retried prompt becomes a sibling of the
        failed one (same ``parentUuid``), and resume, which follows the chain
        back from the last record (``reader.active_branch``), shows the prompt
        once with its new answer; the model's history holds it once too. Only
        when the chat's last record is a failed request's or an unanswered
        prompt; returns whether it rewound.
        """
        with self._lock:
            branch = active_branch(read_records(self.path).records) if self.path.exists() else []
            if not branch or not (recorded_failure(branch[-1]) is not None or _is_prompt(branch[-1])):
                return False
            prompt = next((r for r in reversed(branch) if _is_prompt(r)), None)
            if prompt is None:
                return False
            parent = prompt.get("parentUuid")
            self._last_uuid = parent if isinstance(parent, str) else None
            self._opened = True
            self._end = os.stat(self.path).st_size
            return True

    def record_chat_compression(
        self,
        compressed_history: Sequence[Content],
        info: Mapping[str, Any],
        *,
        completed_tool_call_ids: Sequence[str] = (),
    ) -> str:
        """A compression checkpoint, written as Qwen Code 0.24.4's ``recordChatCompression`` writes it.

        ``{"type":"system","subtype":"chat_compression","systemPayload":
        {"info": …, "compressedHistory": […], "completedToolCallIds": […]}}``
        (payload keys in that order; checked against a session the CLI
        compacted with ``/compress``, kept in ``tests/data/sessions``).
        ``info`` is the CLI's ``ChatCompressionInfo`` and is stored as given:
        ``originalTokenCount``, ``newTokenCount``, ``compressionStatus``
        (1 = COMPRESSED), ``triggerReason`` and the ``…IsEstimated`` flags.
        ``completedToolCallIds`` is always written, ``[]`` when there are
        none, as the CLI does.

        The UI records before the checkpoint stay in the file; resume (ours
        and the CLI's) continues from ``compressedHistory`` plus the records
        after it, and takes ``info.newTokenCount`` as the prompt size until
        an answer reports a real one. So the checkpoint is refused
        (``ValueError``, nothing written) when our own reader would skip it or
        could not restore the count from it: a content of the wrong shape,
        or a ``newTokenCount`` that is not a non-negative integer.
        """
        history = [dict(content) for content in compressed_history]
        for index, content in enumerate(history):
            problem = content_problem(content)
            if problem:
                raise ValueError(f"compressed_history[{index}]: {problem}")
        new_count = info.get("newTokenCount")
        if not isinstance(new_count, int) or isinstance(new_count, bool) or new_count < 0:
            raise ValueError(f"info.newTokenCount must be a non-negative integer, not {new_count!r}")
        ids = [i for i in completed_tool_call_ids if isinstance(i, str)]
        payload = {"info": dict(info), "compressedHistory": history, "completedToolCallIds": ids}
        return self._append("system", {"subtype": "chat_compression", "systemPayload": payload})

    def _append(self, record_type: str, fields: Mapping[str, Any]) -> str:
        with self._lock:
            return self._append_locked(record_type, fields)

    def _append_locked(self, record_type: str, fields: Mapping[str, Any], *, record_uuid: str | None = None, advance: bool = True) -> str:
        if not self._opened:
            self._last_uuid = self._last_uuid_on_disk()
            self._opened = True
        elif self._appended_by_another():
            self._last_uuid = self._last_uuid_on_disk() or self._last_uuid
        record: dict[str, Any] = {
            "uuid": record_uuid or str(uuid_mod.uuid4()),
            "parentUuid": self._last_uuid,
            "sessionId": self.session_id,
            "timestamp": iso_timestamp(),
            "type": record_type,
            "provenance": _PROVENANCE[record_type],
            "cwd": str(self.cwd),
            "version": self.version,
        }
        if self.git_branch:
            record["gitBranch"] = self.git_branch
        record.update(fields)
        self._write_line(_dump(record))
        if advance:
            self._last_uuid = record["uuid"]
        return record["uuid"]

    def _appended_by_another(self) -> bool:
        """True when the file grew since our last write: another window continues this session too.

        The chain then continues from the other writer's last record, not
        ours, so resume (which follows ``parentUuid`` back from the last
        record) shows both windows' turns instead of dropping the other's.
        """
        if self._end is None:
            return False
        try:
            info = os.stat(self.path)
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode) and info.st_size > self._end

    def _last_uuid_on_disk(self) -> str | None:
        for record in reversed(read_records(self.path).records):
            if isinstance(record.get("uuid"), str):
                return record["uuid"]
        return None

    def _write_line(self, line: bytes) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as handle:
                if self._tail_suspect and _ends_without_newline(handle):
                    line = b"\n" + line
                handle.write(line)
                handle.flush()
                self._end = os.fstat(handle.fileno()).st_size
                _SYNCER.submit(_sync_and_close, os.dup(handle.fileno()))
        except OSError as exc:
            self._tail_suspect = True
            reason = exc.strerror or str(exc)
            raise SessionWriteError(
                f"Could not save the chat to {self.path}: {reason}. "
                f"Check that {self.path.parent} is a writable directory and the disk has free space; "
                "records saved earlier are kept."
            ) from exc
        self._tail_suspect = False


def _is_prompt(record: Mapping[str, Any]) -> bool:
    """A typed message's record (not a tool result, not a message sent into a running turn)."""
    return record.get("type") == "user" and record.get("subtype") != "mid_turn_user_message"


def _ends_without_newline(handle: Any) -> bool:
    """True when the append-mode file is non-empty and its last byte is not ``\\n``."""
    size = os.fstat(handle.fileno()).st_size
    if size == 0:
        return False
    with open(handle.name, "rb") as reader:
        reader.seek(size - 1)
        return reader.read(1) != b"\n"
