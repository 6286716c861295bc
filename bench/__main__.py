"""``python -m bench [--quick] [name ...]``: run benchmark modules, each in its own interpreter.

A benchmark is any ``bench/*.py`` module other than this runner and the
shared harness. Each runs as ``python -m bench.<name>`` in a fresh process so
one benchmark's imports, caches and RSS never colour another's; its JSON
lines pass through on stdout, its progress chatter on stderr. ``--quick``
is handed to every module (the ones that know it shrink their sizes).

Exit status: 0 when every benchmark exited 0, else 1 (after running the rest).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from bench.harness import log

BENCH_DIR = Path(__file__).resolve().parent
NOT_BENCHMARKS = {"__init__", "__main__", "harness"}
ON_REQUEST = {"mutation"}
"""Run only when named (or with ``--quick``, where they check their set-up): minutes of CPU and an extra tool."""


def available() -> list[str]:
    return sorted(p.stem for p in BENCH_DIR.glob("*.py") if p.stem not in NOT_BENCHMARKS)


def run(name: str, quick: bool) -> int:
    """Run one benchmark module, streaming its stdout lines through; return its exit code."""
    command = [sys.executable, "-m", f"bench.{name}", *(["--quick"] if quick else [])]
    with subprocess.Popen(command, cwd=BENCH_DIR.parent, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
    return proc.returncode


def main(argv: list[str] | None = None) -> int:
    names = available()
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run benchmarks; JSON lines on stdout.")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test), numbers not meaningful")
    parser.add_argument("names", nargs="*", metavar="name", help=f"benchmarks to run (default: all of {', '.join(names)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in names]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(names)}")
    failed = []
    for name in args.names or [n for n in names if args.quick or n not in ON_REQUEST]:
        log(f"== {name}")
        if run(name, args.quick) != 0:
            failed.append(name)
    if failed:
        log(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
