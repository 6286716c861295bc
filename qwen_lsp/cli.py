"""Command line: the second adapter over the same Workspace (README.md, "Set up and run").

``serve`` (also bare ``qwen-lsp``) runs the language server; the other
commands run one engine in the current directory ("cwd is the workspace")
and exit. An error the user can fix is one line on stderr with a non-zero
exit code; only a bug in qwen-lsp itself prints a traceback, so the two are
never confused.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .text.visible import EscapingStream

if TYPE_CHECKING:
    from .errors import EngineError

log = logging.getLogger("qwen_lsp")


def _setup_logging(verbose: int, default: int = logging.WARNING, *, server: bool = False) -> None:
    level = logging.DEBUG if verbose > 1 else logging.INFO if verbose == 1 else default
    # A server's log is read later, in an editor's output pane: timestamps help there.
    fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s" if server or verbose else "qwen-lsp: %(levelname)s: %(message)s"
    logging.basicConfig(stream=sys.stderr, level=level, format=fmt)
    logging.getLogger("pygls").setLevel(logging.WARNING if verbose < 2 else logging.DEBUG)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("watchdog").setLevel(logging.WARNING)


def _engine(cwd: Path, approval_mode: str | None = None) -> Any:
    """An engine for cwd, worded for a one-shot run (``headless``, as ``qwen -p``); writes go to disk atomically."""
    from .features.edits.terminal import terminal_asker
    from .workspace import Workspace
    from .llm.tokens import TokenCounter

    overrides = {"tools": {"approvalMode": approval_mode}} if approval_mode else None
    return Workspace(cwd, counter=TokenCounter(), interaction_mode="headless", client_settings=overrides, ask=terminal_asker())


def _fail(message: str, code: int = 1) -> int:
    print(f"qwen-lsp: {message}", file=sys.stderr)
    return code


def _engine_fail(exc: EngineError) -> int:
    """An :class:`EngineError` in CLI words: the engine's message plus the command that helps."""
    hint = _CLI_HINTS.get(exc.kind, "")
    return _fail(f"{exc.message}{' ' + hint if hint else ''}")


_CLI_HINTS = {
    "not_found": "List sessions with: qwen-lsp sessions list",
    "config": "Check what is in effect with: qwen-lsp doctor",
}


def _quiet(logger: str) -> None:
    """The command prints these problems itself; the log would say them a second time."""
    logging.getLogger(logger).setLevel(logging.ERROR)


# ------------------------------------------------------------------ commands
def cmd_serve(args: argparse.Namespace) -> int:
    from .background import defer_collections

    defer_collections()  # until create_server is done: importing the server is most of the time to initialize
    from .server.handlers import create_server

    server = create_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            return _fail(f"--tcp expects HOST:PORT, got {args.tcp!r}", 2)
        host = host or "127.0.0.1"
        print(f"qwen-lsp: language server listening on {host}:{port} (LSP over TCP; Ctrl-C stops it)", file=sys.stderr, flush=True)
        server.start_tcp(host, int(port))
    else:
        if sys.stdin.isatty():
            print(
                "qwen-lsp: language server on stdin/stdout, waiting for an editor to speak LSP "
                "(Ctrl-C stops it). For the command line see: qwen-lsp --help",
                file=sys.stderr,
                flush=True,
            )
        server.start_io()
    return server.exit_code


