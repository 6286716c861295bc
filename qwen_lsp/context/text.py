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
import re
import stat
from dataclasses import dataclass

log = logging.getLogger(__name__)

# ECMAScript WhiteSpace + LineTerminator (what String.prototype.trim removes).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\u0000-\u001f\u007f-\u009f]")


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def strip_ansi_and_control(text: str) -> str:
    """Display paths never carry escape sequences or control characters."""
    if text.isprintable():  # the usual case: nothing to strip (every ANSI sequence starts with ESC)
        return text
    return _CONTROL.sub("", _ANSI.sub("", text))


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
    target = [p for p in path.split("/") if p]
    base = [p for p in start.split("/") if p]
    common = 0
    for a, b in zip(target, base):
        if a != b:
            break
        common += 1
    return "/".join([".."] * (len(base) - common) + target[common:]) or "."


def is_subpath(parent: str, child: str) -> bool:
    """Qwen Code's ``isSubpath`` for normalised absolute paths: lexical, ``parent`` itself counts."""
    if child == parent:
        return True
    prefix = parent if parent.endswith(os.sep) else parent + os.sep
    return child.startswith(prefix)


def find_project_root(start: str, cache: dict[str, str | None] | None = None) -> str | None:
    """Nearest ancestor (or ``start``) whose ``.git`` is a directory or a regular file.

    ``qwen_lsp.paths.find_git_root`` answers the same question on resolved
    paths; discovery needs the *lexical* path so that display paths
    (``path.relative(cwd, file)``) agree with Qwen Code when the working
    directory sits under a symlink. Like Qwen Code's ``findProjectRoot`` it
    uses ``lstat``: a symlink named ``.git`` does not count. ``cache`` (one
    per assembly pass) remembers the answer for every directory walked.
    """
    if cache is not None and start in cache:
        return cache[start]
    cur = lexical_abspath(start)
    walked: list[str] = []
    found: str | None = None
    while True:
        if cache is not None and cur in cache:
            found = cache[cur]
            break
        walked.append(cur)
        git = os.path.join(cur, ".git")
        if os.access(git, os.F_OK, follow_symlinks=False):  # cheaper than a failing lstat, the usual answer
            try:
                st = os.lstat(git)
            except OSError:
                pass
            else:
                if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
                    found = cur
                    break
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    if cache is not None:
        for directory in walked:
            cache[directory] = found
    return found


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


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


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
