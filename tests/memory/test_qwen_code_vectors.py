"""Parity with the Qwen Code CLI 0.24.4: its own parser, index builders and secret scanner gave these outputs.

``tests/data/memory/qwen_code_0.24.4_vectors.json`` was produced by running
the functions shipped in ``@qwen-code/qwen-code`` 0.24.4 on random
frontmatter, random document sets and random token-like text. The index cases are those whose
lines stay within 150 units; the cut past 150 (inside the link target if need be) is checked
against files the real CLI wrote in ``test_index_golden.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qwen_lsp.memory.index import build_index, build_team_index
from qwen_lsp.memory.model import MemoryDoc
from qwen_lsp.text.ignorable import without_ignorables
from qwen_lsp.memory.scan import parse_memory
from qwen_lsp.memory.secrets import scan_for_secrets

VECTORS = json.loads((Path(__file__).parent.parent / "data" / "memory" / "qwen_code_0.24.4_vectors.json").read_text("utf-8"))


def test_vectors_are_present():
    assert len(VECTORS["parse"]) == 400 and len(VECTORS["index"]) == 300
    assert sum(1 for case in VECTORS["parse"] if case["expected"]) > 100


@pytest.mark.parametrize("case", VECTORS["parse"], ids=lambda c: str(len(c["content"])))
def test_parse_matches_qwen_code(case: dict):
    parsed = parse_memory(case["content"])
    mine = None if parsed is None else [parsed.type, parsed.title, parsed.description, parsed.body]
    assert mine == case["expected"]


@pytest.mark.parametrize("case", VECTORS["index"], ids=lambda c: f"{'team' if c['team'] else 'private'}-{len(c['docs'])}")
def test_index_matches_qwen_code(case: dict):
    docs = [
        MemoryDoc(
            scope="team" if case["team"] else "project", type=d["type"], path=Path("/r") / d["relativePath"],
            relative_path=d["relativePath"], title=d["title"], description=d["description"], body="", mtime=0.0,
        )
        for d in case["docs"]
    ]
    assert (build_team_index(docs) if case["team"] else build_index(docs)) == case["index"]


@pytest.mark.parametrize("case", VECTORS["secrets"], ids=lambda c: ",".join(r for r, _ in c["expected"]) or "clean")
def test_secret_scan_matches_qwen_code(case: dict):
    """Equal to Qwen Code's answer; where NFKC or removing ignorable characters changes the text
    (``secrets.py`` scans it that way, 0.24.4 does not), at least every rule Qwen Code fires."""
    found = [[m.rule_id, m.label] for m in scan_for_secrets(case["content"])]
    if without_ignorables(case["content"]) == case["content"]:
        assert found == case["expected"]
    else:
        assert all(rule in found for rule in case["expected"])
