"""How the team-memory secret scanner scales on hostile input: 1 MB ÷ 100 KB.

A scanner that backtracks shows it as a ratio far above 10 when the input
grows tenfold (Qwen Code's unbounded ``sk-…{20,}T3BlbkFJ{20,}`` rule was
O(n²)). The input is built to make every rule work hard without matching:

* ``sk-`` followed by long runs of key characters and no ``T3BlbkFJ``
  (the former ReDoS of the OpenAI rule), ``sk-ant-`` / ``hf_`` prefixes;
* PEM headers with no footer and footers with no header, ``PRIVATE KEY``
  cores with label runs of 100 characters (the private-key rule's bounded
  look-behind and look-ahead);
* ``xoxb-`` digit runs one short of a token, ``AKIA`` runs one short,
  ``SG.`` ids without the second dot;
* valid PEM footers in the first half and valid headers in the second:
  no pair matches, but the private-key check has to weigh every one.

Measurement (``python -m bench.secret_scan``): median CPU time of the
scanning thread (``time.thread_time``) over 9 runs of ``scan_for_secrets``
on 1 MB of that input; baseline the same on 100 KB, the two sizes
interleaved run by run. CPU time, not wall time: on a shared machine a
40 ms scan is preempted far more often than a 2 ms one, which inflates a
wall-clock ratio (1 MB ÷ 100 KB measured 20+ under a load of 7 while the
CPU ratio stayed near 10); the wall medians are printed alongside as
``wall_ms`` / ``wall_baseline_ms``.
``secret_scan.1mb_vs_100kb``: target ratio ≤ 12 (10 is linear).
``--quick`` uses 100 KB ÷ 10 KB.
"""

from __future__ import annotations

import sys
import time

from bench.harness import emit, log, median
from qwen_lsp.memory.secrets import scan_for_secrets

RUNS = 9

NEAR_MISS = (
    "sk-" + "a1-_" * 60 + " "
    + "sk-ant-" + "x" * 19 + " hf_" + "A" * 33 + " "
    + "-----BEGIN " + "RSA " * 25 + "PRIVATE KEY----- " + "Z" * 40 + " "
    + "-----END" + " ABC" * 25 + " PRIVATE KEY BLOCK----- "
    + "PRIVATE KEY " * 5
    + "xoxb-" + "1" * 12 + "-" + "2" * 9 + " AKIA" + "B" * 15 + " SG." + "c" * 22 + "x" + "d" * 43 + "\n"
)
FOOTERS = NEAR_MISS + "-----END EC PRIVATE KEY----- -----end private key block-----\n"
HEADERS = NEAR_MISS + "-----BEGIN EC PRIVATE KEY----- -----begin private key block-----\n"


def hostile(size: int) -> str:
    """Near misses throughout; valid PEM footers in the first half, valid headers in the second.

    Every footer precedes every header, so nothing matches, yet the
    private-key check must classify every header and footer and compare
    their positions — its slowest path.
    """
    half = size // 2
    text = (FOOTERS * (half // len(FOOTERS) + 1))[:half] + (HEADERS * (half // len(HEADERS) + 1))
    return text[:size]


def scan_ms(text: str) -> tuple[float, float]:
    """(CPU ms of this thread, wall ms) for one scan; ms, so the harness's 6-decimal rounding keeps the ratio exact."""
    cpu, wall = time.thread_time(), time.perf_counter()
    found = scan_for_secrets(text)
    cpu, wall = (time.thread_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000
    if found:
        raise SystemExit(f"the hostile input must not match, yet {[m.rule_id for m in found]} fired")
    return cpu, wall


def main() -> None:
    quick = "--quick" in sys.argv
    small, large = (10_000, 100_000) if quick else (100_000, 1_000_000)
    scan_for_secrets("warm-up")
    log(f"secret_scan: {small} vs {large} characters of hostile input")
    small_text, large_text = hostile(small), hostile(large)
    small_runs: list[tuple[float, float]] = []
    large_runs: list[tuple[float, float]] = []
    for _ in range(RUNS):  # interleaved, so both sizes see the same machine load
        small_runs.append(scan_ms(small_text))
        large_runs.append(scan_ms(large_text))
    base, value = median([cpu for cpu, _ in small_runs]), median([cpu for cpu, _ in large_runs])
    wall_small, wall_large = median([w for _, w in small_runs]), median([w for _, w in large_runs])
    emit(
        "secret_scan.1mb_vs_100kb", value, "ms", base,
        small_chars=small, large_chars=large, target_ratio=12,
        wall_ms=round(wall_large, 3), wall_baseline_ms=round(wall_small, 3),
    )


if __name__ == "__main__":
    main()