def cmd_chat(args: argparse.Namespace) -> int:
    from .agent.events import TurnEvent
    from .commands.parse import is_slash_command
    from .errors import EngineError

    if args.prompt:
        prompt = " ".join(args.prompt)
    else:
        if sys.stdin.isatty():
            print("qwen-lsp: type the prompt, then Ctrl-D on a new line (or: qwen-lsp chat \"PROMPT\")", file=sys.stderr, flush=True)
        prompt = sys.stdin.read()
    if not prompt.strip():
        return _fail("nothing to send: give a PROMPT or pipe one on stdin", 2)
    engine = _engine(Path.cwd(), args.approval_mode)
    ended_with_newline = True

    def emit(ev: TurnEvent) -> None:
        nonlocal ended_with_newline
        if ev.kind == "text" and ev.text:
            sys.stdout.write(ev.text)
            sys.stdout.flush()
            ended_with_newline = ev.text.endswith("\n")
        elif ev.kind == "toolCall" and ev.tool:
            print(f"[tool] {ev.tool.get('name')} {json.dumps(ev.tool.get('args'), ensure_ascii=False)}", file=sys.stderr)
        elif ev.kind == "toolResult" and ev.tool:
            decision = f" ({ev.tool['decision']})" if ev.tool.get("decision") else ""
            print(f"[tool] {ev.tool.get('name')}{decision}: {ev.text or ''}", file=sys.stderr)
        elif ev.kind == "status" and ev.text:
            print(f"[status] {ev.text}", file=sys.stderr)

    async def run() -> int:
        try:
            session = await engine.open_session(args.session)
        except EngineError as exc:
            await engine.drain()
            return _engine_fail(exc)
        recorded_before = len(session.history)
        try:
            if is_slash_command(prompt.strip()):
                code = await _slash_command(engine, prompt.strip(), session.id, emit)
                if not ended_with_newline:
                    sys.stdout.write("\n")
                return code
            result = await engine.chat(prompt, session_id=session.id, emit=emit)
        except EngineError as exc:
            if not ended_with_newline:
                sys.stdout.write("\n")
            code = _engine_fail(exc)
            if len(session.history) > recorded_before:  # the prompt was recorded: say where, so nothing typed is lost
                print(f"[session {session.id}] kept; retry with: qwen-lsp chat --session {session.id} PROMPT", file=sys.stderr)
            return code
        finally:
            await engine.drain()
        if not ended_with_newline:
            sys.stdout.write("\n")
        print(f"[session {result.session_id}]", file=sys.stderr)
        return 0

    try:
        return asyncio.run(run())
    except KeyboardInterrupt:
        return _fail("cancelled; the partial answer was recorded", 130)


async def _slash_command(engine: Any, line: str, session_id: str, emit: Any) -> int:
    """A ``/command`` as the whole prompt, answered as Qwen Code 0.24.4's ``qwen -p "/…"``: ``/init``, ``/clear``,
    ``/compress``, ``/context``, ``/export`` and ``/model`` run; the rest are not supported in this mode (exit 1);
    an unknown one is a message for the model (``CommandRunner`` with ``one_shot``)."""
    from .commands.runner import CommandRunner

    result = await CommandRunner().run(
        engine, line, session_id=session_id, one_shot=True, run_turn=lambda text, sid: engine.chat(text, session_id=sid, emit=emit)
    )
    if result.status == "error":
        print(result.text, file=sys.stderr)
        return 1
    if result.status == "confirm":
        print(result.text, file=sys.stderr)
        return _fail("a one-shot run cannot answer that question; nothing was changed (run it in the editor's chat)")
    if result.chat is None and result.text:
        print(result.text)
    print(f"[session {result.session_id or session_id}]", file=sys.stderr)
    return 0


def _print_json(result: Any) -> None:
    """A typed protocol result exactly as the language server sends it."""
    print(json.dumps(result.wire(), indent=2, ensure_ascii=False))


def _run(engine: Any, coro: Any) -> Any:
    """Run one engine call to completion, then release the engine's background work."""

    async def go() -> Any:
        try:
            return await coro
        finally:
            await engine.drain()

    return asyncio.run(go())


def cmd_context(args: argparse.Namespace) -> int:
    from .errors import EngineError

    _quiet("qwen_lsp.context")
    engine = _engine(Path.cwd())
    try:
        report = _run(engine, engine.context_report(args.session))
    except EngineError as exc:
        return _engine_fail(exc)
    th = report.thresholds
    if args.json:
        _print_json(report)
        return 0
    width = max((len(s.name) for s in report.sections), default=8)
    for s in report.sections:
        print(f"{s.name:<{width}}  {s.tokens:>8}  {s.source or ''}".rstrip())
    pct = 100 * report.total_tokens / report.window if report.window else 0
    print(f"{'total':<{width}}  {report.total_tokens:>8}  of {report.window} ({pct:.1f}%)")
    print(f"thresholds: warn {th.warn}, auto {th.auto}, hard {th.hard}  (see README: context.autoCompactThreshold)")
    print("  (at 'auto' the history is compressed before the next request; see docs/compaction.md)")
    for problem in report.problems:
        print(f"problem: {problem.path}: {problem.message}")
    return 0


