"""sessions core: session JSONL recording, reading, listing and resume (design §6, spec §13)."""

from qwen_lsp.sessions.reader import (
    ReadResult,
    SessionSummary,
    build_history,
    delete_session,
    list_sessions,
    read_records,
)
from qwen_lsp.sessions.recording import SessionRecorder, SessionWriteError

__all__ = [
    "ReadResult",
    "SessionRecorder",
    "SessionSummary",
    "SessionWriteError",
    "build_history",
    "delete_session",
    "list_sessions",
    "read_records",
]
