"""The kill -9 campaign (``campaign.py``): 50 kills over turns, edits, extractions, dreams and compressions.

The counters are printed (``pytest -s`` shows them; docs/reliability.md
keeps the last figures) and every failure counter must be zero.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliability.campaign import SCENARIOS, run_campaign

KILLS = 50
SEED = 15


@pytest.mark.timeout(900)  # a hang detector: about a minute on an idle 2-core machine, several when it is shared
async def test_fifty_kills_lose_nothing_and_every_session_resumes(tmp_path: Path) -> None:
    counters = await run_campaign(tmp_path, kills=KILLS, seed=SEED)
    report = counters.as_dict()
    failures = report.pop("failures")
    print("kill campaign:", json.dumps(report))
    assert counters.kills == KILLS and set(counters.by_scenario) == set(SCENARIOS)
    assert counters.records_checked > 0 and counters.memory_files_checked > 0 and counters.sessions_resumed > 0
    assert (
        counters.unreadable_records,
        counters.half_written_memories,
        counters.index_mismatches,
        counters.stale_locks,
        counters.unresumable_sessions,
        counters.unsendable_sessions,
    ) == (0, 0, 0, 0, 0, 0), failures
