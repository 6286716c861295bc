"""The context state of one chat: what Qwen Code keeps per session, kept per chat here.

Qwen Code runs one process per session, so its git snapshot, environment
prelude and conditional-rule injections are naturally per session. The
language server runs many chats over one workspace; sharing that state
would let a second chat change the first one's system-prompt bytes (and the
endpoint's prompt cache), steal its pending rule, or hand it a rule that
another chat's tool call activated. So each chat owns a
:class:`SessionContext`; the :class:`~.assembler.ContextAssembler` keeps
only what is the same for every chat of the workspace (files read from
disk, the cached prefix of the system prompt).

:meth:`SessionContext.prepare` does the blocking part (``git`` subprocesses,
the folder walk of the prelude, a cold context build) and is meant to run
on a worker thread; everything else is cheap and runs on the event loop.
A new chat starts its git snapshot first (:meth:`SessionContext.start_git_snapshot`),
so the ``git`` processes run while the rest of the chat is set up. The first new
chat of a folder the server opened takes the snapshot started as the folder was
set up instead (:class:`SetUpSnapshot`), as Qwen Code 0.24.4 takes its snapshot
when the session starts, before the first prompt.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Protocol
from .environment import git_snapshot, startup_reminder, wrap_reminder
from .prompts import system_prompt_suffix
from .rules import ConditionalRules, Rule
from .sections import Section


class SharedContext(Protocol):
    """What a chat's view reads of the workspace's :class:`~.assembler.ContextAssembler`.

    A protocol, not the class: the assembler builds chats' views (``solo``), so
    naming it here would tie the two modules in a circle.
    """

    cwd: str
    prompt_tail: str

    def prepare(self) -> None: ...
    def in_git(self) -> bool: ...
    def workspace_prefix(self) -> str: ...
    def sections_with(self, git_snapshot: str | None) -> list[Section]: ...
    def loaded_conditional_rules(self) -> ConditionalRules | None: ...
    def rule_name(self, rule: Rule) -> str: ...
    def format_rules(self, rules: Iterable[Rule]) -> str: ...
    def claim_set_up_snapshot(self) -> Future[str | None] | None: ...

_SNAPSHOTS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="git-snapshot")
"""Where new chats' git snapshots are taken: mostly waiting for ``git``, so two threads are plenty."""

SET_UP_SNAPSHOT_FRESH = 60.0
"""Seconds for which the snapshot taken as the folder was set up stands for its first chat."""


