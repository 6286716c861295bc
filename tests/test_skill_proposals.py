"""The pending-proposals store and the review gate, with plain objects (no server, no model)."""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from qwen_lsp.agent.permissions import Decision
from qwen_lsp.features.skill_review.fork import skill_review_rule
from qwen_lsp.errors import EngineError
from qwen_lsp.protocol import SkillProposed
from qwen_lsp.skills.parse import parse_skill
from qwen_lsp.skills.model import SkillLevel
from qwen_lsp.skills.proposals import MAX_PENDING, MAX_PROPOSAL_CHARS, ProposalRefused, ProposalStore
from qwen_lsp.features.skill_review.reviewer import AUTO_SKILL_THRESHOLD, ReviewReport, SkillReviewer, ToolCallCount

SKILL = "---\nname: release-notes\ndescription: Draft release notes from merged PRs\nsource: auto-skill\n---\n\n1. List merged PRs.\n2. Group them.\n"


def skill_text(name: str = "release-notes", description: str = "Draft release notes") -> str:
    return f"---\nname: {name}\ndescription: {description}\nsource: auto-skill\n---\nSteps.\n"


def tree(root: Path) -> dict[str, bytes] | None:
    """Every file under ``root`` with its bytes (None when ``root`` does not exist)."""
    if not root.exists():
        return None
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} | {
        str(p.relative_to(root)) + "/": b"" for p in sorted(root.rglob("*")) if p.is_dir()
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def store(project: Path, tmp_path: Path) -> ProposalStore:
    return ProposalStore(project, pending=tmp_path / "state" / "skill-proposals")


def draft(store: ProposalStore, text: str = SKILL, **kw: Any) -> str:
    pid = store.new_id()
    store.write_draft(pid, store.draft_path(pid), text, **kw)
    return pid


# ----------------------------------------------------------------- drafts


def test_a_valid_draft_is_pending_and_parses_as_a_skill(store: ProposalStore) -> None:
    pid = draft(store)
    proposal = store.load(pid)
    assert (proposal.name, proposal.description, proposal.text) == ("release-notes", "Draft release notes from merged PRs", SKILL)
    definition, body = parse_skill(proposal.text, store.draft_path(pid), SkillLevel.PROJECT)
    assert definition.name == "release-notes" and body.startswith("1. List merged PRs.")
    assert [p.id for p in store.pending()] == [pid]
    assert [p.id for p in ProposalStore(store.project_root, pending=store.pending_dir).pending()] == [pid]  # a restart lists it again


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("just prose, no frontmatter", "missing YAML frontmatter"),
        ("---\nname: x\n---\nbody\n", 'Missing "description"'),
        ("---\nname: a b\ndescription: d\n---\nbody\n", '"name" must match'),
        (skill_text(name="ns:pdf"), "cannot name a skill directory"),
        (skill_text(name=".."), "cannot name a skill directory"),
        (skill_text(name="x" * 65), "cannot name a skill directory"),
        ("---\nname: x\ndescription: d\n---\n   \n", "no body"),
        (skill_text() + "x" * MAX_PROPOSAL_CHARS, f"at most {MAX_PROPOSAL_CHARS}"),
    ],
)
def test_an_invalid_draft_is_refused_and_nothing_is_written(store: ProposalStore, text: str, why: str) -> None:
    pid = store.new_id()
    with pytest.raises(ProposalRefused, match=why.replace("(", r"\(")):
        store.write_draft(pid, store.draft_path(pid), text)
    assert tree(store.pending_dir) is None


