"""What linear-time matching costs: ``grep_search`` and ``glob`` on a moderate tree, and a hostile glob.

Setup: a temporary project of 1,000 source files (~6 KB each, ~6 MB in
all) in 40 directories, a few lines per file matching the search.

Measurements (``python -m bench.grep_search``; each the median of 3 runs):

* ``grep_search.tree_vs_read`` — ``GrepTool`` (walk, RE2 over each file,
  then per line where the file matched) for ``def \\w+_handler\\(``.
  Baseline: a plain Python read of the same files (the walk, the binary
  sniff and decoding every file), i.e. the floor any Python search pays.
* ``grep_search.tree_vs_re`` — the same search. Baseline: the previous
  engine, Python ``re`` on every line of every file (same walk and reads).
* ``grep_search.catastrophic`` — ``(a+)+$`` over the same tree plus 200
  lines of 60 ``a``s followed by ``!`` (Python ``re`` never returns on
  one of them). Baseline: the ordinary search above.
* ``glob_tool.tree_vs_wcmatch`` — ``GlobTool`` with ``**/*.{py,ts}``.
  Baseline: the previous engine, wcmatch's ``globmatch`` on the same walk.
* ``globs.exponential`` — ``ActivationIndex.match`` with the skill glob
  ``**/+(?|?)Q`` on a 16-character file name. Baseline: wcmatch's
  translation under Python ``re``, as before (~0.3 s; it doubles per
  character, so only 16 are tried).
"""

from __future__ import annotations

import re
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from wcmatch import glob as wc

from bench.harness import emit, log, median
from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.agent.tools.glob import GlobArgs, GlobTool
from qwen_lsp.agent.tools.grep import GrepArgs, GrepTool
from qwen_lsp.agent.tools.ignore import IgnoreRules, walk_files
from qwen_lsp.files.text import looks_binary, open_text, read_head
from qwen_lsp.matching.globs import ActivationIndex

FILES = 1000
QUICK_FILES = 40
RUNS = 3
PATTERN = r"def \w+_handler\("
FILLER = "    value = compute(value, other)  # some ordinary line of code\n"


def write_tree(root: Path, files: int) -> None:
    for i in range(files):
        d = root / f"pkg{i % 40}"
        d.mkdir(exist_ok=True)
        body = FILLER * 100 + f"def route_{i}_handler(request):\n" + FILLER * 5
        (d / f"mod{i}.{'py' if i % 2 else 'ts'}").write_text(body)


def timed(fn) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return median(samples) * 1000


def texts(root: Path) -> Iterator[IO[str]]:
    """Every text file of the walk opened as the tool opens it: the part of a search that is not matching."""
    for path in walk_files(root, IgnoreRules.for_workspace(root)):
        head = read_head(path)
        if not looks_binary(head):
            with open_text(path, head) as fh:
                yield fh


def plain_read(root: Path) -> int:
    return sum(len(fh.read()) for fh in texts(root))


def re_search(root: Path, pattern: str) -> int:
    """The previous engine: Python ``re`` on every line of every file."""
    regex = re.compile(pattern, re.IGNORECASE)
    return sum(1 for fh in texts(root) for line in fh if regex.search(line.rstrip("\r\n")))


def wcmatch_glob(root: Path, pattern: str) -> int:
    flags = wc.GLOBSTAR | wc.DOTGLOB | wc.BRACE | wc.IGNORECASE | wc.EXTGLOB
    return sum(
        1 for p in walk_files(root, IgnoreRules.for_workspace(root)) if wc.globmatch(p.relative_to(root).as_posix(), pattern, flags=flags)
    )


def main(argv: list[str]) -> None:
    files = QUICK_FILES if "--quick" in argv else FILES
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        write_tree(root, files)
        ctx = ToolContext(workspace_root=root, cwd=root)
        never = threading.Event()
        grep = GrepTool()

        def search(pattern: str) -> str:
            return grep.execute_cancellable(GrepArgs(pattern=pattern), ctx, never).result.output

        assert search(PATTERN).startswith(f"Found {files} matches")
        log(f"grep_search: {files} files")
        ours = timed(lambda: search(PATTERN))
        read = timed(lambda: plain_read(root))
        old = timed(lambda: re_search(root, PATTERN))
        emit("grep_search.tree_vs_read", ours, "ms", read, files=files)
        emit("grep_search.tree_vs_re", ours, "ms", old, files=files)

        (root / "bait.txt").write_text(("a" * 60 + "!\n") * 200)
        hostile = timed(lambda: search("(a+)+$"))
        ordinary = timed(lambda: search(PATTERN))
        emit("grep_search.catastrophic", hostile, "ms", ordinary, files=files + 1)

        glob_tool = GlobTool()
        args = GlobArgs(pattern="**/*.{py,ts}")
        ours = timed(lambda: glob_tool.execute_cancellable(args, ctx, never))
        old = timed(lambda: wcmatch_glob(root, "**/*.{py,ts}"))
        emit("glob_tool.tree_vs_wcmatch", ours, "ms", old, files=files)

    name = "a" * (12 if "--quick" in argv else 16)
    index = ActivationIndex([("bomb", ["**/+(?|?)Q"])])
    ours = timed(lambda: index.match(name))
    legacy = re.compile(wc.translate("**/+(?|?)Q", flags=wc.GLOBSTAR | wc.DOTGLOB | wc.EXTGLOB | wc.FORCEUNIX | wc.CASE)[0][0])
    old = timed(lambda: legacy.fullmatch(name))
    emit("globs.exponential", ours, "ms", old, name_chars=len(name))


if __name__ == "__main__":
    main(sys.argv[1:])
