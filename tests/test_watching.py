"""The shared debounced watcher: bursts fold into one callback, filters hold, the loop thread runs it."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from qwen_lsp.files.watching import DebouncedWatcher

WAIT = 10.0


class Collector:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.batches: asyncio.Queue[frozenset[Path]] = asyncio.Queue()
        self.threads: list[int] = []
        self._loop = loop

    def __call__(self, paths: frozenset[Path]) -> None:
        self.threads.append(threading.get_ident())
        self.batches.put_nowait(paths)

    async def next(self) -> frozenset[Path]:
        return await asyncio.wait_for(self.batches.get(), WAIT)


async def test_a_burst_becomes_one_callback_on_the_loop_thread(tmp_path: Path) -> None:
    got = Collector(asyncio.get_running_loop())
    watcher = DebouncedWatcher(got, debounce=0.3, loop=asyncio.get_running_loop())
    watcher.set_roots([tmp_path])
    try:
        for i in range(5):
            (tmp_path / f"f{i}.txt").write_text("x")
        batch = await got.next()
        while not {tmp_path / f"f{i}.txt" for i in range(5)} <= batch:
            batch |= await got.next()  # a slow machine may split the burst; never lose a path
        assert got.threads and set(got.threads) == {threading.get_ident()}
    finally:
        watcher.stop()


async def test_ignore_depth_and_directory_echoes_are_filtered(tmp_path: Path) -> None:
    got = Collector(asyncio.get_running_loop())
    watcher = DebouncedWatcher(
        got, debounce=0.1, ignore=lambda p: ".git" in p.parts, max_depth=1, loop=asyncio.get_running_loop()
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / "a/b").mkdir(parents=True)
    watcher.set_roots([tmp_path])
    try:
        (tmp_path / ".git/HEAD").write_text("ref")  # ignored
        (tmp_path / "a/b/deep.txt").write_text("x")  # depth 2 > max_depth 1
        os.mkfifo(tmp_path / "a/pipe")  # within depth: reported (the caller's ignore decides)
        batch = await got.next()
        assert tmp_path / "a/pipe" in batch
        assert not any(".git" in p.parts or p.name == "deep.txt" for p in batch)
        assert tmp_path / "a" not in batch  # the parent's "modified" echo is dropped
    finally:
        watcher.stop()


async def test_set_roots_replaces_the_watched_set_and_skips_missing(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    got = Collector(asyncio.get_running_loop())
    watcher = DebouncedWatcher(got, debounce=0.05, loop=asyncio.get_running_loop())
    try:
        watcher.set_roots([one, tmp_path / "missing"])
        assert watcher.watched == frozenset({one})
        watcher.set_roots([two])
        assert watcher.watched == frozenset({two})
        (two / "x").write_text("x")
        batch = await got.next()
        assert two / "x" in batch
    finally:
        watcher.stop()
    assert watcher.watched == frozenset()


async def test_a_failing_listener_does_not_stop_the_watcher(tmp_path: Path) -> None:
    calls: asyncio.Queue[frozenset[Path]] = asyncio.Queue()

    def listener(paths: frozenset[Path]) -> None:
        calls.put_nowait(paths)
        raise RuntimeError("boom")

    watcher = DebouncedWatcher(listener, debounce=0.05, loop=asyncio.get_running_loop())
    watcher.set_roots([tmp_path])
    try:
        (tmp_path / "a").write_text("1")
        await asyncio.wait_for(calls.get(), WAIT)
        await asyncio.sleep(0.2)
        (tmp_path / "b").write_text("2")
        while tmp_path / "b" not in await asyncio.wait_for(calls.get(), WAIT):
            pass
    finally:
        watcher.stop()
