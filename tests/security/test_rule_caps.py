"""Rules are capped per context build, as imports are.

2,000 rule files of 10 KB made a 21.8 MB request, stalled the loop for
seconds and peaked at over 450 MB. Now one build reads at most 1,000 rule
files and 1 MiB of them, names what it left out, and the server answers.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, running_server
from qwen_lsp.context.rule_budget import MAX_RULE_BYTES, MAX_RULE_FILES, RuleBudget, collect_md
from qwen_lsp.context.rules import load_rules_dir
from qwen_lsp.context.text import Problem

from .deep_tree import deep_tree

RULE = "Always follow rule {i}. " + "x" * (10 * 1024 - 40) + "\n"


def many_rules(rules_dir: Path, count: int) -> None:
    rules_dir.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (rules_dir / f"r{i:04d}.md").write_text(RULE.replace("{i}", str(i)))


def test_the_budget_stops_reading_and_names_what_it_left_out(tmp_path: Path) -> None:
    many_rules(tmp_path / ".qwen" / "rules", 2000)
    problems: list[Problem] = []
    rules, watched = load_rules_dir(str(tmp_path / ".qwen" / "rules"), problems)
    assert sum(len(r.content.encode()) for r in rules) <= MAX_RULE_BYTES
    assert 90 <= len(rules) <= MAX_RULE_FILES and len(watched) == len(rules)
    (left,) = [p for p in problems if "left out" in p.message]
    assert left.message.startswith(f"{2000 - len(rules)} rule file(s) left out") and "r0102.md" in left.message


def test_many_tiny_rules_stop_at_the_file_count(tmp_path: Path) -> None:
    rules_dir = tmp_path / ".qwen" / "rules"
    rules_dir.mkdir(parents=True)
    for i in range(MAX_RULE_FILES + 5):
        (rules_dir / f"t{i:05d}.md").write_text(f"rule {i}\n")
    problems: list[Problem] = []
    rules, _ = load_rules_dir(str(rules_dir), problems)
    assert len(rules) == MAX_RULE_FILES and any("5 rule file(s) left out" in p.message for p in problems)


def test_the_rule_walk_survives_a_tree_nested_1100_deep(tmp_path: Path) -> None:
    rules_dir = tmp_path / ".qwen" / "rules"
    with deep_tree(rules_dir) as deep:
        (deep / "deep.md").write_text("deep rule\n")
        (rules_dir / "top.md").write_text("top rule\n")
        found = collect_md(str(rules_dir), RuleBudget())
    assert sorted(Path(p).name for p in found) == ["deep.md", "top.md"]


async def test_two_thousand_rules_keep_the_request_bounded_and_the_server_answers(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    many_rules(ws / ".qwen" / "rules", 2000)
    scripted.enqueue(Reply(chunks=["answered"]), Reply(chunks=["again"]))
    async with running_server(home, ws, scripted.base_url) as client:
        assert as_dict(await chat(client, "hi"))["text"] == "answered"
        assert "skills" in as_dict(await client.protocol.send_request_async("qwen/skills/list", {}))
        assert as_dict(await chat(client, "hi again"))["text"] == "again"
        context = as_dict(await client.protocol.send_request_async("qwen/context", {}))
    body = scripted.chat_requests()[0].raw
    assert len(body) < 2 * MAX_RULE_BYTES, len(body)
    assert "left out" in json.dumps(context)
