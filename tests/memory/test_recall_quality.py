"""Heuristic recall quality on a labelled set (Qwen Code's own bar: Recall@5 ≥ 0.9, top-1 ≥ 0.85, silence on no-result).

The set (``data/recall_eval.json``) was written as a developer would fill a
memory store — conventions, preferences, project facts, pointers; English,
Chinese, Japanese, Korean, accented French/Spanish, full-width text — and the
queries as they would ask, before the scorer was run on it. The scorer
matches tokens as substrings (``recall.ts``), so a "no-result" query is one whose
words are about something the store does not hold at all.

Every document gets the same mtime: recency must not decide quality here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qwen_lsp.memory.heuristic import rank
from qwen_lsp.memory.model import MemoryDoc

DATA = Path(__file__).parent / "data" / "recall_eval.json"
RECALL_AT = 5


def load() -> tuple[list[MemoryDoc], list[dict[str, Any]]]:
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    docs = [
        MemoryDoc(
            scope="project",
            type=d["type"],
            path=Path("/memory") / d["type"] / f"{d['id']}.md",
            relative_path=f"{d['type']}/{d['id']}.md",
            title=d["title"],
            description=d["description"],
            body=d["body"],
            mtime=1.0,
        )
        for d in raw["docs"]
    ]
    return docs, raw["cases"]


def evaluate() -> dict[str, Any]:
    docs, cases = load()
    recall_sum = top1_hits = top1_cases = answerable = silent_ok = no_result = max_selected = 0.0
    misses: list[str] = []
    for case in cases:
        selected = [d.path.stem for d in rank(case["query"], docs, RECALL_AT)]
        max_selected = max(max_selected, len(selected))
        relevant = case["relevantIds"]
        if relevant:
            answerable += 1
            recall_sum += sum(1 for r in relevant if r in selected) / len(relevant)
            top1_cases += 1
            if selected[:1] == [case["expectedTopId"]]:
                top1_hits += 1
            else:
                misses.append(f"{case['id']}: top {selected[:1]} want {case['expectedTopId']}")
        else:
            no_result += 1
            if not selected:
                silent_ok += 1
            else:
                misses.append(f"{case['id']}: expected nothing, got {selected}")
    return {
        "docs": len(docs),
        "cases": len(cases),
        "recall_at_5": recall_sum / answerable,
        "top1": top1_hits / top1_cases,
        "no_result_cases": no_result,
        "no_result_silent": silent_ok / no_result,
        "max_selected": max_selected,
        "misses": misses,
    }


def test_the_set_is_big_and_varied_enough() -> None:
    docs, cases = load()
    assert len(docs) >= 60 and len(cases) >= 60
    assert len({d.path for d in docs}) == len(docs)
    assert sum(1 for c in cases if not c["relevantIds"]) >= 15
    assert {"chinese", "japanese", "korean", "mixed", "accents", "nfkc", "no-result"} <= {c["category"] for c in cases}
    ids = {d.path.stem for d in docs}
    assert all(set(c["relevantIds"]) <= ids for c in cases)


def test_heuristic_recall_meets_the_bar() -> None:
    figures = evaluate()
    print({k: v for k, v in figures.items() if k != "misses"}, *figures["misses"], sep="\n")
    assert figures["recall_at_5"] >= 0.9, figures["misses"]
    assert figures["top1"] >= 0.85, figures["misses"]
    assert figures["max_selected"] <= RECALL_AT


def test_queries_about_nothing_stored_find_nothing() -> None:
    figures = evaluate()
    assert figures["no_result_silent"] == 1.0, [m for m in figures["misses"] if "expected nothing" in m]
