"""``MemoryStore``: everything the memory features do on disk goes through here.

One store serves one project (workspace folder) and knows its three scope
roots (:mod:`qwen_lsp.memory.paths`). It reads memories
(:mod:`~qwen_lsp.memory.scan`), writes them atomically
(:mod:`~qwen_lsp.memory.atomic`) and keeps each scope's ``MEMORY.md``
rebuilt from the files (:mod:`~qwen_lsp.memory.index`).

Every method blocks on the file system (and may wait up to 30 s for
another process's lock): callers on the event loop run them with
``asyncio.to_thread``. The store holds no cache, so two stores — or two
servers, or the Qwen Code CLI — on one project always see the same files.

Rules every write follows, in this order:

1. The path must be a ``.md`` file lexically inside a scope root, not the
   generated ``MEMORY.md``, not under the protected ``pinned/``, and its
   directory must really be inside the root (a symlinked subdirectory
   that leads out is refused) — else :class:`OutsideMemoryRoot`.
2. Team memory (a path inside the team root, or one whose symlink chain —
   dangling or not — ends there): the secret scan runs first and refuses
   with :class:`SecretRefused` before anything is created; then the team
   root is checked against symlink redirection
   (:class:`TeamMemorySecurityError`).
3. Under the scope's cross-process lock: the atomic write, then the
   scope's index rebuild, so the index always lists what is on disk.

A symlink at the destination itself is replaced, not written through.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path

from ..files.containment import is_within
from ..errors import EngineError
from .atomic import atomic_write_text, locked, read_text_nofollow, remove_stale_temps
from .errors import OutsideMemoryRoot, SecretRefused, TeamMemorySecurityError
from .index import build_index, build_team_index, truncate_field
from ..text.jstext import JS_SPACE_RE, js_trim
from .model import SCOPES, TOPICS, MemoryDoc, Scope, Topic
from .paths import (
    INDEX_FILENAME,
    PINNED_DIRNAME,
    QWEN_DIRNAME,
    TEAM_MEMORY_DIRNAME,
    is_team_path,
    memory_paths,
    realpath_nearest_existing,
)
from .scan import MAX_FILE_BYTES, MAX_FILES, parse_memory, scan_root
from .secrets import scan_for_secrets

log = logging.getLogger(__name__)

MAX_INDEX_READ_BYTES = 1024 * 1024
"""``index_text`` reads at most this much; the prompt keeps 25,000 characters of it anyway."""
MAX_NAME_CHARS = 60
MAX_DESCRIPTION_CHARS = 200
MAX_SLUG_CHARS = 48
_SLUG_JUNK = re.compile(r"[\W_]+")
_LEADING_MARKUP = re.compile(r"^[\s#>*+-]+")


def _one_line(value: str | None) -> str:
    return js_trim(JS_SPACE_RE.sub(" ", value)) if value else ""


def derive_name(text: str) -> str:
    """A title from the text itself (works with no model): its first line, bullets and ``#`` removed, ≤ 60."""
    first = next((line for line in text.splitlines() if line.strip()), text)
    return truncate_field(_one_line(_LEADING_MARKUP.sub("", first)) or _one_line(text), MAX_NAME_CHARS)


def derive_description(text: str) -> str:
    """The one-line hook recall matches on: the whole text on one line, ≤ 200."""
    return truncate_field(_one_line(text), MAX_DESCRIPTION_CHARS)


def slugify(name: str) -> str:
    """File-name stem: lower-case letters and digits (any script) joined by ``-``, ≤ 48, never empty."""
    slug = _SLUG_JUNK.sub("-", name.lower()).strip("-")[:MAX_SLUG_CHARS].strip("-")
    return slug or "memory"


def render_memory(*, name: str, description: str, type: Topic, body: str) -> str:
    """Qwen Code's memory file format (``store.ts``): ``name`` / ``description`` / ``type`` frontmatter, blank line, body."""
    return f"---\nname: {name}\ndescription: {description}\ntype: {type}\n---\n\n{body}\n"