def cmd_compress(args: argparse.Namespace) -> int:
    from .errors import EngineError
    from .features.compaction.feature import CompactionFeature

    _quiet("qwen_lsp.skills")
    engine = _engine(Path.cwd())

    async def go() -> Any:
        session_id = args.session
        if session_id is None:
            listed = (await engine.list_sessions()).sessions
            if not listed:
                return None
            session_id = listed[0].session_id
        return session_id, await engine.feature(CompactionFeature).compress_chat(session_id, "fast" if args.fast else "full")

    try:
        done = _run(engine, go())
    except EngineError as exc:
        return _engine_fail(exc)
    if done is None:
        return _fail("no session to compress in this workspace. Start one with: qwen-lsp chat \"PROMPT\"")
    session_id, result = done
    if result.status == "compressed":
        print(f"Compressed session {session_id}: {result.tokens_before} -> {result.tokens_after} tokens.")
        return 0
    if result.status == "noop":
        print(f"Nothing to compress in session {session_id} ({result.tokens_before} tokens).")
        return 0
    return _fail(f"compression of session {session_id} failed ({result.status}); the history is unchanged.")


def cmd_skills(args: argparse.Namespace) -> int:
    from .skills.report import format_skill_list, skills_list_result

    _quiet("qwen_lsp.skills")
    engine = _engine(Path.cwd())
    if args.json:
        _print_json(skills_list_result(engine.skills))
    else:
        print(format_skill_list(engine.skills))
    return 0


def cmd_sessions(args: argparse.Namespace) -> int:
    from .errors import EngineError

    _quiet("qwen_lsp.skills")  # skills play no part in listing or showing sessions
    engine = _engine(Path.cwd())
    if args.action == "list":
        sessions = _run(engine, engine.list_sessions()).sessions
        if not sessions:
            print("No sessions yet in this workspace. Start one with: qwen-lsp chat \"PROMPT\"")
        for s in sessions:
            print(f"{s.session_id}  {s.updated_at[:16].replace('T', ' ')}  {s.message_count:>4} msgs  {s.title}")
        return 0
    if not args.id:
        return _fail(f"sessions {args.action} needs a session ID (see: qwen-lsp sessions list)", 2)
    if args.action == "delete":
        try:
            deleted = _run(engine, engine.delete_session(args.id)).deleted
        except EngineError as exc:
            return _engine_fail(exc)
        if not deleted:
            return _fail(f"No session '{args.id}' to delete. List sessions with: qwen-lsp sessions list")
        print(f"Deleted session {args.id}.")
        return 0
    try:
        shown = _run(engine, engine.resume(args.id))
    except EngineError as exc:
        return _engine_fail(exc)
    for m in shown.messages:
        print(f"## {m.role}\n{m.text}\n")
    return 0


def cmd_memory(args: argparse.Namespace) -> int:
    """``memory list|remember|forget|dream|recall``: the same manager the editor's Memory view uses."""
    from .errors import EngineError

    engine = _engine(Path.cwd())
    words = " ".join(args.text).strip()
    try:
        if args.action == "list":
            return _memory_list(_run(engine, _memory(engine).list(args.scope)), args.json)
        if args.action == "remember":
            if not words:
                return _fail('memory remember needs the text to remember, e.g.: qwen-lsp memory remember "tests never mock the database"', 2)
            saved = _run(engine, _memory(engine).remember(words, type=args.type or "feedback", scope=args.scope or "project", name=args.name))
            print(f"Remembered ({saved.scope} {saved.type}): {saved.path}")
            return 0
        if args.action == "recall":
            if not words:
                return _fail('memory recall needs a QUERY, e.g.: qwen-lsp memory recall "how do we run tests"', 2)
            report = _run(engine, _memory(engine).recall_report(words, use_model=not args.no_model))
            if args.json:
                _print_json(report)
            elif not report.memories:
                print(f"Nothing would be recalled ({report.strategy}).")
            else:
                print(f"strategy: {report.strategy}")
                for m in report.memories:
                    print(f"  {m.scope}/{m.type}  {m.name}  {m.path}")
                print()
                print(report.text)
            return 0
        if args.action == "forget":
            if not words:
                return _fail('memory forget needs a QUERY naming what to forget, e.g.: qwen-lsp memory forget "tabs"', 2)
            return _memory_forget(engine, words, args.yes)
        report = _run(engine, _memory(engine).dream_now())
        if args.json:
            _print_json(report)
        else:
            print(f"dream: {report.status}" + (f" ({report.reason})" if report.reason else "") + (f"; updated {', '.join(report.touched)}" if report.touched else ""))
        return 0 if report.status in ("completed", "skipped") else 1
    except EngineError as exc:
        return _engine_fail(exc)


def _memory(workspace: Any) -> Any:
    """The folder's memory manager (the memory feature's core)."""
    from .features.memory.feature import MemoryFeature

    return workspace.feature(MemoryFeature).manager


