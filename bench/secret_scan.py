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
  ``SG.`` ids without the second dot.

Measurement (``python -m bench.secret_scan``): median of 5 runs of
``scan_for_secrets`` on 1 MB of that input; baseline the same on 100 KB.
``secret_scan.1mb_vs_100kb``: target ratio ≤ 12 (10 is linear).
``--quick`` uses 100 KB ÷ 10 KB.
"""

from __future__ import annotations

import sys
import time

from bench.harness import emit, log, median
from qwen_lsp.memory.secrets import scan_for_secrets

RUNS = 5

UNIT = (
    "sk-" + "a1-_" * 60 + " "
    + "sk-ant-" + "x" * 19 + " hf_" + "A" * 33 + " "
    + "-----BEGIN " + "RSA " * 25 + "PRIVATE KEY----- " + "Z" * 40 + " "
    + "-----END" + " ABC" * 25 + " PRIVATE KEY BLOCK----- "
    + "PRIVATE KEY " * 5
    + "xoxb-" + "1" * 12 + "-" + "2" * 9 + " AKIA" + "B" * 15 + " SG." + "c" * 22 + "x" + "d" * 43 + "\n"
)


def hostile(size: int) -> str:
    text = UNIT * (size // len(UNIT) + 1)
    return text[:size]


def timed(text: str) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        found = scan_for_secrets(text)
        samples.append(time.perf_counter() - start)
        if found:
            raise SystemExit(f"the hostile input must not match, yet {[m.rule_id for m in found]} fired")
    return median(samples)


def main() -> None:
    quick = "--quick" in sys.argv
    small, large = (10_000, 100_000) if quick else (100_000, 1_000_000)
    scan_for_secrets("warm-up")
    log(f"secret_scan: {small} vs {large} characters of hostile input")
    base = timed(hostile(small))
    value = timed(hostile(large))
    emit("secret_scan.1mb_vs_100kb", value, "s", base, small_chars=small, large_chars=large, target_ratio=12)


if __name__ == "__main__":
    main()
