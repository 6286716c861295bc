"""``run_shell_command``, read-only: a pipeline of allow-listed commands that cannot change anything.

Forked runs (memory extraction, dream) may look around with a shell, as in
Qwen Code, where the fork allows ``run_shell_command`` only when the
command is read-only (``memory-scoped-agent-config.ts``). Qwen Code judges that from a shell AST;
we are more conservative and never start a shell at all:

* the command is split with ``shlex`` (POSIX rules); ``|`` between
  commands is the only operator allowed. Redirections, ``;``, ``&&``,
  ``||``, ``&``, subshells, backticks and every ``$`` (variables,
  ``$(…)``) are refused, as is a newline;
* each stage is an allow-listed program named without a path (``ls``,
  ``cat``, ``head``, ``tail``, ``grep``, ``rg``, ``find``, ``wc``,
  ``sort``, ``uniq``, ``pwd``) and none of its options that write or run
  other programs (``find -exec/-delete/-fprint…``, ``sort -o``,
  ``rg --pre``, ``uniq`` with an output file);
* options that follow symbolic links or read file names from a file
  (``grep -R``, ``find -L/-H/-follow/-files0-from``, ``rg -L``, ``ls -L``,
  ``wc``/``sort --files0-from``) are refused, so a walk never leaves
  through a link it meets;
* every operand and every ``--option=value`` value is taken as a path
  (a bare ``notes`` may be a link to ``../outside/id_rsa``) and must
  resolve, links followed, inside the workspace or the run's read roots;
  a pattern that is no file resolves inside and passes. A short option
  with a path glued to it (``-f/etc/x``) is refused: the value must be
  its own argument, where it is checked;
* the stages are started directly (``exec``), piped to each other, in the
  workspace, with a timeout and a bounded output; on timeout or overflow
  the whole pipeline is killed.

Anything else is refused with the reason, before anything runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from qwen_lsp.files.containment import resolved_inside
from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.agent.tools.base import ToolArgs, copy_declaration, describe_validation_error, function_declaration

NAME = "run_shell_command"
TIMEOUT_SECONDS = 30.0
MAX_OUTPUT_CHARS = 30_000
MAX_COMMAND_CHARS = 4_000
MAX_STAGES = 8

READ_ONLY_PROGRAMS = frozenset({"ls", "cat", "head", "tail", "grep", "rg", "find", "wc", "sort", "uniq", "pwd"})

_FORBIDDEN_OPTIONS: dict[str, tuple[str, ...]] = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "sort": ("-o", "--output", "--compress-program", "-T", "--temporary-directory"),
    "rg": ("--pre", "--pre-glob", "--search-zip", "-z"),
    "grep": (),
    "tail": ("-f", "-F", "--follow"),
}
_WRITES = "can write files or run other programs"

_LINK_OPTIONS: dict[str, tuple[str, ...]] = {
    "grep": ("-R", "--dereference-recursive"),
    "find": ("-L", "-H", "-follow", "-files0-from"),
    "rg": ("-L", "--follow"),
    "ls": ("-L", "--dereference"),
    "wc": ("--files0-from",),
    "sort": ("--files0-from",),
}
_LEAVES = "follows symbolic links or reads file names from a file, which could lead outside the workspace"

_OPERATOR_CHARS = set("|&;<>()")


class ShellRefused(ValueError):
    """A command that is not provably read-only; the message says why."""


@dataclass(frozen=True)
class Pipeline:
    stages: list[list[str]]


def parse_read_only(command: str) -> Pipeline:
    """The command as argv stages when it is read-only by the rules in the module doc; else ``ShellRefused``."""
    if len(command) > MAX_COMMAND_CHARS:
        raise ShellRefused(f"the command is longer than {MAX_COMMAND_CHARS} characters")
    for bad, label in (("\n", "a newline"), ("\r", "a carriage return"), ("`", "a backtick"), ("$", "'$' (variables and substitutions)"), ("\x00", "a NUL")):
        if bad in command:
            raise ShellRefused(f"the command contains {label}")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        raise ShellRefused(f"the command does not parse: {exc}") from None
    stages: list[list[str]] = [[]]
    for token in tokens:
        if token and set(token) <= _OPERATOR_CHARS:
            if token != "|":
                raise ShellRefused(f"the operator '{token}' is not allowed (only '|' between read-only commands)")
            stages.append([])
            continue
        stages[-1].append(token)
    if any(not stage for stage in stages):
        raise ShellRefused("a pipeline stage is empty")
    if len(stages) > MAX_STAGES:
        raise ShellRefused(f"more than {MAX_STAGES} pipeline stages")
    for stage in stages:
        _check_stage(stage)
    return Pipeline(stages)


def _check_stage(argv: Sequence[str]) -> None:
    program = argv[0]
    if program not in READ_ONLY_PROGRAMS:
        allowed = ", ".join(sorted(READ_ONLY_PROGRAMS))
        raise ShellRefused(f"'{program}' is not one of the read-only commands allowed here ({allowed})")
    for arg in argv[1:]:
        for options, why in ((_FORBIDDEN_OPTIONS.get(program, ()), _WRITES), (_LINK_OPTIONS.get(program, ()), _LEAVES)):
            for option in options:
                if arg == option or (option.startswith("--") and arg.startswith(option + "=")) or (
                    len(option) == 2 and _short_cluster(arg) and option[1] in arg[1:]
                ):
                    raise ShellRefused(f"'{program} {option}' {why}")
        if _short_cluster(arg) and "=" not in arg and ("/" in arg or "~" in arg):
            raise ShellRefused(f"the option '{arg}' has a path glued to it; give the path as its own argument")
    if program == "uniq":
        operands = [a for a in argv[1:] if not a.startswith("-")]
        if len(operands) > 1:
            raise ShellRefused("'uniq' with a second file operand writes to that file")


def _short_cluster(arg: str) -> bool:
    """``-abc``: single-dash short options, possibly bundled (checked letter by letter, conservatively)."""
    return arg.startswith("-") and not arg.startswith("--") and len(arg) > 1


def path_arguments(argv: Sequence[str]) -> list[str]:
    """Every argument that may name a file: each operand and each ``--opt=value`` value.

    Not only those that look like paths: ``cat notes`` reads a link named
    ``notes`` just as well. Non-file operands (patterns, counts) resolve
    inside the working directory and pass.
    """
    found = []
    for arg in argv[1:]:
        if arg.startswith("-") and arg != "-":
            if "=" in arg:
                found.append(arg.split("=", 1)[1])
            continue
        found.append(arg)
    return [value for value in found if value]


class ShellArgs(ToolArgs):
    command: str = Field(min_length=1)
    description: str | None = None
    directory: str | None = None


class ReadOnlyShellTool:
    """The tool; stateless, so one instance serves every run."""

    name = NAME
    DECLARATION = function_declaration(
        NAME,
        "Runs a read-only shell command in the project directory and returns its output. Only a pipeline "
        "('|') of these commands is accepted: ls, cat, head, tail, grep, rg, find, wc, sort, uniq, pwd. "
        "No redirections, no ';', '&&', '||', no variables or command substitution, no options that write "
        "files or run programs. Paths must stay inside the workspace or the memory directories.",
        {
            "properties": {
                "command": {"description": "The command to run, e.g. 'grep -rn \"term\" /abs/dir | tail -50'.", "type": "string"},
                "description": {"description": "Optional: a short description of what the command does.", "type": "string"},
                "directory": {"description": "Optional: the directory to run in, relative to the project root.", "type": "string"},
            },
            "required": ["command"],
            "type": "object",
        },
    )

    def declaration(self) -> dict[str, Any]:
        result: dict[str, Any] = copy_declaration(self.DECLARATION)
        return result

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            params = ShellArgs.model_validate(args if args is not None else {})
        except ValidationError as exc:
            return ToolResult(output=describe_validation_error(NAME, exc), is_error=True)
        try:
            pipeline = parse_read_only(params.command)
            cwd = self._cwd(params.directory, ctx)
            for stage in pipeline.stages:
                for raw in path_arguments(stage):
                    self._check_path(raw, cwd, ctx)
        except ShellRefused as exc:
            return ToolResult(output=f"Command refused: {exc}.", is_error=True)
        return await run_pipeline(pipeline, cwd)

    @staticmethod
    def _roots(ctx: ToolContext) -> list[Path]:
        return [ctx.workspace_root.resolve(), *(r.resolve() for r in ctx.read_roots)]

    def _cwd(self, directory: str | None, ctx: ToolContext) -> Path:
        base = ctx.cwd if not directory else (ctx.workspace_root / directory)
        resolved = resolved_inside(base, ctx.workspace_root.resolve())
        if resolved is None or not resolved.is_dir():
            raise ShellRefused(f"the directory {directory!r} is not a directory inside the workspace")
        return resolved

    def _check_path(self, raw: str, cwd: Path, ctx: ToolContext) -> None:
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = cwd / candidate
        if not any(resolved_inside(candidate, root) is not None for root in self._roots(ctx)):
            raise ShellRefused(f"the path {raw} is outside the workspace and the memory directories")


async def run_pipeline(pipeline: Pipeline, cwd: Path) -> ToolResult:
    """Start the stages piped together; bounded output and time; everything killed on the way out."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ")}
    procs: list[asyncio.subprocess.Process] = []
    upstream: int | None = None
    try:
        for index, argv in enumerate(pipeline.stages):
            last = index == len(pipeline.stages) - 1
            read_end, write_end = (None, None) if last else os.pipe()
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=upstream if upstream is not None else asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE if last else write_end,
                    stderr=asyncio.subprocess.PIPE if last else asyncio.subprocess.DEVNULL,
                    cwd=cwd,
                    env=env,
                )
            except OSError as exc:
                for fd in (read_end, write_end):
                    if fd is not None:
                        os.close(fd)
                return ToolResult(output=f"Command failed to start: {argv[0]}: {exc.strerror or exc}", is_error=True)
            finally:
                if upstream is not None:
                    os.close(upstream)
                    upstream = None
            if write_end is not None:
                os.close(write_end)
            upstream = read_end
            procs.append(proc)
        last_proc = procs[-1]
        code: int | None = None
        err = b""
        try:
            async with asyncio.timeout(TIMEOUT_SECONDS):
                out, cut = await read_bounded(last_proc)
                if not cut:  # a cut pipeline may still be writing: it is killed below, not waited for
                    err = await last_proc.stderr.read(4096) if last_proc.stderr else b""
                    code = await last_proc.wait()
        except TimeoutError:
            return ToolResult(output=f"Command timed out after {TIMEOUT_SECONDS:g} s and was stopped.", is_error=True)
    finally:
        if upstream is not None:
            os.close(upstream)
        for proc in procs:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                with contextlib.suppress(Exception):
                    await reap(proc)
    text = out.decode("utf-8", errors="replace")
    if cut:
        text += f"\n... [output cut at {MAX_OUTPUT_CHARS} characters]"
    parts = [text if text else "(no output)"]
    if err:
        parts.append("stderr: " + err.decode("utf-8", errors="replace").strip())
    if code not in (0, None) and not cut:
        parts.append(f"exit code: {code}")
    return ToolResult(output="\n".join(parts), is_error=False)


REAP_SECONDS = 5.0
"""How long a killed command's pipes may take to close (a process that left its group may hold one)."""


async def reap(proc: asyncio.subprocess.Process) -> None:
    """Wait for a killed command, reading its pipes to the end first: asyncio's ``wait()`` also waits for
    them to close, and a stream paused on a full buffer (output cut short) never reads its EOF otherwise."""
    async with asyncio.timeout(REAP_SECONDS):
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                while await stream.read(65536):
                    pass
        await proc.wait()


async def read_bounded(proc: asyncio.subprocess.Process) -> tuple[bytes, bool]:
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await proc.stdout.read(65536)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_OUTPUT_CHARS:
            return b"".join(chunks)[:MAX_OUTPUT_CHARS], True