def _memory_list(result: Any, as_json: bool) -> int:
    if as_json:
        _print_json(result)
        return 0
    if not result.memories:
        print('No memories yet. Save one with: qwen-lsp memory remember "TEXT" (or "Remember this convention" in the editor)')
    for m in result.memories:
        print(f"{m.scope:<7} {m.type:<9} {m.age:>14}  {m.name} — {m.description}\n{'':<33}{m.path}")
    return 0


def _memory_forget(engine: Any, query: str, yes: bool) -> int:
    """Two steps, as in the editor: show what matches, then remove only what the user confirmed."""

    async def go() -> int:
        found = (await _memory(engine).forget_candidates(query)).candidates
        if not found:
            print(f"No memory matches {query!r}.")
            return 0
        for c in found:
            print(f"  {c.name} — {c.description}\n    {c.path}  ({c.reason})")
        if not yes:
            if not sys.stdin.isatty():
                return _fail("nothing removed: re-run with --yes to remove the memories above", 1)
            answer = await asyncio.to_thread(input, f"Remove {len(found)} memor{'y' if len(found) == 1 else 'ies'}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("Nothing removed.")
                return 0
        removed = (await _memory(engine).forget([Path(c.path) for c in found])).removed
        print(f"Removed {len(removed)}: " + ", ".join(removed))
        return 0

    return int(_run(engine, go()))


def cmd_doctor(args: argparse.Namespace) -> int:
    from .compaction.report import window_line
    from .settings.doctor import settings_rows
    from .settings.trust import boundary_lines
    from .errors import EngineError
    from .files.paths import chats_dir, global_qwen_dir, home_dir, project_state_dir

    _quiet("qwen_lsp.skills")  # counted below instead
    engine = _engine(Path.cwd())
    s = engine.settings
    print(f"qwen-lsp {__version__}  (python {sys.version.split()[0]})")
    print(f"workspace: {engine.root}")
    print("settings in effect:")
    for key, value, source in settings_rows(engine.loaded):
        print(f"  {key} = {value!r}  ({source})")
    for problem in engine.loaded.problems:
        print(f"  problem: {problem}")
    print("trust boundary (only your ~/.qwen/settings.json, the environment or the editor may set these):")
    for line in boundary_lines():
        print(f"  {line}")
    print(window_line(engine.loaded))
    print("paths:")
    print(f"  home: {home_dir()}\n  qwen dir: {global_qwen_dir()}\n  project state: {project_state_dir(engine.root)}\n  sessions: {chats_dir(engine.root)}")
    errors = engine.skills.errors()
    print(f"skills: {len(engine.skills.skills())} loaded, {len(errors)} with errors" + (" (see: qwen-lsp skills list)" if errors else ""))
    counter = engine.counter
    print(f"tokenizer: {counter.source} ({'exact' if counter.exact else 'estimate'})")

    async def probe() -> int:
        from .llm.errors import LLMError

        try:
            client = await engine.model_client()
        except EngineError as exc:
            print(f"endpoint: not configured — {exc.message}")
            return 1
        try:
            models = await client.list_models()
        except LLMError as exc:
            print(f"endpoint: UNREACHABLE — {exc.message}")
            return 1
        listed = "listed" if s.model.name in models else "not in /models (may still work)"
        print(f"endpoint: {client.base_url} reachable; {len(models)} models; {s.model.name!r} {listed}")
        return 0

    return int(_run(engine, probe()))


# ------------------------------------------------------------------ parser
class _IntermixedParser(argparse.ArgumentParser):
    """A subcommand's parser that takes its options before, between or after its positional text.

    Plain argparse fills every positional of a run at once, so in ``memory recall --no-model "q"``
    the run before the option ("recall") leaves ``text`` empty and "q" is then unrecognised.
    Intermixed parsing reads all options first, then the positionals. It cannot be used on the
    top-level parser (argparse refuses it with subparsers), so each subcommand parser is one of these.
    """

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        # Python 3.11's parse_known_intermixed_args calls parse_known_args itself: plain parsing then.
        if self._intermixing:
            return super().parse_known_args(args, namespace)
        args = list(sys.argv[1:] if args is None else args)
        # Text after "--" is positional even when it starts with "-" (chat -- "-x"), but intermixed
        # parsing reads it as options: it is parsed as stand-ins, then put back.
        tail: list[str] = []
        if "--" in args:
            cut = args.index("--")
            args, tail = args[:cut], args[cut + 1 :]
        stand_ins = {f"\0{i}": text for i, text in enumerate(tail)}
        self._intermixing = True
        try:
            ns, extras = self.parse_known_intermixed_args([*args, *stand_ins], namespace)
        finally:
            self._intermixing = False
        for key, value in vars(ns).items():
            if isinstance(value, list):
                setattr(ns, key, [stand_ins.get(v, v) if isinstance(v, str) else v for v in value])
            elif isinstance(value, str):
                setattr(ns, key, stand_ins.get(value, value))
        return ns, [stand_ins.get(v, v) for v in extras]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qwen-lsp",
        description="Qwen Code's context engine as a language server. "
        "Without a command, qwen-lsp runs the language server on stdin/stdout (the same as 'qwen-lsp serve'): "
        "an editor starts it; on a terminal it just waits.",
    )
    parser.add_argument("--version", action="version", version=f"qwen-lsp {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging on stderr (-vv for debug)")
    sub = parser.add_subparsers(dest="command", parser_class=_IntermixedParser)

    p = sub.add_parser("serve", help="run the language server (stdio by default)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--stdio", action="store_true", help="talk LSP on stdin/stdout (default)")
    g.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("chat", help="one turn, streamed to stdout; cwd is the workspace")
    p.add_argument("prompt", nargs="*", help="the prompt (read from stdin when omitted)")
    p.add_argument("--session", metavar="ID", help="continue this session")
    p.add_argument(
        "--approval-mode",
        choices=["plan", "default", "auto-edit", "auto", "yolo"],
        help="tools.approvalMode for this run: plan (read-only), default (ask before every write and command), "
        "auto-edit (edits without asking), auto (a classifier lets safe actions run), yolo (nothing asks). Asks on the terminal; without one, asking means no.",
    )
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser("context", help="the assembled context with per-section tokens")
    p.add_argument("--json", action="store_true", help="print the report as JSON (sections, totalTokens, window, thresholds)")
    p.add_argument("--session", metavar="ID", help="include this session's history")
    p.set_defaults(func=cmd_context)

    p = sub.add_parser("compress", help="compress a session's history now (the latest session unless --session)")
    p.add_argument("--session", metavar="ID", help="the session to compress (default: the most recent one)")
    p.add_argument("--fast", action="store_true", help="clear old tool results and media only, without asking the model")
    p.set_defaults(func=cmd_compress)

    p = sub.add_parser("skills", help="skills the model can use, and the skill files that failed to load")
    p.add_argument("action", choices=["list"])
    p.add_argument("--json", action="store_true", help="print skills and errors as JSON, as qwen/skills/list returns them")
    p.set_defaults(func=cmd_skills)

    p = sub.add_parser("sessions", help="recorded chat sessions: list, show ID, delete ID")
    p.add_argument("action", choices=["list", "show", "delete"])
    p.add_argument("id", nargs="?", help="the session ID (from 'sessions list' or a chat's [session ID] line)")
    p.set_defaults(func=cmd_sessions)

    p = sub.add_parser("memory", help="auto memory: list, remember TEXT, forget QUERY, dream, recall QUERY")
    p.add_argument("action", choices=["list", "remember", "forget", "dream", "recall"])
    p.add_argument("text", nargs="*", help="remember: the text; forget/recall: the query")
    p.add_argument("--scope", choices=["user", "project", "team"], help="list: only this scope; remember: where to save (default project)")
    p.add_argument("--type", choices=["user", "feedback", "project", "reference"], help="remember: the topic (default feedback)")
    p.add_argument("--name", help="remember: a short name (default: from the text)")
    p.add_argument("--json", action="store_true", help="list/recall/dream: print JSON as the language server sends it")
    p.add_argument("--no-model", action="store_true", help="recall: the heuristic alone, no model call")
    p.add_argument("--yes", action="store_true", help="forget: remove the matches without asking")
    p.set_defaults(func=cmd_memory)

    p = sub.add_parser("doctor", help="settings in effect, endpoint reachability, paths")
    p.set_defaults(func=cmd_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        args = parser.parse_args([*argv, "serve"])
    server = args.command in (None, "serve")
    streams = sys.stdout, sys.stderr
    if not server:  # what the repository or the model wrote must not drive the terminal (text/visible.py)
        sys.stdout, sys.stderr = EscapingStream(sys.stdout), EscapingStream(sys.stderr)
    _setup_logging(args.verbose, logging.INFO if server else logging.WARNING, server=server)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except OSError as exc:
        return _fail(str(exc))
    except Exception:  # a bug, not a user error: keep the traceback for the report
        log.exception("internal error")
        return _fail("internal error (a bug in qwen-lsp; the traceback above helps to report it)", 70)
    finally:
        sys.stdout, sys.stderr = streams


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
