"""``find``: starting points, then an expression of known predicates; the ones that write, run or follow links ask.

``find`` parses its own arguments (single-dash words, no abbreviations).
Known: the tests, the printing actions that write to standard output, and
the operators. ``-exec``/``-execdir``/``-ok``/``-okdir``/``-delete`` and
``-fprint*``/``-fls`` write or run programs (0.24.4 blocks the same);
``-L``/``-H``/``-follow`` follow symbolic links out of the walk and
``-files0-from`` reads the starting points from a file, so they ask here
(0.24.4 lets them run). Any other word starting with ``-`` asks.
"""

from __future__ import annotations

from .options import Refusal

_TESTS_WITH_VALUE = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype -maxdepth -mindepth "
    "-mtime -mmin -atime -amin -ctime -cmin -used -size -perm -user -group -uid -gid -links -inum -regextype -printf -fstype".split()
)
_TESTS_WITH_PATH = frozenset("-newer -anewer -cnewer -samefile".split())
_FLAGS = frozenset(
    "-print -print0 -ls -prune -quit -true -false -empty -readable -writable -executable -nouser -nogroup -depth -d "
    "-xdev -mount -noleaf -ignore_readdir_race -noignore_readdir_race -daystart -not -a -and -o -or , ! ( ) -P".split()
)
_WRITES = frozenset("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls".split())
_LEAVES = frozenset("-L -H -follow -files0-from".split())


def judge_find(args: list[str]) -> tuple[Refusal | None, list[str]]:
    """The refusal, if any, and every argument that names a file (starting points, ``-newer FILE``…)."""
    paths: list[str] = []
    i = 0
    while i < len(args) and args[i] in ("-P", "-L", "-H", "-O0", "-O1", "-O2", "-O3"):
        if args[i] in _LEAVES:
            return Refusal(f"'find {args[i]}' follows symbolic links, which can lead outside the workspace"), []
        i += 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("!", "(", ")", ","):
        paths.append(args[i])
        i += 1
    while i < len(args):
        word = args[i]
        i += 1
        lower = word.lower()
        if lower in _WRITES or lower.startswith(("-fprint", "-fls")):
            return Refusal(f"'find {word}' writes files or runs another program", writes=True), []
        if word in _LEAVES:
            return Refusal(f"'find {word}' follows symbolic links or reads file names from a file"), []
        if word in _FLAGS:
            continue
        if word in _TESTS_WITH_VALUE or word in _TESTS_WITH_PATH or (word.startswith("-newer") and len(word) == 8):
            if i >= len(args) or args[i].startswith("-"):  # a value that looks like a predicate: 0.24.4 asks too
                return Refusal(f"'find {word}' needs a value"), []
            if word in _TESTS_WITH_PATH or (word.startswith("-newer") and len(word) == 8 and not word.endswith("t")):
                paths.append(args[i])
            i += 1
            continue
        return Refusal(f"'find {word}' is not a predicate known to be read-only"), []
    return None, paths
