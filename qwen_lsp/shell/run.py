"""Running a command: ``bash -c`` in its own process group, bounded in time and memory, reported as Qwen Code 0.24.4 reports it.

* The command runs in a new session (its own process group, where the
  system has them: ``files/portability.py``), stdin closed;
  when it ends — normally, by timeout, or because the turn was stopped —
  the whole group is killed, so a ``make`` leaves no children behind.
* Output (stdout and stderr together) is kept as its first and last
  :data:`KEEP_CHARS` characters while it streams, so a command that prints
  gigabytes costs a bounded buffer; what the model reads is 0.24.4's
  ``Command:/Directory:/Output:/Error:/Exit Code:/Signal:/Process Group
  PGID:`` block, cut in the middle with 0.24.4's ``... [CONTENT TRUNCATED]
  ...`` marker when it is over :data:`OUTPUT_THRESHOLD` (``shell.ts``
  ``DEFAULT_SHELL_OUTPUT_THRESHOLD``, ``keep: 'both'``). 0.24.4 also saves
  the whole output to a temporary file; here nothing beyond the two ends is
  kept, so the note says to re-run narrower instead.
* A background command (``is_background``) writes to a file of its own and
  is registered with a :class:`BackgroundJobs`, which kills its group when
  the chat or the server ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets as _random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..files.portability import SESSION, kill_group

OUTPUT_THRESHOLD = 30_000
"""0.24.4's ``DEFAULT_SHELL_OUTPUT_THRESHOLD``: characters of the result before it is cut."""
KEEP_CHARS = OUTPUT_THRESHOLD
"""Characters kept from each end of a streaming output."""
TRUNCATED_MARKER = "... [CONTENT TRUNCATED] ..."
REAP_SECONDS = 5.0
"""How long a killed command's pipes may take to close (a process that left its group may hold one)."""


@dataclass(frozen=True)
class Finished:
    """What a foreground command produced; ``output`` is already bounded (head, marker, tail)."""

    output: str
    exit_code: int | None
    signal: int | None
    pgid: int | None
    timed_out: bool = False
    error: str | None = None


async def run(command: str, cwd: str, timeout: float, env: Mapping[str, str]) -> Finished:
    """``bash -c command`` in ``cwd`` (module doc); cancelling the await kills the group before re-raising."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command,
            cwd=cwd, env=dict(env),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            **SESSION,
        )
    except OSError as exc:
        return Finished("", None, None, None, error=f"Command failed to start: {exc.strerror or exc}")
    kept = _Ends(KEEP_CHARS)
    timed_out = False
    try:
        async with asyncio.timeout(timeout):
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(65536):
                kept.add(chunk.decode("utf-8", errors="replace"))
            await proc.wait()
    except TimeoutError:
        timed_out = True
    finally:
        kill_group(proc.pid)  # also after a normal exit: whatever it left running in its group goes too
        if proc.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.shield(_reap(proc))
    code = proc.returncode
    return Finished(
        kept.text(),
        code if code is not None and code >= 0 else None,
        -code if code is not None and code < 0 else None,
        proc.pid,
        timed_out=timed_out,
    )


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait for a killed command, reading its pipe to the end first (asyncio's ``wait`` also waits for it)."""
    async with asyncio.timeout(REAP_SECONDS):
        if proc.stdout is not None:
            while await proc.stdout.read(65536):
                pass
        await proc.wait()