class SetUpSnapshot:
    """A git snapshot started as the server set the folder up, for the folder's first new chat.

    In a large repository ``git status`` stats every tracked file (~0.1 s per 30,000
    here), which was most of a first chat's wait. Qwen Code 0.24.4 takes the snapshot
    when its session starts (``GeminiClient.startChat`` through ``getCachedGitStatus``,
    as the CLI starts), not when the first prompt is sent; the folder being opened is
    that moment here. It stands for at most :data:`SET_UP_SNAPSHOT_FRESH` seconds (an
    editor opening a folder is not a person starting a chat) and until the editor
    reports an edit (:meth:`drop`); only one chat ever gets it, later ones take their own.
    """

    def __init__(self, take: Callable[[], str | None], *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._at = clock()
        self._future: Future[str | None] | None = _SNAPSHOTS.submit(take)

    def claim(self) -> Future[str | None] | None:
        """The snapshot, once, while it is fresh."""
        future, self._future = self._future, None
        return future if future is not None and self._clock() - self._at <= SET_UP_SNAPSHOT_FRESH else None

    def drop(self) -> None:
        self._future = None


class SessionContext:
    def __init__(self, assembler: SharedContext) -> None:
        self._assembler = assembler
        self._git: str | None = None
        self._git_taken = False
        self._git_started: Future[str | None] | None = None
        self._startup: str | None = None
        self._injected: set[str] = set()
        self._pending: list[Rule] = []
        self._deferred: list[Path | str] = []
        self._prompt_inputs: tuple[str, str] | None = None
        self._prompt = ""

    def prepare(self) -> None:
        """Blocking: build the workspace context if stale, take this chat's snapshots once."""
        self._assembler.prepare()
        self.git_snapshot()
        self.startup_reminder()

    def start_git_snapshot(self) -> None:
        """Start taking the snapshot now, on a thread of its own; :meth:`git_snapshot` waits for it.

        On a new chat's way to its first request the snapshot was the longest step (``git status``
        and ``git log`` are process starts, ~5-15 ms); started when the chat is opened, the processes
        run on another core while the session, the workspace context and the prelude are prepared.
        It is still taken at the chat's start, so a commit or an edit made before it always shows,
        except in a folder's first new chat, which takes the folder's set-up snapshot while it is fresh
        (:class:`SetUpSnapshot`: Qwen Code 0.24.4 takes it as the session starts).
        """
        if not self._git_taken and self._git_started is None:
            self._git_started = self._assembler.claim_set_up_snapshot() or _SNAPSHOTS.submit(self._take_git_snapshot)

    def _take_git_snapshot(self) -> str | None:
        return git_snapshot(self._assembler.cwd, in_git=self._assembler.in_git())

    def git_snapshot(self) -> str | None:
        """Branch, status and recent commits, taken once at the chat's start and then frozen."""
        if not self._git_taken:
            started = self._git_started
            self._git = started.result() if started is not None else self._take_git_snapshot()
            self._git_taken = True
        return self._git

    def startup_reminder(self) -> str:
        """The environment ``<system-reminder>`` part of the chat's first message, frozen for the chat."""
        if self._startup is None:
            self._startup = startup_reminder(self._assembler.cwd)
        return self._startup

    def system_prompt(self) -> str:
        """The system message: identical bytes until a workspace input or the memory block changes.

        May raise :class:`~.prompts.ContextError`.
        """
        prefix = self._assembler.workspace_prefix()
        memory = self._assembler.prompt_tail
        if self._prompt_inputs is None or self._prompt_inputs[0] is not prefix or self._prompt_inputs[1] != memory:
            git = self.git_snapshot()
            self._prompt = prefix + (f"\n\n{git}" if git else "") + system_prompt_suffix(memory)
            self._prompt_inputs = (prefix, memory)
        return self._prompt

    def sections(self) -> list[Section]:
        """The inspector's view of :meth:`system_prompt`, with this chat's git snapshot."""
        return self._assembler.sections_with(self.git_snapshot())

    # ------------------------------------------------------------------ conditional rules

    def activate_rules(self, paths: Iterable[Path | str]) -> list[str] | None:
        """Queue the rules ``paths`` match that this chat has not been given; their root-relative names.

        ``None`` means the workspace's rules are not loaded yet (a rebuild is
        due): the paths are kept and :meth:`replay_deferred` activates them
        after the next :meth:`prepare`, so nothing is missed and the event
        loop never waits for a cold build.
        """
        rules = self._assembler.loaded_conditional_rules()
        if rules is None:
            self._deferred.extend(paths)
            return None
        return self.give(rules.match(list(paths), skip=self._injected))

    def has_rule(self, path: str) -> bool:
        """Whether this chat was given the rule at ``path`` (queued or sent)."""
        return path in self._injected

    def give(self, matched: Iterable[Rule]) -> list[str]:
        """Queue already-matched rules this chat has not been given (one match serves every chat); their names."""
        newly = [r for r in matched if r.path not in self._injected]
        self._injected.update(r.path for r in newly)
        self._pending.extend(newly)
        return [self._assembler.rule_name(r) for r in newly]

    def stale(self) -> bool:
        """Whether the workspace's context was dropped (a file changed, the watches started) since this chat was
        prepared, or rules arrived meanwhile: a rebuild is due before a request, or queued rules would wait a turn."""
        return bool(self._deferred) or self._assembler.loaded_conditional_rules() is None

    def replay_deferred(self) -> list[str]:
        """After :meth:`prepare` (on the event loop): activate what arrived while a rebuild was due."""
        deferred, self._deferred = self._deferred, []
        return (self.activate_rules(deferred) or []) if deferred else []

    def pending_rule_reminder(self) -> str | None:
        """Rules activated since the last call, as one ``<system-reminder>`` of rule blocks; consumed once."""
        rules = self._assembler.loaded_conditional_rules()
        if not self._pending or rules is None:
            return None
        body = self._assembler.format_rules(self._pending)
        self._pending = []
        return wrap_reminder(body)
