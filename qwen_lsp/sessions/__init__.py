"""sessions core: session JSONL recording, reading, listing and resume (``chatRecordingService.ts``)."""

from qwen_lsp.sessions.listing import SessionSummary, list_sessions
from qwen_lsp.sessions.reader import ReadResult, build_history, delete_session, read_records
from qwen_lsp.sessions.recording import SessionRecorder, SessionWriteError
from qwen_lsp.sessions.resume_tokens import ResumeTokenCounts, resume_token_counts

__all__ = [
    "ReadResult",
    "ResumeTokenCounts",
    "SessionRecorder",
    "SessionSummary",
    "SessionWriteError",
    "build_history",
    "delete_session",
    "list_sessions",
    "read_records",
    "resume_token_counts",
]
