"""One workspace's system prompt, assembled as Qwen Code 0.24 assembles it, and cached.

The system prompt is (0.24 ``assembleSystemPrompt``)::

    base
    + "\\n\\n---\\n\\n" + context files and baseline rules    (if any)
    + "\\n\\n---\\n\\n" + append instruction                   (if any)
    + "\\n\\n" + git snapshot                                  (if in a repo with commits)
    + "\\n\\n---\\n\\n" + memory block                         (auto-memory; set by the memory core)

This class holds what every chat of the workspace shares: the files read
from disk and the cached prefix up to the git snapshot. The snapshot, the
environment prelude and conditional-rule injections belong to one chat and
live in :class:`~.session_context.SessionContext`.

Together with the tools block the system prompt is the provider's cache
prefix, so it is built once and then returned *byte for byte* until one of
its inputs changes: a context file, an imported file (even one that was missing), a
rule, ``system.md``, ``output-language.md``, a setting. The engine reports
changes through :meth:`ContextAssembler.invalidate` (from watchdog and
``didSave``); the next call rebuilds. Reading problems never raise: they
are logged and listed in :attr:`ContextAssembler.problems`. Only a
``QWEN_SYSTEM_MD`` that names a missing file raises :class:`ContextError`,
because the user asked for a prompt we cannot give.

Building reads files and may run for a while on a cold cache, so the server
calls :meth:`ContextAssembler.prepare` on a worker thread; one lock keeps
two builds from racing, and a generation counter keeps a build that an
invalidation overtook from being cached.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from ..files.containment import is_subpath
from ..files.paths import global_qwen_path
from ..files.reading import atomic_write_text
from . import output_language
from .discovery import LOCAL_CONTEXT_FILENAME, QWEN_DIR, Discovery, discover
from .project_rules_file import append_to_project_rules
from .prompts import (
    ContextError,
    resolve_base_prompt,
    resolve_path_switch,
    system_prompt_suffix,
)
from .rule_budget import RuleBudget
from .rules import ConditionalRules, Rule, format_rules, load_rules_dir
from .sections import Section, shown_path
from .session_context import SessionContext, SetUpSnapshot
from .text import GitAncestry, Problem, lexical_abspath, read_text
from ..text.jstext import js_trim

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
        self._prefix: str | None = None  # everything before the git snapshot
        self.prompt_tail = ""
        """The features' prompt blocks (the memory index), appended last after ``---``; only the tail changes."""
        self._conditional: ConditionalRules | None = None
        self._build_lock = threading.RLock()
        self._solo: SessionContext | None = None
        self._generation = 0
        self._base_problem: Problem | None = None
        self._dirs: tuple[str, str] | None = None
        self._git_repo: bool | None = None
        self._ancestry: GitAncestry | None = None  # the walk to .git of this build, for discovery to reuse
        self._set_up_snapshot: SetUpSnapshot | None = None

    # ------------------------------------------------------------------ inputs

    def _home_dirs(self) -> tuple[str, str]:
        """``(home, global dir)``, read from the environment once per build."""
        if self._dirs is None:
            self._dirs = (lexical_abspath(os.path.expanduser("~")), lexical_abspath(global_qwen_path()))  # ~ = Path.home()
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
            self._drop()

    # ------------------------------------------------------------------ building

    def _load(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._build_lock:
            return self._loaded or self._read_inputs()

    def _read_inputs(self) -> _Loaded:
        s = self.settings
        generation = self._generation
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
        budget = RuleBudget()  # one allowance for both sources (rule_budget.py)
        for directory in rules_dirs:
            found_rules, files = load_rules_dir(directory, problems, s.rule_excludes, budget)
            rules.extend(found_rules)
            rule_files.extend(files)
        budget.report(problems)
        baseline = [r for r in rules if not r.conditional]
        conditional = [r for r in rules if r.conditional]
        loaded = _Loaded(discovery, baseline, conditional, rule_files, rules_dirs, effective_root, problems, read_from)
        if generation == self._generation:
            self._loaded = loaded
            self._conditional = ConditionalRules(conditional, effective_root)
        return loaded

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
            self._drop()
        return stale

    def prepare(self) -> None:
        """Blocking: rebuild what is stale so later calls on the event loop only read caches.

        May raise :class:`ContextError` (a ``QWEN_SYSTEM_MD`` naming a missing file).
        """
        with self._build_lock:
            self.refresh_if_stale()
            self.workspace_prefix()

    def _base_prompt(self) -> str:
        if self._base is None:
            try:
                self._base = resolve_base_prompt(
                    self.settings.model,
                    self.settings.interaction_mode,
                    self.cwd,
                    self._env,
                    self.home,
                    in_git=self.in_git(),
                    tools=self.settings.tools,
                )
                self._base_problem = None
            except ContextError as exc:
                self._base_problem = Problem(self._system_md_path() or self.cwd, str(exc))
                log.warning("%s", exc)
                raise
        return self._base

    def in_git(self) -> bool:
        """Whether cwd is in a git repository; asked by the base prompt and the snapshot, walked once."""
        if self._git_repo is None:
            self._ancestry = GitAncestry()
            self._git_repo = self._ancestry.in_git(self.cwd)
        return self._git_repo

    def use_set_up_snapshot(self, snapshot: SetUpSnapshot) -> None:
        """The git snapshot the server started as it set the folder up (``Workspace.open``), for its first chat."""
        self._set_up_snapshot = snapshot

    def claim_set_up_snapshot(self) -> Future[str | None] | None:
        """That snapshot, for the first new chat that asks while it is fresh; None after."""
        return self._set_up_snapshot.claim() if self._set_up_snapshot is not None else None

    def drop_set_up_snapshot(self) -> None:
        """The editor reported an edit: the set-up snapshot may no longer show the tree."""
        if self._set_up_snapshot is not None:
            self._set_up_snapshot.drop()

    def workspace_prefix(self) -> str:
        """Base prompt, context files and rules, append instruction: the part every chat shares."""
        prefix = self._prefix
        if prefix is None:
            generation = self._generation
            base = self._base_prompt()
            loaded = self._load()
            prefix = base + system_prompt_suffix(loaded.user_memory) + system_prompt_suffix(self.settings.append_instruction)
            if generation == self._generation:
                self._prefix = prefix
        return prefix

    def solo(self) -> SessionContext:
        """The chat of a single-chat caller (the CLI's one-shot commands, benchmarks), made on first use."""
        if self._solo is None:
            self._solo = SessionContext(self)
        return self._solo

    def system_prompt(self) -> str:
        """The system message of :meth:`solo`'s chat."""
        return self.solo().system_prompt()

    def sections(self) -> list[Section]:
        """The sections of :meth:`solo`'s chat."""
        return self.solo().sections()

    def sections_with(self, git_snapshot: str | None) -> list[Section]:
        """Base prompt, each attached context file, each baseline rule, append, git, memory."""
        self.workspace_prefix()
        loaded = self._load()
        assert self._base is not None
        system_md = self._system_md_path()
        out = [Section("base prompt", system_md and self._shown(system_md), self._base, system_md)]
        for f in loaded.discovery.files:
            if f.attached:
                out.append(Section("context file", self._shown(f.path), f.block(), f.path))
        for rule in loaded.baseline:
            text = format_rules([rule], loaded.effective_root)
            out.append(Section("rule", self._shown(rule.path), text, rule.path))
        if js_trim(self.settings.append_instruction):
            out.append(Section("append instruction", None, js_trim(self.settings.append_instruction)))
        if git_snapshot:
            out.append(Section("git snapshot", None, git_snapshot))
        if js_trim(self.prompt_tail):
            out.append(Section("memory", None, js_trim(self.prompt_tail)))
        return out

    def _shown(self, path: str) -> str:
        return shown_path(path, self.cwd, self.home)

    def _system_md_path(self) -> str | None:
        switch = resolve_path_switch(self._env.get("QWEN_SYSTEM_MD"), self.home)
        if not switch.enabled:
            return None
        return os.path.join(self.cwd, ".qwen", "system.md") if switch.is_switch else switch.value

    # ------------------------------------------------------------------ staleness

    def _drop(self) -> None:
        self._generation += 1
        self._loaded = None
        self._conditional = None
        self._dirs = None
        self._ancestry = None
        self._git_repo = None
        self._base = None
        self._prefix = None

    def invalidate(self, changed: Iterable[Path | str] | None = None) -> bool:
        """Drop the cache if any of ``changed`` is an input; ``None`` drops it unconditionally."""
        if changed is None:
            self._drop()
            return True
        paths = [lexical_abspath(p) for p in changed]
        if not paths:
            return False
        if any(self._affects_base(p) for p in paths):
            self._drop()
            return True
        loaded = self._loaded
        if loaded is None:
            return False
        if any(self._affects_load(p, loaded) for p in paths):
            self._drop()
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

    def loaded_conditional_rules(self) -> ConditionalRules | None:
        """The conditional rules of the current build, or ``None`` while a rebuild is due (never builds)."""
        return self._conditional

    def rule_name(self, rule: Rule) -> str:
        """How a rule is named to the editor: its path relative to the project root."""
        root = self._conditional.project_root if self._conditional is not None else self._load().effective_root
        return os.path.relpath(rule.path, root).replace("\\", "/")

    def format_rules(self, rules: Iterable[Rule]) -> str:
        """Rule blocks as Qwen Code injects them, paths relative to the project root."""
        root = self._conditional.project_root if self._conditional is not None else self._load().effective_root
        return format_rules(rules, root)

    # ------------------------------------------------------------------ inspector data

    @property
    def problems(self) -> list[Problem]:
        found = list(self._loaded.problems) if self._loaded else []
        if self._base_problem is not None:
            found.insert(0, self._base_problem)
        return found

    # ------------------------------------------------------------------ "Add to QWEN.md"

    def project_rules_path(self) -> Path:
        """``<project root>/<first context filename>``, where Qwen Code appends workspace memories."""
        root = self._load().effective_root
        return Path(root) / self.settings.filenames()[0]

    def add_to_project_rules(self, text: str) -> Path:
        """Append ``text`` under ``## Qwen Added Memories``; atomic; the next turn sees it.

        Raises ``OSError`` if the file cannot be read or written: the caller
        reports it to the user, nothing is lost.
        """
        target = self.project_rules_path()
        try:
            existing = read_text(str(target))
        except FileNotFoundError:
            existing = ""
        updated = append_to_project_rules(existing, text)
        if updated != existing:
            atomic_write_text(Path(target), updated, mode=0o644)
            self.invalidate([target])
            if self._loaded is not None and str(target) not in self._loaded.discovery.dependencies:
                self._drop()
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
