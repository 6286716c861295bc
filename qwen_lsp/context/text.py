"""Small text and path helpers that make Python agree with Node on the bytes we send.

Qwen Code is JavaScript. Where the context-file blocks must match it byte
for byte, three JavaScript behaviours matter and Python does them
differently by default:

* ``String.prototype.trim`` strips the ECMAScript whitespace set, which
  includes U+FEFF (a BOM) but not the C0 separators ``\\x1c``-``\\x1f`` or
  U+0085 that ``str.strip`` removes;
* ``fs.readFile(p, "utf-8")`` never fails on bad bytes: each invalid
  sequence becomes U+FFFD (``errors="replace"`` does the same) and a BOM is
  kept as a character;
* ``path.resolve`` / ``path.relative`` are lexical: they never follow
  symlinks, unlike ``Path.resolve``.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from dataclasses import dataclass

from ..files.containment import ancestors, child_of
from ..files.reading import read_bytes


log = logging.getLogger(__name__)


def lexical_abspath(path: str | os.PathLike[str], base: str | None = None) -> str:
    """``path.resolve(base, path)``: absolute and normalised, symlinks untouched."""
    raw = os.fspath(path)
    if not os.path.isabs(raw):
        raw = os.path.join(base if base is not None else os.getcwd(), raw)
    return os.path.normpath(raw)


def relative_path(path: str, start: str) -> str:
    """``path.relative(start, path)`` for two normalised absolute paths.

    ``os.path.relpath`` gets there too, but normalises both paths again
    first; this runs once per context block, so the shortcut pays.
    """
    if os.sep != "/":
        return os.path.relpath(path, start)
    if path == start:
        return "."
    parent, _, name = path.rpartition("/")
    if name and parent and not start.endswith("/") and (
        start == parent or (start.startswith(parent + "/") and not start.startswith(path + "/"))
    ):
        return "../" * start.count("/", len(parent)) + name  # a file in cwd or above it: the usual context file
    target = [p for p in path.split("/") if p]
    base = [p for p in start.split("/") if p]
    common = 0
    for a, b in zip(target, base):
        if a != b:
            break
        common += 1
    return "/".join([".."] * (len(base) - common) + target[common:]) or "."


class GitAncestry:
    """One assembly pass's memo of the walk from a directory up to its ``.git``.

    Two of Qwen Code's questions are answered by that same walk, and on a
    deep path each level costs a syscall that resolves every component, so
    a pass walks once and asks both here:

    * :meth:`project_root` (``findProjectRoot``, which bounds imports and
      discovery): the nearest directory whose ``.git`` is a directory or a
      regular file, by ``lstat``: a symlink named ``.git`` does not count;
    * :meth:`in_git` (``isGitRepository``, which decides the git prompt
      section and snapshot): anything named ``.git``, symlinks followed.

    A level with no ``.git`` entry at all answers both at once (the usual
    case); only an odd entry (a symlink, say) costs a second syscall. The
    memo lives for one pass: it is never a process-wide cache.
    """

    def __init__(self) -> None:
        self._memo: dict[str, tuple[str | None, bool]] = {}  # dir -> (project root, in a git repo)

    def _answer(self, start: str) -> tuple[str | None, bool]:
        known = self._memo.get(start)
        if known is not None:
            return known
        normal = lexical_abspath(start)
        walked: list[tuple[str, bool]] = []  # (dir, its .git exists with symlinks followed)
        found: str | None = None
        in_git = False
        for cur in ancestors(normal):
            known = self._memo.get(cur)
            if known is not None:
                found, in_git = known
                break
            git = child_of(cur, ".git")
            exists = False
            if os.access(git, os.F_OK, follow_symlinks=False):  # cheaper than a failing lstat, the usual answer
                try:
                    st = os.lstat(git)
                except OSError:
                    st = None
                if st is not None and (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                    found, in_git = cur, True
                    self._memo[cur] = (cur, True)
                    break
                exists = os.access(git, os.F_OK)
            walked.append((cur, exists))
        for directory, exists in reversed(walked):
            in_git = in_git or exists
            self._memo[directory] = (found, in_git)
        self._memo.setdefault(start, self._memo[normal])
        return self._memo[start]

    def project_root(self, start: str) -> str | None:
        """Nearest ancestor (or ``start``) whose ``.git`` is a directory or a regular file.

        ``qwen_lsp.files.paths.find_git_root`` answers the same question on
        resolved paths; discovery needs the *lexical* path so that display
        paths (``path.relative(cwd, file)``) agree with Qwen Code when the
        working directory sits under a symlink.
        """
        known = self._memo.get(start)  # the usual answer, without a second call (asked once per context file)
        return (known if known is not None else self._answer(start))[0]

    def in_git(self, start: str) -> bool:
        """Whether ``start`` or an ancestor holds anything named ``.git``."""
        return self._answer(start)[1]


@dataclass(frozen=True)
class Problem:
    """One thing that went wrong with user data: shown by the inspector, logged, never raised."""

    path: str
    message: str


def node_error_message(exc: OSError, path: str) -> str:
    """The message Node would give for the same failure (it lands in import comments).

    Qwen Code checks a target with ``fs.access`` and then reads it, so a
    bad path reports ``access`` and an unreadable file reports ``open``.
    """
    if exc.errno == errno.EISDIR:
        return "EISDIR: illegal operation on a directory, read"
    if exc.errno == errno.EACCES:
        return f"EACCES: permission denied, open '{path}'"
    if exc.errno == errno.ENOENT:
        return f"ENOENT: no such file or directory, open '{path}'"
    if exc.errno == errno.ENOTDIR:
        return f"ENOTDIR: not a directory, access '{path}'"
    if exc.errno == errno.ELOOP:
        return f"ELOOP: too many symbolic links encountered, access '{path}'"
    return exc.strerror or str(exc)


def decode_text(data: bytes, path: str, problems: list[Problem] | None = None) -> str:
    """Decode as Node's ``readFile(p, "utf-8")`` would.

    Invalid UTF-8 is not an error (each bad sequence becomes U+FFFD, as in
    Node) but it is worth a warning, because the user probably saved the
    file in another encoding.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"not valid UTF-8 (first bad byte at offset {exc.start}); invalid bytes replaced with U+FFFD"
        log.warning("%s: %s", path, message)
        if problems is not None:
            problems.append(Problem(path, message))
        return data.decode("utf-8", errors="replace")


def read_text(path: str, problems: list[Problem] | None = None) -> str:
    """Read a file as Node's ``readFile(p, "utf-8")`` would; raise ``OSError`` on I/O failure."""
    return decode_text(read_bytes(path), path, problems)
