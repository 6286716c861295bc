"""Property tests of the session JSONL reader on damaged files (torn lines, invalid UTF-8, huge lines).

Properties: ``raw_lines`` agrees with ``bytes.split(b"\\n")`` (numbers,
sizes, the torn flag) and never holds a line past its cap; ``read_records``
never raises, keeps exactly the lines that are JSON objects, in order, and
accounts for every other non-blank line as skipped, a torn last line as
such.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from qwen_lsp.sessions.lines import raw_lines
from qwen_lsp.sessions.reader import read_records

_GOOD = st.sampled_from([
    {"uuid": "u1", "type": "user", "message": {"role": "user", "parts": [{"text": "hi"}]}},
    {"uuid": "u2", "parentUuid": "u1", "type": "assistant", "message": {"role": "model", "parts": [{"text": "ok"}]}},
    {"type": "system", "subtype": "x"},
    {"k": "é\u2028"},
])
_LINE = st.one_of(
    _GOOD.map(lambda r: json.dumps(r, ensure_ascii=False).encode()),
    st.sampled_from([b"", b"   ", b"{", b"[1]", b"\"s\"", b"\xff\xfe", b'{"a": "\xc3"}', b"null", b"{}{}", b"\x00",
                     b"[" * 200 + b"]" * 200, b'{"a":' * 150 + b"1" + b"}" * 150]),
    st.binary(max_size=30).filter(lambda b: b"\n" not in b),
)


def write(lines: list[bytes], torn: bool) -> Path:
    handle = tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False)
    with handle:
        handle.write(b"\n".join(lines) + (b"" if torn else b"\n"))
    return Path(handle.name)


@settings(max_examples=150)
@given(lines=st.lists(_LINE, max_size=10), torn=st.booleans(), cap=st.integers(1, 40))
def test_raw_lines_agree_with_split_and_respect_the_cap(lines: list[bytes], torn: bool, cap: int) -> None:
    path = write(lines, torn)
    try:
        data = path.read_bytes()
        pieces = data.split(b"\n")
        if data.endswith(b"\n") or not data:
            pieces = pieces[:-1]
        got = list(raw_lines(path, max_bytes=cap))
        assert [r.number for r in got] == list(range(1, len(pieces) + 1))
        for raw, piece in zip(got, pieces, strict=True):
            assert raw.size == len(piece)
            assert raw.data == (piece if len(piece) <= cap else None)
        if got:
            assert [r.terminated for r in got[:-1]] == [True] * (len(got) - 1)
            assert got[-1].terminated is data.endswith(b"\n")
    finally:
        path.unlink()


def is_object(piece: bytes) -> bool:
    try:
        return isinstance(json.loads(piece.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False


@settings(max_examples=150)
@given(lines=st.lists(_LINE, max_size=10), torn=st.booleans())
def test_read_records_keeps_objects_and_accounts_for_the_rest(lines: list[bytes], torn: bool) -> None:
    path = write(lines, torn)
    try:
        result = read_records(path)
        pieces = [p for p in path.read_bytes().split(b"\n")]
        if not torn or not lines:
            pieces = pieces[:-1]
        numbered = list(enumerate(pieces, start=1))
        kept = [n for n, p in numbered if p.strip() and is_object(p) and p.count(b"{") < 100]
        assert len(result.records) == len(kept)
        skipped = [n for n, _ in result.skipped]
        assert skipped == sorted(set(skipped))
        assert sorted(kept + skipped) == [n for n, p in numbered if p.strip()]
        if torn and pieces and pieces[-1].strip() and not is_object(pieces[-1]):
            last_reason = dict(result.skipped)[len(pieces)]
            assert last_reason == "torn last line (incomplete write)" or not last_reason.startswith("invalid JSON")
    finally:
        path.unlink()
