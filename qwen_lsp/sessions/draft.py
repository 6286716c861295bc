"""An answer still streaming, saved to its session as it arrives, so a kill -9 keeps what the user saw.

A round's answer is recorded when its stream ends (``agent.loop``); a crash
before that used to lose every word already on the user's screen. The draft
saves the text in pieces while the stream runs: at most
:data:`SAVE_INTERVAL` seconds after a delta arrives, or at once when
:data:`SAVE_BYTES` characters are waiting, whichever comes first. The
interval counts from the round's first delta, so an answer that completes
within it (most short ones) writes no piece at all. Each piece
holds only the text that arrived since the previous one, so the bytes
written grow with the answer, not with its square.

The pieces are ordinary ``assistant`` records marked ``"interrupted": true``
that share one ``uuid`` per round and the ``parentUuid`` the final record
will get. Qwen Code's reader (``reconstructHistory`` / ``aggregateRecords``)
and ours (``reader.active_branch``) merge records of one uuid into one
message, so after a crash the resumed session ends with the partial answer,
marked interrupted. When the round completes, its final record is written as
the pieces' sibling; the chain runs through it and the pieces are a dead
branch, so neither reader shows the answer twice.

Writes never run on the event loop: a save is handed to a worker thread, at
most one is in flight, and deltas that arrive meanwhile are coalesced into
the next piece. :meth:`AnswerDraft.settle` ends the round; a piece still in
flight then either lands before the final record or not at all (the
recorder checks under its writer lock), so no piece follows the answer it
previews.
"""

from __future__ import annotations

import asyncio
import logging
import uuid as uuid_mod

from ..llm.content import Content, Part
from .recording import SessionRecorder

log = logging.getLogger(__name__)

SAVE_INTERVAL = 1.0
"""Seconds a streamed delta may wait before it is on disk (the most a kill -9 can lose)."""

SAVE_BYTES = 8 << 10
"""Characters waiting that trigger a save before the interval is up (a fast stream saves sooner)."""


class AnswerDraft:
    """The streaming answer of one chat's rounds; create one per turn, on the event loop."""

    def __init__(self, recorder: SessionRecorder, model: str | None, *, interval: float = SAVE_INTERVAL, max_chars: int = SAVE_BYTES) -> None:
        self._recorder = recorder
        self._model = model
        self._interval = interval
        self._max_chars = max_chars
        self._round = 0
        self._piece_uuid = str(uuid_mod.uuid4())
        self._thought: list[str] = []
        self._text: list[str] = []
        self._saved_thought = 0
        self._saved_text = 0
        self._waiting = 0
        self._last_save = float("-inf")
        self._first_delta: float | None = None
        """When the round's first delta arrived: an answer done within the interval writes no piece at all."""
        self._timer: asyncio.TimerHandle | None = None
        self._in_flight: asyncio.Future[bool] | None = None

    def grew(self, thought: list[str], text: list[str], added: int) -> None:
        """The round's lists (only ever appended to) gained a delta of ``added`` characters."""
        self._thought, self._text = thought, text
        self._waiting += added
        if self._first_delta is None:
            self._first_delta = asyncio.get_running_loop().time()
        if self._in_flight is None:
            self._schedule()

    def settle(self) -> None:
        """The round's stream ended (complete, failed or cancelled): no piece of it may be written from now on."""
        self._round += 1
        self._piece_uuid = str(uuid_mod.uuid4())
        self._thought, self._text = [], []
        self._saved_thought = self._saved_text = self._waiting = 0
        self._first_delta = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self) -> None:
        if self._waiting == 0:
            return
        loop = asyncio.get_running_loop()
        if self._waiting >= self._max_chars:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None
            self._save()
        elif self._timer is None:
            since = max(self._last_save, self._first_delta if self._first_delta is not None else loop.time())
            self._timer = loop.call_later(max(0.0, since + self._interval - loop.time()), self._save)

    def _save(self) -> None:
        self._timer = None
        piece = self._take_piece()
        if piece is None:
            return
        loop = asyncio.get_running_loop()
        self._last_save = loop.time()
        round_no, piece_uuid = self._round, self._piece_uuid

        def write() -> bool:
            return self._recorder.record_model_piece(piece_uuid, piece, model=self._model, still_wanted=lambda: self._round == round_no)

        self._in_flight = loop.run_in_executor(None, write)
        self._in_flight.add_done_callback(self._saved)

    def _take_piece(self) -> Content | None:
        """The text that arrived since the last piece, as a Content; None when nothing did."""
        parts: list[Part] = []
        thought = "".join(self._thought[self._saved_thought :])
        text = "".join(self._text[self._saved_text :])
        self._saved_thought, self._saved_text, self._waiting = len(self._thought), len(self._text), 0
        if thought:
            parts.append({"text": thought, "thought": True})
        if text:
            parts.append({"text": text})
        return {"role": "model", "parts": parts} if parts else None

    def _saved(self, done: asyncio.Future[bool]) -> None:
        self._in_flight = None
        if not done.cancelled() and done.exception() is not None:
            # The final record will try again and report a failure to the user; a lost preview only warrants a log line.
            log.warning("Could not save the streaming answer so far: %s", done.exception())
        self._schedule()