def test_a_draft_goes_only_to_its_own_slot_and_never_takes_a_used_name(store: ProposalStore, project: Path) -> None:
    pid = store.new_id()
    with pytest.raises(ProposalRefused, match="writes only its proposal"):
        store.write_draft(pid, project / "SKILL.md", SKILL)
    with pytest.raises(ProposalRefused, match="already exists"):
        store.write_draft(pid, store.draft_path(pid), SKILL, taken=["release-notes"])
    (project / ".qwen" / "skills" / "release-notes").mkdir(parents=True)
    with pytest.raises(ProposalRefused, match="already exists"):
        store.write_draft(pid, store.draft_path(pid), SKILL)
    first = draft(store, skill_text(name="other"))
    with pytest.raises(ProposalRefused, match="already proposed"):
        store.write_draft(pid, store.draft_path(pid), skill_text(name="other"))
    assert [p.id for p in store.pending()] == [first] and not (project / "SKILL.md").exists()
    with pytest.raises(EngineError) as bad:
        store.draft_path("../../etc")
    assert bad.value.kind == "not_found"


def test_a_draft_must_say_source_auto_skill_and_may_not_take_an_auto_skill_directory(store: ProposalStore, project: Path) -> None:
    """As Qwen Code 0.24.4's review prompt: ``source: auto-skill`` in the frontmatter; ``auto-skill-<name>`` is the skill's directory."""
    pid = store.new_id()
    with pytest.raises(ProposalRefused, match="source: auto-skill"):
        store.write_draft(pid, store.draft_path(pid), "---\nname: release-notes\ndescription: d\n---\nSteps.\n")
    (project / ".qwen" / "skills" / "auto-skill-release-notes").mkdir(parents=True)  # the CLI's review made it
    with pytest.raises(ProposalRefused, match="already exists"):
        store.write_draft(pid, store.draft_path(pid), SKILL)
    assert tree(store.pending_dir) is None


# ----------------------------------------------------------------- accept and discard


def test_accept_makes_a_project_skill_and_empties_the_pending_area(store: ProposalStore, project: Path) -> None:
    pid = draft(store)
    path = store.accept(pid)
    assert path == project / ".qwen" / "skills" / "auto-skill-release-notes" / "SKILL.md"  # Qwen Code 0.24.4's layout
    assert path.read_text() == SKILL
    assert tree(store.pending_dir) is None
    with pytest.raises(EngineError) as again:
        store.accept(pid)
    assert again.value.kind == "not_found" and "accepted or discarded" in again.value.message


def test_accept_never_replaces_an_existing_skill(store: ProposalStore, project: Path) -> None:
    pid = draft(store)
    existing = project / ".qwen" / "skills" / "auto-skill-release-notes"
    existing.mkdir(parents=True)
    (existing / "SKILL.md").write_text("mine\n")  # appeared after the draft was written
    with pytest.raises(EngineError) as clash:
        store.accept(pid)
    assert clash.value.kind == "conflict" and "already exists" in clash.value.message
    assert (existing / "SKILL.md").read_text() == "mine\n"
    assert store.load(pid).text == SKILL  # still pending


def test_accept_refuses_a_skills_directory_that_leads_outside_the_project(store: ProposalStore, project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".qwen").mkdir()
    os.symlink(elsewhere, project / ".qwen" / "skills")
    pid = draft(store)
    with pytest.raises(EngineError, match="leads outside the project"):
        store.accept(pid)
    assert list(elsewhere.iterdir()) == [] and store.exists(pid)
    os.unlink(project / ".qwen" / "skills")
    os.symlink(elsewhere, project / ".qwen" / "linked")
    (project / ".qwen").rename(project / "dot-qwen")
    os.symlink(project / "dot-qwen" / "linked", project / ".qwen")  # .qwen itself leads out: nothing is created there
    with pytest.raises(EngineError, match="leads outside the project"):
        store.accept(pid)
    assert list(elsewhere.iterdir()) == [] and store.exists(pid)


def test_discard_leaves_nothing(store: ProposalStore, project: Path) -> None:
    before = (tree(store.pending_dir), tree(project))
    pid = draft(store)
    store.discard(pid)
    assert (tree(store.pending_dir), tree(project)) == before
    with pytest.raises(EngineError) as gone:
        store.discard(pid)
    assert gone.value.kind == "not_found"


