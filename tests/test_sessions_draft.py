"""A streaming answer saved in pieces (``sessions.draft``), and how readers merge and supersede them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from qwen_lsp.llm.content import visible_text
from qwen_lsp.sessions.draft import AnswerDraft
from qwen_lsp.sessions.reader import active_branch, build_conversation, build_history, read_records
from qwen_lsp.sessions.recording import SessionRecorder


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


async def wait_for_lines(path: Path, count: int) -> list[dict]:
    for _ in range(500):  # a hang detector, not a speed assertion
        if path.exists() and len(lines := lines_of(path)) >= count:
            return lines
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never reached {count} lines")


async def test_pieces_share_one_uuid_and_read_back_as_the_partial_answer_marked_interrupted(home: Path, tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, version="0.1.0")
    question = rec.record_user("explain")
    draft = AnswerDraft(rec, "m", interval=0.02)
    thought: list[str] = []
    text: list[str] = []
    thought.append("hmm")
    draft.grew(thought, text, 3)
    text.append("Hello, ")
    draft.grew(thought, text, 7)
    lines = await wait_for_lines(rec.path, 2)
    text.append("world")
    draft.grew(thought, text, 5)
    lines = await wait_for_lines(rec.path, 3)

    pieces = lines[1:]
    assert {p["uuid"] for p in pieces} == {pieces[0]["uuid"]}
    assert all(p["parentUuid"] == question and p["interrupted"] is True and p["type"] == "assistant" for p in pieces)
    assert [p["message"]["parts"] for p in pieces] == [[{"text": "hmm", "thought": True}, {"text": "Hello, "}], [{"text": "world"}]]
    records = read_records(rec.path).records
    branch = active_branch(records)
    assert len(branch) == 2 and branch[1]["interrupted"] is True
    history = build_history(records)
    assert [visible_text(c) for c in history] == ["explain", "Hello, world"]
    # the chain did not move: the next record the round writes is the pieces' sibling
    assert rec.last_uuid == question
    draft.settle()


async def test_the_final_record_supersedes_the_pieces_so_the_answer_shows_once(home: Path, tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, version="0.1.0")
    question = rec.record_user("explain")
    draft = AnswerDraft(rec, "m", interval=0.0)
    text = ["partial "]
    draft.grew([], text, 8)
    await wait_for_lines(rec.path, 2)
    text.append("and the rest")
    draft.settle()
    final = rec.record_model({"role": "model", "parts": [{"text": "".join(text)}]}, usage=None, model="m")
    await asyncio.sleep(0.05)  # any piece still scheduled would have landed by now
    lines = lines_of(rec.path)
    assert lines[-1]["uuid"] == final and lines[-1]["parentUuid"] == question and "interrupted" not in lines[-1]
    records = read_records(rec.path).records
    assert [visible_text(c) for c, _ in build_conversation(records)] == ["explain", "partial and the rest"]
    rec.record_user("next")
    assert [visible_text(c) for c in build_history(read_records(rec.path).records)] == ["explain", "partial and the rest", "next"]


def test_a_piece_is_not_written_once_its_round_settled(home: Path, tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, version="0.1.0")
    rec.record_user("q")
    assert rec.record_model_piece("u1", {"role": "model", "parts": [{"text": "late"}]}, model=None, still_wanted=lambda: False) is False
    assert len(lines_of(rec.path)) == 1


async def test_deltas_arriving_while_a_save_runs_are_coalesced_into_few_pieces(home: Path, tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, version="0.1.0")
    rec.record_user("q")
    draft = AnswerDraft(rec, None, interval=3600.0, max_chars=10)
    text: list[str] = []
    for i in range(200):
        text.append(f"{i:04d}.")
        draft.grew([], text, 5)
    # the first save goes at once (10 characters waiting); everything after it waits for that write, then goes as one piece
    lines = await wait_for_lines(rec.path, 3)
    await asyncio.sleep(0.05)
    lines = lines_of(rec.path)
    assert 3 <= len(lines) < 20
    assert "".join(p["text"] for line in lines[1:] for p in line["message"]["parts"]) == "".join(text)
    draft.settle()


def test_records_sharing_a_uuid_merge_as_qwen_code_aggregates_them(tmp_path: Path) -> None:
    """``reconstructHistory``: the leaf is the last record; same-uuid records concatenate parts, the last usage wins."""
    path = tmp_path / "s.jsonl"
    rows = [
        {"uuid": "a", "parentUuid": None, "type": "user", "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "parts": [{"text": "q"}]}},
        {"uuid": "b", "parentUuid": "a", "type": "assistant", "timestamp": "2026-01-01T00:00:01.000Z", "message": {"role": "model", "parts": [{"text": "one "}]}},
        {"uuid": "t", "parentUuid": "a", "type": "system", "subtype": "custom_title", "timestamp": "2026-01-01T00:00:01.500Z", "systemPayload": {}},
        {"uuid": "b", "parentUuid": "a", "type": "assistant", "timestamp": "2026-01-01T00:00:02.000Z", "message": {"role": "model", "parts": [{"text": "two"}]}, "usageMetadata": {"totalTokenCount": 5}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    branch = active_branch(read_records(path).records)
    assert [r["uuid"] for r in branch] == ["a", "b"]
    assert branch[1]["message"]["parts"] == [{"text": "one "}, {"text": "two"}]
    assert branch[1]["usageMetadata"] == {"totalTokenCount": 5} and branch[1]["timestamp"] == "2026-01-01T00:00:02.000Z"


async def test_an_answer_done_within_the_interval_writes_no_piece(home: Path, tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, version="0.1.0")
    rec.record_user("q")
    draft = AnswerDraft(rec, None, interval=3600.0)
    text = ["quick"]
    draft.grew([], text, 5)
    await asyncio.sleep(0.05)
    draft.settle()
    rec.record_model({"role": "model", "parts": [{"text": "quick"}]}, usage=None, model=None)
    assert [line["type"] for line in lines_of(rec.path)] == ["user", "assistant"]
