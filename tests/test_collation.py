"""Names sort as Qwen Code's ``localeCompare`` sorts them (expected orders captured from Node)."""

from __future__ import annotations

import json
from pathlib import Path

from qwen_lsp.text.collation import locale_key
from qwen_lsp.context.environment import folder_structure
from qwen_lsp.skills.listing import SkillEntry, render_available_skills_block

DATA = Path(__file__).parent / "data" / "collation" / "node_localecompare.json"


def test_matches_node_localecompare_on_tricky_names():
    data = json.loads(DATA.read_text(encoding="utf-8"))
    assert sorted(data["input"], key=locale_key) == data["expected"]


def test_underscore_dash_dot_digits_letters_then_accents_and_case():
    names = ["b", "a.b", "a-b", "a_b", "a1", "ab", "á", "A", "a"]
    assert sorted(names, key=locale_key) == ["a", "A", "á", "a_b", "a-b", "a.b", "a1", "ab", "b"]


def test_folder_listing_orders_as_qwen_code(tmp_path: Path):
    for name in ["load.rs", "load_batch.rs", "test_output.log", "test_output_latest.log", "Zeta.md", "alpha.md"]:
        (tmp_path / name).write_text("x")
    listing = folder_structure(str(tmp_path))
    order = [line.split()[-1].lstrip("├└─") for line in listing.splitlines() if line.rstrip().endswith((".rs", ".log", ".md"))]
    assert order == ["alpha.md", "load_batch.rs", "load.rs", "test_output_latest.log", "test_output.log", "Zeta.md"]


def test_skills_listing_orders_as_qwen_code():
    entries = [SkillEntry(name=n, description="d", level="project") for n in ["run.tests", "run_tests", "Run-tests", "run"]]
    block = render_available_skills_block(entries)
    shown = [line for line in block.splitlines() if line.lower().startswith("run")]
    assert shown == ["run", "run_tests", "Run-tests", "run.tests"]