def test_discard_keeps_the_other_proposals(store: ProposalStore) -> None:
    one, two = draft(store), draft(store, skill_text(name="two"))
    store.discard(one)
    assert [p.id for p in store.pending()] == [two]


# ----------------------------------------------------------------- the permission rule


def test_the_review_may_write_only_its_proposal(tmp_path: Path) -> None:
    target = tmp_path / "pending" / "a" / "SKILL.md"
    rule = skill_review_rule(target)
    assert rule("write_file", {"file_path": str(target)}).decision is Decision.ALLOW
    assert rule("write_file", {"file_path": str(tmp_path / "pending" / "a" / ".." / "a" / "SKILL.md")}).decision is Decision.ALLOW
    for args in ({"file_path": str(tmp_path / "ws" / "x.md")}, {"file_path": "SKILL.md"}, {"content": "x"}, {"file_path": str(target) + "\x00"}):
        assert rule("write_file", args).decision is Decision.DENY
    link = tmp_path / "link"
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", link)
    assert rule("write_file", {"file_path": str(link / "SKILL.md")}).decision is Decision.DENY
    for tool in ("edit", "run_shell_command", "save_memory", "skill"):
        verdict = rule(tool, {"file_path": str(target), "command": "ls"})
        assert verdict.decision is Decision.DENY and "ManagedSkillReview" in verdict.rule
    assert rule("read_file", {"file_path": "/etc/passwd"}).decision is Decision.DEFAULT  # the read tools confine themselves


# ----------------------------------------------------------------- the gate


class ScriptedRunner:
    """A stand-in for the fork: what its model would do is a plain function of the target."""

    def __init__(self, act: Any = None, status: str = "completed", wait: bool = False) -> None:
        self.act = act
        self.status = status
        self.wait = wait
        self.calls: list[tuple[Any, str, Path]] = []

    async def __call__(self, parent: Any, task: str, *, target: Path, write: Any, max_turns: int, max_seconds: float, cancel: asyncio.Event) -> ReviewReport:
        self.calls.append((parent, task, target))
        if self.act is not None:
            try:
                self.act(write, target)
            except ValueError:
                pass  # the model would see the refusal as a tool error
        if self.wait:
            await cancel.wait()
            return ReviewReport(status="cancelled", reason="cancelled")
        return ReviewReport(status=self.status)  # type: ignore[arg-type]


def reviewer(store: ProposalStore, runner: ScriptedRunner, proposed: list[SkillProposed], enabled: list[bool] | None = None) -> SkillReviewer:
    switch = enabled if enabled is not None else [True]
    return SkillReviewer(store, runner, enabled=lambda: switch[0], existing_names=lambda: ["bundled-one"], on_proposed=proposed.append)


async def settle(r: SkillReviewer) -> None:
    if r.running is not None:
        await r.running


async def test_twenty_tool_calls_across_turns_start_one_review_that_proposes(store: ProposalStore) -> None:
    runner = ScriptedRunner(act=lambda write, target: write(target, SKILL))
    proposed: list[SkillProposed] = []
    r = reviewer(store, runner, proposed)
    chat: defaultdict[str, ToolCallCount] = defaultdict(ToolCallCount)
    r.after_turn(chat["s"], tool_calls=12, written=[], capture=lambda: "parent-1")
    r.after_turn(chat["other"], tool_calls=AUTO_SKILL_THRESHOLD - 1, written=[], capture=lambda: "parent-x")
    assert r.running is None and runner.calls == []  # 12 and 19: below the threshold, counted per chat
    r.after_turn(chat["s"], tool_calls=8, written=[], capture=lambda: "parent-2")
    await settle(r)
    [(parent, task, target)] = runner.calls
    assert parent == "parent-2" and str(target) in task and "bundled-one" in task and "Nothing to save." in task
    [proposal] = proposed
    assert (proposal.name, proposal.text) == ("release-notes", SKILL) and store.draft_path(proposal.proposal_id) == target
    r.after_turn(chat["s"], tool_calls=AUTO_SKILL_THRESHOLD - 1, written=[], capture=lambda: "parent-3")
    assert len(runner.calls) == 1  # the counter started over at the review


