"""Every benchmark runs through ``python -m bench`` in ``--quick`` mode and prints well-formed JSON lines.

No timing is asserted: the numbers of a quick run mean nothing. What is
checked is the contract a reader of the results relies on — one JSON object
per stdout line with the harness fields, a ``ratio`` that is value/baseline,
and the result names each benchmark promises.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
HARNESS_FIELDS = {"name", "value", "unit", "baseline", "ratio"}
PROMISED = {
    "big_repo": {"big_repo.300.initialize_ms", "big_repo.300.first_chat_ms", "big_repo.300.loop_worst_ms", "big_repo.300.rss_mb"},
    "chat_to_request": {"chat_to_request.warm_ms", "chat_to_request.warm_20k_ms"},  # oneshot_ms only where `qwen` is installed
    "kill_campaign": {"kill_campaign.failures", "kill_campaign.seconds_per_kill"},
    "loop_stall": {"loop_stall_cold_turn_ms"},
    "microcompact": {"microcompact", "microcompact_size"},
    "token_count_incremental": {"token_count_incremental"},
    "context_assembly": {"context_assembly_cold", "context_assembly_warm"},
    "grep_search": {
        "grep_search.tree_vs_read",
        "grep_search.tree_vs_re",
        "grep_search.catastrophic",
        "glob_tool.tree_vs_wcmatch",
        "globs.exponential",
    },
    "secret_scan": {"secret_scan.1mb_vs_100kb"},
    "mutation": {"mutation.setup"},
    "recall_heuristic": {"recall_heuristic.query_p50_ms", "recall_heuristic.query_p99_ms", "recall_heuristic.cold_query_ms"},
    "sessions_list": {"sessions_list.cold_ms", "sessions_list.vs_whole_parse", "sessions_list.warm_ms"},
    "skill_activation": {"skill_activation.decide_p50", "skill_activation.decide_p99", "skill_activation.refresh_one_change"},
    "streaming_overhead": {
        "streaming_overhead_p50_ms",
        "streaming_overhead_p99_ms",
        "streaming_latency_p50_ms",
        "streaming_latency_p99_ms",
        "streaming_coalescing",
    },
    "didopen_burst": {"didopen_burst_drain_ms"},
    "setup_loop_hold": {
        "setup_loop_hold.open_ms",
        "setup_loop_hold.open_cpu_ms",
        "setup_loop_hold.reenable_skills_ms",
        "setup_loop_hold.reenable_skills_cpu_ms",
        "setup_loop_hold.start_watching_ms",
        "setup_loop_hold.start_watching_cpu_ms",
    },
    "soak": {"soak_rss_mb", "soak_rss_growth_per_100_turns_mb"},
    "load_streams": {"load_streams_overhead_p50_ms", "load_streams_overhead_p99_ms", "load_streams_rss_mb", "load_streams_coalescing"},
    "server_startup": {
        "server_startup_initialize_ms",
        "server_startup_vs_bare_pygls_ms",
        "server_rss_after_turn_mb",
        "memory.pygls",
        "memory.handlers",
        "memory.tokenizer",
    },
}


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench", *args], check=False, cwd=REPO, capture_output=True, text=True, timeout=120)


PARALLEL = 2
"""Quick runs at a time: one per core of the machines the suite runs on. Started all at once, 16 of
them starved each other on 2 cores (a quick run took minutes under load and hit its limit)."""
QUICK_RUN_LIMIT = 600
"""Seconds one quick run may take before it counts as hung (a hang detector, not a speed check)."""


@pytest.fixture(scope="module")
def quick_runs() -> dict[str, tuple[int, str, str]]:
    """``python -m bench <name> --quick`` for every benchmark, ``PARALLEL`` at a time."""

    def run(name: str) -> tuple[int, str, str]:
        try:
            done = subprocess.run([sys.executable, "-m", "bench", name, "--quick"], cwd=REPO, text=True, capture_output=True, timeout=QUICK_RUN_LIMIT)
        except subprocess.TimeoutExpired as exc:
            return -1, "", f"no result after {QUICK_RUN_LIMIT} s: {exc}"
        return done.returncode, done.stdout, done.stderr

    names = sorted(PROMISED)
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        return dict(zip(names, pool.map(run, names), strict=True))


def rows_of(stdout: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in stdout.splitlines()]
    assert all(isinstance(r, dict) for r in rows)
    return rows


@pytest.mark.timeout(3600)  # the first test also waits for every quick run (the module fixture)
@pytest.mark.parametrize("name", sorted(PROMISED))
def test_benchmark_quick_run_prints_harness_lines(quick_runs, name: str):
    returncode, stdout, stderr = quick_runs[name]
    assert returncode == 0, stderr[-3000:]
    rows = rows_of(stdout)
    assert {r["name"] for r in rows} >= PROMISED[name]
    for row in rows:
        assert HARNESS_FIELDS <= row.keys(), row
        assert isinstance(row["value"], (int, float)) and isinstance(row["unit"], str) and row["unit"]
        assert "load_average" in row, row  # every result says how busy the machine was
        if row["baseline"]:
            assert row["ratio"] == pytest.approx(row["value"] / row["baseline"], rel=1e-3, abs=1e-4)
        else:
            assert row["ratio"] is None


def test_every_benchmark_module_is_covered_here():
    listed = {p.stem for p in (REPO / "bench").glob("*.py")} - {"__init__", "__main__", "harness"}
    assert listed == set(PROMISED)


def test_unknown_benchmark_is_refused_with_the_list():
    done = run_bench("no_such_bench")
    assert done.returncode == 2
    assert "no_such_bench" in done.stderr and "streaming_overhead" in done.stderr
    assert done.stdout == ""
