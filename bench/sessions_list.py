"""Listing 200 sessions of 2 MB each (``qwen/sessions/list``), which must stay well under a second.

One session is written by :class:`SessionRecorder` (prompts, answers
with usage, function calls and ~20 KB tool results, a compression
checkpoint half way, until the file passes 2 MB) and copied under 199
more ids (the recorder fsyncs every record, which would make writing 200
files take minutes and measures nothing the listing does). The listing
reads two 64 KiB windows per file (``sessions/listing.py``), so its cost
should track the number of files, not their size.

* ``sessions_list.cold_ms`` — ``list_sessions`` after every file's mtime
  was bumped (so no cached row is reused: each file is opened, both
  windows read and parsed); median of several runs. Baseline: ``os.stat``
  of the same 200 files. The files are in the page cache (just written),
  as the sessions of a project in use are.
* ``sessions_list.vs_whole_parse`` — the same cold listing; baseline:
  ``read_records`` of every file (what listing did before it read
  windows, and what an exact message count needs), one run. ``raw_read_ms``
  adds the bare ``read()`` of all the bytes, the floor of any whole-file
  listing.
* ``sessions_list.warm_ms`` — ``list_sessions`` again with nothing changed
  (one ``stat`` per file, rows from the cache); baseline: the ``stat`` loop.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import emit, log, median

from qwen_lsp.files.paths import chats_dir
from qwen_lsp.sessions.listing import list_sessions
from qwen_lsp.sessions.reader import read_records
from qwen_lsp.sessions.recording import SessionRecorder

REPEATS = 7


def write_sessions(project: Path, count: int, target_bytes: int) -> list[Path]:
    first = write_session(project, target_bytes)
    data = first.read_bytes()
    paths = [first]
    for index in range(1, count):
        path = first.with_name(f"bench-{index:04d}.jsonl")
        path.write_bytes(data.replace(b"bench-0000", f"bench-{index:04d}".encode()))
        paths.append(path)
    return paths


def write_session(project: Path, target_bytes: int) -> Path:
    rec = SessionRecorder(project, "bench-0000", version="bench")
    rec.record_user("please refactor the config loader")
    turn = 0
    checkpointed = False
    while rec.path.stat().st_size < target_bytes:
        rec.record_model(
            [{"functionCall": {"id": f"c{turn}", "name": "read_file", "args": {"file_path": f"src/mod_{turn}.py"}}}],
            usage={"prompt_tokens": 1000 + turn * 50, "completion_tokens": 20, "total_tokens": 1020 + turn * 50},
            model="bench-model",
        )
        output = "".join(f"line {n}: def handler_{n}(request): return respond(request)\n" for n in range(300))
        rec.record_tool_result([{"functionResponse": {"id": f"c{turn}", "name": "read_file", "response": {"output": output}}}], None)
        rec.record_model(f"Read mod_{turn}.py; the loader builds its settings eagerly.", usage=None, model="bench-model")
        rec.record_user(f"go on with step {turn}")
        if not checkpointed and rec.path.stat().st_size >= target_bytes // 2:
            summary = [{"role": "user", "parts": [{"text": "<state_snapshot>refactoring</state_snapshot>"}]},
                       {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]}]
            rec.record_chat_compression(summary, {"originalTokenCount": 90000, "newTokenCount": 3000, "compressionStatus": 1})
            checkpointed = True
        turn += 1
    return rec.path


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    count, size = (20, 200_000) if args.quick else (200, 2_000_000)

    with tempfile.TemporaryDirectory(prefix="bench-sessions-") as tmp:
        os.environ["HOME"] = str(Path(tmp) / "home")
        os.environ.pop("QWEN_HOME", None)
        project = Path(tmp) / "proj"
        project.mkdir()
        log(f"writing {count} sessions of {size} bytes")
        paths = write_sessions(project, count, size)
        total = sum(p.stat().st_size for p in paths)
        assert len(list(chats_dir(project).glob("*.jsonl"))) == count

        def stat_all() -> None:
            for p in paths:
                p.stat()

        def read_all() -> None:
            for p in paths:
                with open(p, "rb") as fh:
                    fh.read()

        def parse_all() -> None:
            for p in paths:
                read_records(p)

        def cold_list() -> None:
            now = time.time()
            for p in paths:
                os.utime(p, (now, now + 1))
            start = time.perf_counter()
            listed = list_sessions(project)
            cold.append(time.perf_counter() - start)
            assert len(listed) == count, len(listed)

        cold: list[float] = []
        stats = [timed(stat_all) for _ in range(REPEATS)]
        reads = [timed(read_all) for _ in range(3)]
        whole_parse = timed(parse_all)
        for _ in range(REPEATS):
            cold_list()
        warm = [timed(lambda: list_sessions(project)) for _ in range(REPEATS)]

        extra = {"sessions": count, "bytes_per_session": total // count}
        emit("sessions_list.cold_ms", median(cold) * 1000, "ms", median(stats) * 1000, **extra)
        emit("sessions_list.vs_whole_parse", median(cold) * 1000, "ms", whole_parse * 1000, raw_read_ms=round(median(reads) * 1000, 3), **extra)
        emit("sessions_list.warm_ms", median(warm) * 1000, "ms", median(stats) * 1000, **extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
