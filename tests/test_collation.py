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


def test_folder_listing_leaves_out_symlinks_as_qwen_code(tmp_path: Path):
    """As the 0.24.4 CLI lists a folder (checked by running it): links to files and to folders are not shown."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.txt").write_text("y")
    (tmp_path / "AGENTS.md").write_text("x")
    (tmp_path / "QWEN.md").symlink_to("AGENTS.md")
    (tmp_path / "linkdir").symlink_to("real")
    (tmp_path / "dangling").symlink_to("nowhere")
    lines = folder_structure(str(tmp_path)).splitlines()
    assert [line for line in lines if line.startswith(("├", "└", " "))] == ["├───AGENTS.md", "└───real/", "    └───f.txt"]


def test_ascii_names_get_pyucas_own_keys_without_its_table():
    """The ASCII shortcut must give the very key pyuca gives, so ASCII and other names still sort together."""
    import random
    import string

    from pyuca import Collator

    from qwen_lsp.text.collation import _ascii_sort_key

    collator = Collator()
    for code in range(128):
        assert _ascii_sort_key(chr(code)) == collator.sort_key(chr(code)), code
    rng = random.Random(23)
    alphabet = string.printable + "\x00\x01\x7f"
    for _ in range(3000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 16)))
        assert _ascii_sort_key(name) == collator.sort_key(name), repr(name)


def test_ascii_and_accented_names_sort_together():
    names = ["resume", "résumé", "Resume", "rest", "résume", "re_sume"]
    assert sorted(names, key=locale_key) == ["re_sume", "rest", "resume", "Resume", "résume", "résumé"]