class MemoryStore:
    """The memory files of one project across the user, project and team scopes (see the module docstring)."""

    def __init__(self, project_root: Path, *, home: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        environment = dict(os.environ if env is None else env)
        self.paths = memory_paths(
            project_root,
            home=Path(home) if home is not None else Path(os.path.expanduser("~")),
            env=environment,
        )

    # --- where ------------------------------------------------------------

    def root(self, scope: Scope) -> Path:
        """The scope's root directory (it may not exist yet)."""
        if scope == "user":
            return self.paths.user
        if scope == "project":
            return self.paths.project
        if scope == "team":
            return self.paths.team
        raise EngineError(f"Unknown memory scope {scope!r}; use one of {', '.join(SCOPES)}.", kind="invalid_params", param="scope")

    def state_dir(self) -> Path:
        """The project state directory (parent of the project memory root)."""
        return self.paths.state_dir

    def scope_of(self, path: Path) -> Scope | None:
        """Which scope ``path`` belongs to; team first, through symlinks, so a decoy link counts as team."""
        if is_team_path(Path(path), self.paths):
            return "team"
        for scope in ("project", "user"):
            if is_within(self.root(scope), Path(path)):
                return scope
        return None

    # --- reading ----------------------------------------------------------

    def scan(self, scope: Scope, *, everything: bool = False) -> list[MemoryDoc]:
        """The scope's memories, newest first (≤ 200, or all with ``everything``, as recall scans).
        Team: raises :class:`TeamMemorySecurityError` when redirected."""
        root = self.root(scope)
        if scope == "team":
            self._check_team_root()
        return scan_root(root, scope, limit=None if everything else MAX_FILES)

    def scan_all(self) -> list[MemoryDoc]:
        """User, project, then team memories; a redirected team root is left out with a warning."""
        docs: list[MemoryDoc] = []
        for scope in SCOPES:
            try:
                docs.extend(self.scan(scope))
            except TeamMemorySecurityError as exc:
                log.warning("%s", exc.message)
        return docs

    def index_text(self, scope: Scope) -> str:
        """The scope's ``MEMORY.md`` as on disk ('' when absent). A symlinked index is not followed.

        Team: raises :class:`TeamMemorySecurityError` when the root is redirected.
        """
        if scope == "team":
            self._check_team_root()
        return read_text_nofollow(self.root(scope) / INDEX_FILENAME, MAX_INDEX_READ_BYTES) or ""

    # --- writing ----------------------------------------------------------

    def write_text(self, path: Path, content: str) -> None:
        """Write one memory file (whole, atomically) and rebuild its scope's index. See the module rules."""
        target = Path(os.path.abspath(path))
        scope = self._writable_scope(target)
        if len(content.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
            raise EngineError(
                f"A memory file may hold at most {MAX_FILE_BYTES // 1024} KB; keep it to one short note.",
                kind="invalid_params",
                param="content",
            )
        if scope == "team" or is_team_path(target, self.paths):
            self._refuse_secrets(content)
        with self._lock(scope):
            if scope == "team":
                self._check_team_root()
            atomic_write_text(target, content)
            self._rebuild_locked(scope)

    def remember(
        self,
        *,
        text: str,
        type: Topic = "feedback",
        scope: Scope = "project",
        name: str | None = None,
        description: str | None = None,
    ) -> MemoryDoc:
        """Save ``text`` as a new memory ``<root>/<type>/<slug>.md`` and return it as scanned.

        ``name`` and ``description`` default to ones derived from the text,
        so this works with no model; extraction or dream may refine them.
        The slug comes from the name and never overwrites an existing file.
        """
        body = js_trim(text)
        if not body:
            raise EngineError("There is nothing to remember: the text is empty.", kind="invalid_params", param="text")
        if type not in TOPICS:
            raise EngineError(
                f"Unknown memory type {type!r}; use one of {', '.join(TOPICS)}.", kind="invalid_params", param="type"
            )
        root = self.root(scope)
        title = truncate_field(_one_line(name), MAX_NAME_CHARS) or derive_name(body)
        hook = truncate_field(_one_line(description), MAX_DESCRIPTION_CHARS) or derive_description(body)
        content = render_memory(name=title, description=hook, type=type, body=body)
        if len(content.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
            raise EngineError(
                f"A memory may hold at most {MAX_FILE_BYTES // 1024} KB; keep it to one short note.",
                kind="invalid_params",
                param="text",
            )
        if scope == "team":
            self._refuse_secrets(content)
        with self._lock(scope):
            if scope == "team":
                self._check_team_root()
            directory = root / type
            if not is_within(realpath_nearest_existing(root), realpath_nearest_existing(directory)):
                raise OutsideMemoryRoot(f"{directory} leads out of the {scope} memory directory through a symlink.")
            target = directory / f"{self._free_stem(directory, slugify(title))}.md"
            atomic_write_text(target, content)
            self._rebuild_locked(scope)
            mtime = os.stat(target).st_mtime
        parsed = parse_memory(content)
        assert parsed is not None  # render_memory always produces a valid memory
        return MemoryDoc(
            scope=scope,
            type=parsed.type,
            path=target,
            relative_path=target.relative_to(root).as_posix(),
            title=parsed.title,
            description=parsed.description,
            body=parsed.body,
            mtime=mtime,
        )

    def remove(self, paths: Iterable[Path]) -> list[Path]:
        """Delete memory files; paths that are not removable memory files are skipped. Returns what was removed.

        A redirected team root raises :class:`TeamMemorySecurityError` instead of deleting through it.
        """
        removed: list[Path] = []
        touched: list[Scope] = []
        for raw in paths:
            target = Path(os.path.abspath(raw))
            try:
                scope = self._writable_scope(target)
            except OutsideMemoryRoot as exc:
                log.info("memory remove: skipped %s: %s", target, exc.message)
                continue
            with self._lock(scope):
                if scope == "team":
                    self._check_team_root()  # a redirected root would delete outside the repository
                try:
                    os.unlink(target)
                except FileNotFoundError:
                    continue
            removed.append(target)
            if scope not in touched:
                touched.append(scope)
        for scope in touched:
            self.rebuild_index(scope)
        return removed

    def rebuild_index(self, scope: Scope) -> bool:
        """Regenerate the scope's ``MEMORY.md``; True when it was written (False: unchanged or no root)."""
        with self._lock(scope):
            return self._rebuild_locked(scope)

    # --- internals --------------------------------------------------------

    def _lock(self, scope: Scope) -> AbstractContextManager[None]:
        """User memory is shared by every project, so its lock lives beside it in the base directory."""
        if scope == "user":
            return locked(self.paths.base / "memories.lock")
        return locked(self.state_dir() / "memory.lock")

    def _rebuild_locked(self, scope: Scope) -> bool:
        root = self.root(scope)
        if not os.path.lexists(root):
            return False
        if scope == "team":
            self._check_team_root()  # before the type check: a symlinked root is an error, not "no root"
        try:
            if not stat.S_ISDIR(os.lstat(root).st_mode):
                return False
        except OSError:
            return False
        if scope == "team":
            content = build_team_index(scan_root(root, scope))
        else:
            content = build_index(scan_root(root, scope))
        for directory in (root, *(root / topic for topic in TOPICS)):
            remove_stale_temps(directory)  # what a writer killed mid-write left behind
        index = root / INDEX_FILENAME
        if read_text_nofollow(index, MAX_INDEX_READ_BYTES) == content:
            return False
        atomic_write_text(index, content)
        return True

    def _writable_scope(self, target: Path) -> Scope:
        for scope in ("team", "project", "user"):
            root = self.root(scope)
            if not is_within(root, target):
                continue
            relative = Path(os.path.relpath(target, root))
            if relative.name == INDEX_FILENAME:
                raise OutsideMemoryRoot(f"{INDEX_FILENAME} is generated from the memory files; write a topic file instead.")
            if relative.suffix != ".md" or relative == Path("."):
                raise OutsideMemoryRoot(f"{target} is not a memory file: memories are .md files below {root}.")
            if relative.parts[0] == PINNED_DIRNAME:
                raise OutsideMemoryRoot(f"{target} is in the protected {PINNED_DIRNAME}/ directory.")
            if not is_within(realpath_nearest_existing(root), realpath_nearest_existing(target.parent)):
                raise OutsideMemoryRoot(f"{target} leads out of the {scope} memory directory through a symlink.")
            return scope
        raise OutsideMemoryRoot(
            f"{target} is outside the memory directories ({self.paths.user}, {self.paths.project}, {self.paths.team})."
        )

    def _refuse_secrets(self, content: str) -> None:
        found = scan_for_secrets(content)
        if found:
            raise SecretRefused([match.label for match in found])

    def _check_team_root(self) -> None:
        """As ``indexer.ts``: the team root may not be a symlink, nor resolve anywhere but ``<repo>/.qwen/team-memory``."""
        team = self.paths.team
        if os.path.islink(team):
            raise TeamMemorySecurityError(
                f"Refusing to use team memory: {team} is a symlink, which could redirect the committed "
                "memory outside the repository."
            )
        expected = Path(os.path.realpath(self.paths.repo_root)) / QWEN_DIRNAME / TEAM_MEMORY_DIRNAME
        actual = realpath_nearest_existing(team)
        if actual != expected:
            raise TeamMemorySecurityError(
                f"Refusing to use team memory: {team} resolves to {actual}, outside the repository — "
                "a parent-directory symlink may be redirecting it."
            )

    @staticmethod
    def _free_stem(directory: Path, stem: str) -> str:
        """``stem``, or ``stem-2``, ``stem-3``…: the first name no file (or link) holds. Called under the lock."""
        candidate = stem
        n = 1
        while os.path.lexists(directory / f"{candidate}.md"):
            n += 1
            candidate = f"{stem}-{n}"
        return candidate