class _Ends:
    """The first and last ``keep`` characters of a stream, and whether anything between was dropped."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._head: list[str] = []
        self._head_len = 0
        self._tail = ""
        self.dropped = False

    def add(self, text: str) -> None:
        if self._head_len < self._keep:
            take = text[: self._keep - self._head_len]
            self._head.append(take)
            self._head_len += len(take)
            text = text[len(take):]
        if text:
            joined = self._tail + text
            if len(joined) > self._keep:
                self.dropped = True
                joined = joined[-self._keep:]
            self._tail = joined

    def text(self) -> str:
        head = "".join(self._head)
        if self.dropped:
            return f"{head}\n{TRUNCATED_MARKER}\n{self._tail}"
        return head + self._tail


def report(command: str, directory: str | None, done: Finished) -> str:
    """The text the model reads for a finished command: 0.24.4's block, cut to :data:`OUTPUT_THRESHOLD`."""
    if done.error is not None:
        return done.error
    if done.timed_out:
        head = "Command timed out before it could complete."
        body = f"{head} Below is the output before it timed out:\n{done.output}" if done.output.strip() else f"{head} There was no output before it timed out."
        return truncate(body)
    lines = [
        f"Command: {command}",
        f"Directory: {directory or '(root)'}",
        f"Output: {done.output or '(empty)'}",
        "Error: (none)",
        f"Exit Code: {done.exit_code if done.exit_code is not None else '(none)'}",
        f"Signal: {done.signal if done.signal is not None else '(none)'}",
        f"Process Group PGID: {done.pgid if done.pgid is not None else '(none)'}",
    ]
    return truncate("\n".join(lines))


def truncate(text: str, threshold: int = OUTPUT_THRESHOLD) -> str:
    """``text`` itself, or its beginning and end around 0.24.4's marker, with its explanation first."""
    if len(text) <= threshold and TRUNCATED_MARKER not in text:
        return text
    note = (
        "Tool output was too long and has been truncated.\n"
        "The truncated output below shows the beginning and end of the content. The marker "
        f"'{TRUNCATED_MARKER}' indicates where content was removed. Re-run a narrower command "
        "(e.g. with head, tail or grep) to see the part you need.\n\nTruncated part of the output:\n"
    )
    if len(text) <= threshold:
        return note + text
    budget = max(threshold - len(note) - len(TRUNCATED_MARKER) - 2, 2)
    head = text[: budget // 2]
    tail = text[len(text) - budget // 2:]
    return f"{note}{head}\n{TRUNCATED_MARKER}\n{tail}"


@dataclass
class BackgroundJob:
    id: str
    pid: int
    output: Path
    command: str
    process: asyncio.subprocess.Process


class BackgroundJobs:
    """A chat's background commands: each in its own group, its output to a file; all killed by :meth:`stop_all`."""

    MAX_JOBS = 8
    MAX_OUTPUT_BYTES = 50 << 20

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._jobs: dict[str, BackgroundJob] = {}

    async def start(self, command: str, cwd: str, env: Mapping[str, str]) -> BackgroundJob:
        """Start ``command``; raises ``OSError`` when it cannot start, ``RuntimeError`` when too many are running."""
        self._jobs = {k: j for k, j in self._jobs.items() if j.process.returncode is None}
        if len(self._jobs) >= self.MAX_JOBS:
            raise RuntimeError(f"{self.MAX_JOBS} background commands are already running in this chat")
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        job_id = f"bg_{_random.token_hex(4)}"
        output = self.directory / f"shell-{job_id}.output"
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            proc = await asyncio.create_subprocess_exec(
                "bash", "-c", f"ulimit -f {self.MAX_OUTPUT_BYTES // 1024}; {command}" if os.name == "posix" else command,
                cwd=cwd, env=dict(env),
                stdin=asyncio.subprocess.DEVNULL, stdout=fd, stderr=fd,
                **SESSION,
            )
        finally:
            os.close(fd)
        job = BackgroundJob(job_id, proc.pid, output, command, proc)
        self._jobs[job_id] = job
        return job

    def running(self) -> list[BackgroundJob]:
        return [j for j in self._jobs.values() if j.process.returncode is None]

    async def stop_all(self) -> None:
        """Kill every job's group and wait for it (bounded)."""
        jobs, self._jobs = list(self._jobs.values()), {}
        for job in jobs:
            kill_group(job.pid)
        for job in jobs:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(REAP_SECONDS):
                    await job.process.wait()


def started_report(job: BackgroundJob) -> str:
    """What the model reads when a background command starts (0.24.4's first lines, without its /tasks UI)."""
    return (
        "Background shell started.\n"
        f"id: {job.id}\n"
        f"pid: {job.pid}\n"
        f"output file: {job.output}\n"
        "Read the output file with read_file to see what it has printed so far. It is stopped when this chat "
        "ends or the server stops."
    )
