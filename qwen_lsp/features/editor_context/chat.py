"""What one chat was last told about the editor, so the next turn sends only the changes.

Qwen Code 0.24.4 (``GeminiClient.lastSentIdeContext`` / ``forceFullIdeContext``) resends
the whole context on a chat's first turn, after a compression, after a resume and after
a failed request, and records what it sent only once the model answered; a turn with
nothing to tell changes nothing. The slot lives on the chat, so deleting the chat
deletes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .reminder import delta_text, full_text, wrap
from .state import EditorSnapshot


@dataclass
class EditorContextSlot:
    last_sent: EditorSnapshot | None = None
    force_full: bool = True
    omit_next: bool = False
    """The user left the editor context out of the next message (that message only)."""
    pending: EditorSnapshot | None = None
    """What the turn in flight told the model: ``sent`` once it answers."""

    def reminder(self, now: EditorSnapshot) -> tuple[str, EditorSnapshot] | None:
        """The reminder for a turn that starts now, and the snapshot to ``sent`` once the model answers."""
        if self.omit_next:
            self.omit_next = False
            return None
        text = self.peek(now)
        return None if text is None else (text, now)

    def peek(self, now: EditorSnapshot) -> str | None:
        """What the next message would carry, changing nothing (for the context inspector)."""
        if self.omit_next:
            return None
        text = full_text(now) if self.force_full or self.last_sent is None else delta_text(self.last_sent, now)
        return None if text is None else wrap(text)

    def sent(self, snapshot: EditorSnapshot) -> None:
        self.last_sent = snapshot
        self.force_full = False

    def resend_all(self) -> None:
        """A compression, resume or failed request: the next turn tells the whole context again."""
        self.force_full = True
