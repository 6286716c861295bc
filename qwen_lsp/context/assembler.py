"""One workspace's system prompt, assembled as Qwen Code 0.24 assembles it, and cached.

The system prompt is (0.24 ``assembleSystemPrompt``)::

    base
    + "\\n\\n---\\n\\n" + context files and baseline rules    (if any)
    + "\\n\\n---\\n\\n" + append instruction                   (if any)
    + "\\n\\n" + git snapshot                                  (if in a repo with commits)
    + "\\n\\n---\\n\\n" + memory block                         (auto-memory; set by the memory core)

Together with the tools block it is the provider's cache prefix, so it is
built once and then returned *byte for byte* until one of its inputs
changes: a context file, an imported file (even one that was missing), a
rule, ``system.md``, ``output-language.md``, a setting. The engine reports
changes through :meth:`ContextAssembler.invalidate` (from watchdog and
``didSave``); the next call rebuilds. Reading problems never raise: they
are logged and listed in :attr:`ContextAssembler.problems`. Only a
``QWEN_SYSTEM_MD`` that names a missing file raises :class:`ContextError`,
because the user asked for a prompt we cannot give.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..paths import global_qwen_dir
from . import output_language
from .discovery import LOCAL_CONTEXT_FILENAME, QWEN_DIR, Discovery, discover
from .environment import git_snapshot, startup_reminder, wrap_reminder
from .project_rules_file import append_memory, atomic_write
from .prompts import (
    ContextError,
    resolve_base_prompt,
    resolve_path_switch,
    system_prompt_suffix,
)
from .rules import ConditionalRules, Rule, format_rules, load_rules_dir
from .text import GitAncestry, Problem, is_subpath, js_trim, lexical_abspath, read_text

log = logging.getLogger(__name__)

_MTIME_SLACK_NS = 50_000_000
"""File timestamps come from a coarse kernel clock; treat edits this close before a read as after it."""

DEFAULT_CONTEXT_FILENAMES = ("QWEN.md", "AGENTS.md")


@dataclass(frozen=True)
class ContextSettings:
    """Plain values the context core needs; the engine maps its settings onto these.

    ``interaction_mode`` picks the role wording: ``interactive``, ``headless``
    (what ``qwen -p`` uses), ``acp``, or ``editor`` — the language server's
    own, the default: the user answers in the next chat message, and no
    question tool is relayed, so questions go in the reply itself.
    ``output_language`` is Qwen Code's ``general.outputLanguage`` (``None``
    leaves ``output-language.md`` alone and unloaded).
    """

    model: str = ""
    folder_trust: bool = True
    import_format: str = "tree"
    context_filenames: tuple[str, ...] = DEFAULT_CONTEXT_FILENAMES
    interaction_mode: str = "editor"
    output_language: str | None = output_language.AUTO
    append_instruction: str = ""
    rule_excludes: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None
    """Tool names offered to the model; the base prompt names no other (None: Qwen Code's full set)."""

    def filenames(self) -> tuple[str, ...]:
        """Blank names dropped; the default pair when nothing is left (as ``setMemoryFilename``)."""
        names = tuple(n.strip() for n in self.context_filenames if n and n.strip())
        return names or DEFAULT_CONTEXT_FILENAMES


@dataclass(frozen=True)
class Section:
    """One part of the system prompt, for the inspector."""

    name: str
    source: str | None
    text: str


@dataclass
class _Loaded:
    """Everything read from disk for one build, and what to watch to know it is stale."""

    discovery: Discovery
    baseline: list[Rule]
    conditional: list[Rule]
    rule_files: list[str]
    rules_dirs: list[str]
    effective_root: str
    problems: list[Problem] = field(default_factory=list)
    read_from_ns: int = 0
    """Wall clock (minus a margin for coarse file timestamps) just before reading began."""
    fingerprint: tuple[tuple[str, tuple[int, int, int] | None], ...] | None = None
    """``stat`` of every input, taken at the first staleness check; see :meth:`ContextAssembler.refresh_if_stale`."""

    def inputs(self) -> list[str]:
        """Files read or looked for, and the directories where a new input would appear."""
        paths = {f.path for f in self.discovery.files} | self.discovery.dependencies | set(self.rule_files)
        paths.update(self.discovery.scanned_dirs)
        paths.update(self.rules_dirs)
        return sorted(paths)

    @property
    def user_memory(self) -> str:
        parts = [self.discovery.text(), format_rules(self.baseline, self.effective_root)]
        return "\n\n".join(p for p in parts if p)


class ContextAssembler:
    def __init__(self, cwd: Path | str, settings: ContextSettings, *, env: Mapping[str, str] | None = None) -> None:
        self.cwd = lexical_abspath(cwd)
        self.settings = settings
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._loaded: _Loaded | None = None
        self._base: str | None = None
        self._prefix: str | None = None  # everything before the memory block
        self._prompt: str | None = None
        self._memory_block = ""
        self._git: str | None = None
        self._git_taken = False
        self._startup: str | None = None
        self._conditional = ConditionalRules([], self.cwd)
        self._pending: list[Rule] = []
        self._base_problem: Problem | None = None
        self._dirs: tuple[str, str] | None = None
        self._git_repo: bool | None = None
        self._ancestry: GitAncestry | None = None  # the walk to .git of this build, for discovery to reuse

    # ------------------------------------------------------------------ inputs

    def _home_dirs(self) -> tuple[str, str]:
        """``(home, global dir)``, read from the environment once per build."""
        if self._dirs is None:
            self._dirs = (lexical_abspath(os.path.expanduser("~")), lexical_abspath(global_qwen_dir()))  # ~ = Path.home()
        return self._dirs

    @property
    def home(self) -> str:
        return self._home_dirs()[0]

    @property
    def global_dir(self) -> str:
        return self._home_dirs()[1]

    def update_settings(self, settings: ContextSettings) -> None:
        if settings != self.settings:
            self.settings = settings
            self._drop(reload=True)

    def set_memory_block(self, text: str) -> None:
        """The auto-memory block (memory core), appended last after ``---``; only the tail changes."""
        if text != self._memory_block:
            self._memory_block = text
            self._prompt = None

    def new_session(self) -> None:
        """Take a fresh git snapshot and environment prelude (Qwen Code takes both once per session)."""
        self._git_taken = False
        self._git_repo = None
        self._startup = None
        self._prefix = self._prompt = None
        self._conditional.injected.clear()
        self._pending.clear()

    # ------------------------------------------------------------------ building

    def _load(self) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        s = self.settings
        read_from = time.time_ns() - _MTIME_SLACK_NS
        extra: list[str] = []
        if s.output_language is not None:
            output_language.ensure_global_file(self.global_dir, s.output_language)
            found = output_language.resolve_path(self.cwd, self.global_dir)
            if found:
                extra.append(found)
        discovery = discover(
            self.cwd,
            s.filenames(),
            home=self.home,
            global_dir=self.global_dir,
            trusted=s.folder_trust,
            import_format=s.import_format,
            extra_paths=extra,
            ancestry=self._ancestry,
        )
        self._ancestry = None
        effective_root = discovery.project_root or self.cwd
        problems = list(discovery.problems)
        rules_dirs = [os.path.join(self.global_dir, "rules")]
        project_rules = os.path.join(effective_root, QWEN_DIR, "rules")
        if s.folder_trust and lexical_abspath(project_rules) != lexical_abspath(rules_dirs[0]):
            rules_dirs.append(project_rules)
        rules: list[Rule] = []
        rule_files: list[str] = []
        for directory in rules_dirs:
            found_rules, files = load_rules_dir(directory, problems, s.rule_excludes)
            rules.extend(found_rules)
            rule_files.extend(files)
        baseline = [r for r in rules if not r.conditional]
        conditional = [r for r in rules if r.conditional]
        injected = {p for p in self._conditional.injected if any(r.path == p for r in conditional)}
        self._conditional = ConditionalRules(conditional, effective_root, injected)
        self._loaded = _Loaded(discovery, baseline, conditional, rule_files, rules_dirs, effective_root, problems, read_from)
        return self._loaded

    def refresh_if_stale(self) -> bool:
        """Drop the cache when any input changed on disk since it was read; True if it did.

        The watcher (and ``didSave``) report changes too, but only after a
        debounce; this check costs one ``stat`` per input (≈ 100 µs for a
        deep monorepo) and makes a turn sent right after an edit see it.
        A directory's mtime moves when an entry is added, so a new
        ``QWEN.md`` in a scanned directory or a new rule file is caught too.
        """
        loaded = self._loaded
        if loaded is None:
            return False
        current = _fingerprint(loaded.inputs())
        if loaded.fingerprint is None:
            # First check since the read (stat-ing inside the cold build would
            # slow it by a tenth): anything modified since reading began is stale.
            loaded.fingerprint = current
            stale = any(st is not None and st[0] >= loaded.read_from_ns for _, st in current)
        else:
            stale = current != loaded.fingerprint
        if stale:
            self._drop(reload=True)
        return stale

    def _base_prompt(self) -> str:
        if self._base is None:
            try:
                self._base = resolve_base_prompt(
                    self.settings.model,
                    self.settings.interaction_mode,
                    self.cwd,
                    self._env,
                    self.home,
                    in_git=self._in_git(),
                    tools=self.settings.tools,
                )
                self._base_problem = None
            except ContextError as exc:
                self._base_problem = Problem(self._system_md_path() or self.cwd, str(exc))
                log.warning("%s", exc)
                raise
        return self._base

    def _in_git(self) -> bool:
        """Whether cwd is in a git repository; asked by the base prompt and the snapshot, walked once."""
        if self._git_repo is None:
            self._ancestry = GitAncestry()
            self._git_repo = self._ancestry.in_git(self.cwd)
        return self._git_repo

    def git_snapshot(self) -> str | None:
        """The session's frozen git snapshot (see :mod:`.environment`)."""
        if not self._git_taken:
            self._git = git_snapshot(self.cwd, in_git=self._in_git())
            self._git_taken = True
        return self._git

    def system_prompt(self, memory_block: str | None = None) -> str:
        """The system message; identical bytes until an input changes. May raise :class:`ContextError`."""
        if memory_block is not None:
            self.set_memory_block(memory_block)
        if self._prompt is not None:
            return self._prompt
        if self._prefix is None:
            base = self._base_prompt()
            loaded = self._load()
            git = self.git_snapshot()
            self._prefix = (
                base
                + system_prompt_suffix(loaded.user_memory)
                + system_prompt_suffix(self.settings.append_instruction)
                + (f"\n\n{git}" if git else "")
            )
        self._prompt = self._prefix + system_prompt_suffix(self._memory_block)
        return self._prompt

    def sections(self) -> list[Section]:
        """Base prompt, each attached context file, each baseline rule, append, git, memory."""
        self.system_prompt()
        loaded = self._load()
        assert self._base is not None
        out = [Section("base prompt", self._system_md_path(), self._base)]
        for f in loaded.discovery.files:
            if f.attached:
                out.append(Section("context file", f.display, f.block()))
        for rule in loaded.baseline:
            text = format_rules([rule], loaded.effective_root)
            out.append(Section("rule", os.path.relpath(rule.path, loaded.effective_root).replace("\\", "/"), text))
        if js_trim(self.settings.append_instruction):
            out.append(Section("append instruction", None, js_trim(self.settings.append_instruction)))
        if self._git:
            out.append(Section("git snapshot", None, self._git))
        if js_trim(self._memory_block):
            out.append(Section("memory", None, js_trim(self._memory_block)))
        return out

    def _system_md_path(self) -> str | None:
        switch = resolve_path_switch(self._env.get("QWEN_SYSTEM_MD"), self.home)
        if not switch.enabled:
            return None
        return os.path.join(self.cwd, ".qwen", "system.md") if switch.is_switch else switch.value

    # ------------------------------------------------------------------ history prelude

    def startup_reminder(self) -> str:
        """The environment ``<system-reminder>`` part, frozen for the session."""
        if self._startup is None:
            self._startup = startup_reminder(self.cwd)
        return self._startup

    def initial_history(self) -> list[dict[str, Any]]:
        """The first user message as 0.24 seeds it, minus the skills listing (the skills core adds that)."""
        return [{"role": "user", "parts": [{"text": self.startup_reminder()}]}]

    # ------------------------------------------------------------------ staleness

    def _drop(self, *, reload: bool) -> None:
        if reload:
            self._loaded = None
            self._dirs = None
            self._ancestry = None
        self._git_repo = None
        self._base = None
        self._prefix = None
        self._prompt = None

    def invalidate(self, changed: Iterable[Path | str] | None = None) -> bool:
        """Drop the cache if any of ``changed`` is an input; ``None`` drops it unconditionally."""
        if changed is None:
            self._drop(reload=True)
            return True
        paths = [lexical_abspath(p) for p in changed]
        if not paths:
            return False
        if any(self._affects_base(p) for p in paths):
            self._drop(reload=True)
            return True
        loaded = self._loaded
        if loaded is None:
            return False
        if any(self._affects_load(p, loaded) for p in paths):
            self._drop(reload=True)
            return True
        return False

    def _affects_base(self, path: str) -> bool:
        if self._base is None:
            return False
        target = self._system_md_path()
        return target is not None and (path == target or is_subpath(path, target))

    def _affects_load(self, path: str, loaded: _Loaded) -> bool:
        name = os.path.basename(path)
        parent = os.path.dirname(path)
        if path in loaded.discovery.dependencies or path in loaded.rule_files:
            return True
        if parent in loaded.discovery.scanned_dirs and (
            name in self.settings.filenames() or name in (".git", LOCAL_CONTEXT_FILENAME, output_language.FILENAME, QWEN_DIR)
        ):
            return True
        if name == output_language.FILENAME and parent in (self.global_dir, os.path.join(self.cwd, QWEN_DIR)):
            return True
        for rules_dir in loaded.rules_dirs:
            if is_subpath(rules_dir, path) and (name.endswith(".md") or path == rules_dir or os.path.isdir(path)):
                return True
            if is_subpath(path, rules_dir):
                return True  # an ancestor of a rules directory appeared or vanished
        # A directory holding inputs was moved or deleted.
        return any(is_subpath(path, dep) for dep in loaded.discovery.dependencies if dep != path)

    def watch_targets(self) -> tuple[list[Path], list[Path]]:
        """``(recursive, flat)`` directories to watch for inputs changing on disk.

        Only rules directories are watched recursively; everything else is a
        specific file in a known directory (scanned dirs of the upward walk,
        ``~/.qwen``, import targets, parents of missing rules dirs), so a flat
        watch there notices it without an inotify watch per folder of a big
        repository. A *new* context file above the git root is not seen; a
        save in the editor (``didSave``) or ``invalidate(None)`` picks it up.
        """
        loaded = self._load()
        recursive = sorted({d for d in loaded.rules_dirs if os.path.isdir(d)})
        flat = {loaded.effective_root, self.global_dir, os.path.join(self.cwd, QWEN_DIR), *loaded.discovery.scanned_dirs}
        for rules_dir in loaded.rules_dirs:
            flat.update((os.path.dirname(rules_dir), os.path.dirname(os.path.dirname(rules_dir))))
        flat.update(os.path.dirname(dep) for dep in loaded.discovery.dependencies | set(loaded.rule_files))
        system_md = self._system_md_path()
        if system_md is not None:
            flat.add(os.path.dirname(system_md))
        flat_dirs = sorted(d for d in flat if os.path.isdir(d) and not any(is_subpath(r, d) for r in recursive))
        return [Path(d) for d in recursive], [Path(d) for d in flat_dirs]

    # ------------------------------------------------------------------ conditional rules

    def activate_rules_for(self, paths: Iterable[Path | str]) -> list[str]:
        """Activate conditional rules matching files just opened or touched; names (root-relative) returned."""
        loaded = self._load()
        newly = self._conditional.match(list(paths))
        self._pending.extend(newly)
        return [os.path.relpath(r.path, loaded.effective_root).replace("\\", "/") for r in newly]

    def pending_rule_reminder(self) -> str | None:
        """Rules activated since the last call, as one ``<system-reminder>`` of rule blocks; consumed once."""
        if not self._pending:
            return None
        loaded = self._load()
        body = format_rules(self._pending, loaded.effective_root)
        self._pending = []
        return wrap_reminder(body)

    # ------------------------------------------------------------------ inspector data

    @property
    def problems(self) -> list[Problem]:
        found = list(self._loaded.problems) if self._loaded else []
        if self._base_problem is not None:
            found.insert(0, self._base_problem)
        return found

    errors = problems  # the inspector asks for "errors"; both names mean the same list

    # ------------------------------------------------------------------ "Add to QWEN.md"

    def memory_file_path(self) -> Path:
        """``<project root>/<first context filename>``, where Qwen Code appends workspace memories."""
        root = self._load().effective_root
        return Path(root) / self.settings.filenames()[0]

    def add_project_memory(self, text: str) -> Path:
        """Append ``text`` under ``## Qwen Added Memories``; atomic; the next turn sees it.

        Raises ``OSError`` if the file cannot be read or written: the caller
        reports it to the user, nothing is lost.
        """
        target = self.memory_file_path()
        try:
            existing = read_text(str(target))
        except FileNotFoundError:
            existing = ""
        updated = append_memory(existing, text)
        if updated != existing:
            atomic_write(str(target), updated)
            self.invalidate([target])
            if self._loaded is not None and str(target) not in self._loaded.discovery.dependencies:
                self._drop(reload=True)
        return target


def _fingerprint(paths: list[str]) -> tuple[tuple[str, tuple[int, int, int] | None], ...]:
    out: list[tuple[str, tuple[int, int, int] | None]] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out.append((path, None))
        else:
            out.append((path, (st.st_mtime_ns, st.st_size, st.st_ino)))
    return tuple(out)