async def test_no_second_review_while_one_runs_and_the_crossing_is_spent(store: ProposalStore) -> None:
    runner = ScriptedRunner(wait=True)
    r = reviewer(store, runner, [])
    chat: defaultdict[str, ToolCallCount] = defaultdict(ToolCallCount)
    r.after_turn(chat["a"], tool_calls=AUTO_SKILL_THRESHOLD, written=[], capture=lambda: "p")
    first = r.running
    while not runner.calls:  # the review checks the pending area on a worker thread first
        await asyncio.sleep(0.01)
    r.after_turn(chat["b"], tool_calls=AUTO_SKILL_THRESHOLD + 5, written=[], capture=lambda: "q")
    assert r.running is first and len(runner.calls) == 1
    await r.drain()  # cancels the running one
    assert first is not None and first.result() is None
    r.after_turn(chat["b"], tool_calls=1, written=[], capture=lambda: "q")
    assert len(runner.calls) == 1  # b's crossing was spent while the first review ran
    assert tree(store.pending_dir) is None


async def test_a_review_that_writes_nothing_or_fails_leaves_nothing(store: ProposalStore, project: Path) -> None:
    proposed: list[SkillProposed] = []
    for runner in (
        ScriptedRunner(),  # "Nothing to save."
        ScriptedRunner(act=lambda write, target: write(target, "no frontmatter")),
        ScriptedRunner(act=lambda write, target: write(project / "SKILL.md", SKILL)),
        ScriptedRunner(act=lambda write, target: write(target, SKILL), status="failed"),  # timed out after writing
    ):
        r = reviewer(store, runner, proposed)
        chat: defaultdict[str, ToolCallCount] = defaultdict(ToolCallCount)
        r.after_turn(chat["s"], tool_calls=AUTO_SKILL_THRESHOLD, written=[], capture=lambda: "p")
        await settle(r)
        assert len(runner.calls) == 1
    assert proposed == [] and tree(store.pending_dir) is None and tree(project) == {}


async def test_off_means_no_review_and_a_chat_that_wrote_a_skill_is_not_reviewed(store: ProposalStore, project: Path) -> None:
    runner = ScriptedRunner(act=lambda write, target: write(target, SKILL))
    switch = [False]
    r = reviewer(store, runner, [], switch)
    chat: defaultdict[str, ToolCallCount] = defaultdict(ToolCallCount)
    r.after_turn(chat["s"], tool_calls=AUTO_SKILL_THRESHOLD * 2, written=[], capture=lambda: "p")
    assert r.running is None
    switch[0] = True  # takes effect at the next turn; what was counted while off does not count
    r.after_turn(chat["s"], tool_calls=AUTO_SKILL_THRESHOLD, written=[str(project / ".agents" / "skills" / "mine" / "SKILL.md")], capture=lambda: "p")
    assert r.running is None
    r.after_turn(chat["s"], tool_calls=0, written=[], capture=lambda: "p")
    await settle(r)
    assert len(runner.calls) == 1


async def test_no_review_while_the_pending_area_is_full(store: ProposalStore) -> None:
    for i in range(MAX_PENDING):
        draft(store, skill_text(name=f"s{i}"))
    runner = ScriptedRunner()
    r = reviewer(store, runner, [])
    chat: defaultdict[str, ToolCallCount] = defaultdict(ToolCallCount)
    r.after_turn(chat["s"], tool_calls=AUTO_SKILL_THRESHOLD, written=[], capture=lambda: "p")
    await settle(r)
    assert runner.calls == []
