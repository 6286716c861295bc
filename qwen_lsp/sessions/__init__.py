"""sessions core: session JSONL recording, reading, listing and resume (``chatRecordingService.ts``)."""

from .listing import SessionSummary, list_sessions
from .reader import ReadResult, build_history, delete_session, read_records
from .recording import SessionRecorder, SessionWriteError
from .resume_tokens import ResumeTokenCounts, resume_token_counts

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
