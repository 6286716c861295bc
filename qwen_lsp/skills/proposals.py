"""Proposed skills waiting for the user: a pending area outside every skills directory.

Skill review (``features/skill_review/``) may find a repeatable procedure
in a busy chat and draft a SKILL.md for it. A draft is not a skill until
the user accepts it, so it lives where no skill level looks:
``~/.qwen/projects/<sanitized root>/skill-proposals/<proposalId>/SKILL.md``
(the project's state directory, beside its chats and memory). Qwen Code
lets its review agent write into ``.qwen/skills`` and then moves new
directories aside to a pending root; writing the draft straight into the
pending area means a crash or a cancelled review can never leave a
half-reviewed skill where the model would load it.

Every draft must parse as a SKILL.md with the skills core's own parser
(as Qwen Code's ``SkillManager.parseSkillContent``) and carry a name that can be a directory: at most
:data:`MAX_NAME_CHARS` characters, no leading ``.`` (``.``/``..``/hidden),
no ``:`` (the parser allows it for namespaced skills, but it is not a
file name on Windows). Drafts are bounded (:data:`MAX_PROPOSAL_CHARS`), and
so is their number (:data:`MAX_PENDING`): a user who ignores proposals is
not buried in them.

Accepting claims ``<root>/.qwen/skills/auto-skill-<name>/`` with one
``mkdir`` (the atomic test for "no such skill yet", also against a second
editor window) — Qwen Code 0.24.4's layout for a reviewed skill
(``skillReviewAgentPlanner.ts``: the ``auto-skill-`` directory prefix, the
frontmatter ``name`` without it, ``source: auto-skill``), so its curator
and its own review treat the skill as theirs to keep up to date. A draft
without ``source: auto-skill`` is refused, as that prompt demands it.
writes the SKILL.md atomically, then removes the draft. Discarding removes
the draft and, when it was the last, the pending directory, so nothing is
left. Proposals survive a restart: :meth:`ProposalStore.pending` lists them
again. Blocking file work; callers run it on a worker thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import stat
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..errors import EngineError
from ..files.reading import atomic_write_text, read_bytes
from ..files.paths import project_state_dir
from .discovery import MANIFEST, SKILLS_DIR
from .model import SkillDefinition, SkillLevel
from .parse import normalize_content, parse_skill, split_frontmatter

log = logging.getLogger(__name__)

PENDING_DIR = "skill-proposals"
AUTO_SKILL_DIR_PREFIX = "auto-skill-"
"""Qwen Code 0.24.4's prefix of a reviewed skill's directory (``AUTO_SKILL_DIR_PREFIX``)."""
_AUTO_SKILL_SOURCE = re.compile(r"^source:\s*auto-skill\s*$", re.MULTILINE)
"""0.24.4's ``hasAutoSkillSource`` test, on the frontmatter block."""
MAX_PROPOSAL_CHARS = 20_000
"""A proposed SKILL.md; skills are instructions, a few kilobytes at most."""
MAX_NAME_CHARS = 64
MAX_PENDING = 10
"""Drafts kept waiting at once; a review is not started while this many wait."""
MAX_SCAN = 200
"""Entries of the pending directory looked at when listing (the rest is not ours)."""
_PROPOSAL_ID = re.compile(r"^[0-9a-f]{32}$")


class ProposalRefused(ValueError):
    """A draft that cannot become a proposal; the message tells the model what to fix."""


@dataclass(frozen=True)
class Proposal:
    id: str
    name: str
    description: str
    text: str
    """The whole SKILL.md as drafted."""


def skill_dir_name(name: str) -> str:
    """The directory an accepted proposal named ``name`` gets: ``auto-skill-<name>``."""
    return AUTO_SKILL_DIR_PREFIX + name


def pending_root(project_root: Path) -> Path:
    return project_state_dir(project_root) / PENDING_DIR


def check_draft(text: str, path: Path) -> SkillDefinition:
    """The draft's definition, or :class:`ProposalRefused` saying what is wrong."""
    if len(text) > MAX_PROPOSAL_CHARS:
        raise ProposalRefused(f"the SKILL.md is {len(text)} characters; a proposed skill may have at most {MAX_PROPOSAL_CHARS}")
    try:
        definition, body = parse_skill(text, path, SkillLevel.PROJECT)
    except ValueError as exc:  # SkillParseError, already worded as Qwen Code's
        raise ProposalRefused(str(exc)) from None
    name = definition.name
    if len(name) > MAX_NAME_CHARS or name.startswith(".") or ":" in name:
        raise ProposalRefused(
            f'the skill name "{name[:MAX_NAME_CHARS]}" cannot name a skill directory: use at most {MAX_NAME_CHARS} '
            "letters, digits, '_', '-' and '.', not starting with '.'"
        )
    if not body:
        raise ProposalRefused("the SKILL.md has no body: write the procedure below the frontmatter")
    return definition


class ProposalStore:
    """The pending drafts of one project and the two ways out of them (accept, discard)."""

    def __init__(self, project_root: Path, *, pending: Path | None = None) -> None:
        self._root = Path(project_root)
        self.pending_dir = pending if pending is not None else pending_root(self._root)

    @property
    def project_root(self) -> Path:
        return self._root

    @property
    def skills_dir(self) -> Path:
        """Where accepted proposals go: the project level's first provider directory."""
        return self._root / ".qwen" / SKILLS_DIR

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex

    def draft_path(self, proposal_id: str) -> Path:
        if not _PROPOSAL_ID.match(proposal_id):
            raise EngineError(f"Unknown skill proposal {proposal_id[:80]!r}: proposal ids are 32 hex digits.", kind="not_found")
        return self.pending_dir / proposal_id / MANIFEST

    # ----------------------------------------------------------------- drafting (the review's only write)
    def write_draft(self, proposal_id: str, path: Path, text: str, *, taken: Collection[str] = ()) -> None:
        """The review fork's writer: only this proposal's SKILL.md, only a valid draft with a free name.

        Raises :class:`ProposalRefused` (a ``ValueError``, which the write tool
        hands to the model as an error to fix) and writes nothing on refusal.
        ``taken`` are names of skills already loaded.
        """
        target = self.draft_path(proposal_id)
        if os.path.normpath(path) != str(target):
            raise ProposalRefused(f"a skill review writes only its proposal, {target}")
        definition = check_draft(text, target)
        if not _AUTO_SKILL_SOURCE.search(split_frontmatter(normalize_content(text))[0]):
            raise ProposalRefused("the frontmatter must include 'source: auto-skill', so later reviews may update the skill")
        name = definition.name
        if name in taken or any(os.path.lexists(self.skills_dir / d) for d in (name, skill_dir_name(name))):
            raise ProposalRefused(f'a skill named "{name}" already exists; choose a different name')
        if any(p.name == name for p in self.pending() if p.id != proposal_id):
            raise ProposalRefused(f'a skill named "{name}" is already proposed and waiting for the user; choose a different name')
        atomic_write_text(target, text)

    # ----------------------------------------------------------------- reading
    def load(self, proposal_id: str) -> Proposal:
        """One pending proposal; ``not_found`` when there is none, ``invalid_proposal`` when its draft no longer parses."""
        path = self.draft_path(proposal_id)
        try:
            raw = read_bytes(path, max_size=4 * MAX_PROPOSAL_CHARS, follow_links=False)
        except FileNotFoundError:
            raise EngineError(f"No pending skill proposal {proposal_id}: it was accepted or discarded already.", kind="not_found") from None
        except OSError as exc:
            raise EngineError(f"Skill proposal {proposal_id} cannot be read: {exc.strerror or exc}", kind="invalid_proposal") from None
        text = raw.decode("utf-8", errors="replace")
        try:
            definition = check_draft(text, path)
        except ProposalRefused as exc:
            raise EngineError(f"Skill proposal {proposal_id} is not a valid SKILL.md any more ({exc}); discard it.", kind="invalid_proposal") from None
        return Proposal(id=proposal_id, name=definition.name, description=definition.description, text=text)

    def exists(self, proposal_id: str) -> bool:
        return os.path.lexists(self.draft_path(proposal_id))

    def pending(self) -> list[Proposal]:
        """Every valid pending proposal, oldest first (drafts that no longer parse are left out)."""
        try:
            with os.scandir(self.pending_dir) as entries:
                slots = [e for _, e in zip(range(MAX_SCAN), entries, strict=False) if _PROPOSAL_ID.match(e.name) and e.is_dir(follow_symlinks=False)]
        except OSError:
            return []
        found: list[tuple[float, Proposal]] = []
        for slot in slots:
            try:
                proposal = self.load(slot.name)
                found.append((slot.stat(follow_symlinks=False).st_mtime, proposal))
            except (EngineError, OSError):
                continue
        return [p for _, p in sorted(found, key=lambda pair: pair[0])]

    # ----------------------------------------------------------------- the user's answer
    def accept(self, proposal_id: str) -> Path:
        """Make the proposal a project skill; returns its SKILL.md. Refuses to replace an existing skill."""
        proposal = self.load(proposal_id)
        skills = self.skills_dir
        real_skills = Path(os.path.realpath(skills))  # links followed as far as the path exists
        if not real_skills.is_relative_to(Path(os.path.realpath(self._root))):
            raise EngineError(
                f"{skills} leads outside the project (to {real_skills}); the proposal is not written there and stays pending."
            )
        try:
            skills.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EngineError(f"Cannot create {skills}: {exc.strerror or exc}. The proposal stays pending.") from None
        target_dir = skills / skill_dir_name(proposal.name)
        try:
            target_dir.mkdir()  # the atomic claim: fails if the skill exists, also for another window
        except FileExistsError:
            raise EngineError(
                f'A skill named "{proposal.name}" already exists at {target_dir}; it is left as it is. '
                "Remove or rename that skill and accept again, or discard the proposal.",
                kind="conflict",
            ) from None
        except OSError as exc:
            raise EngineError(f"Cannot create {target_dir}: {exc.strerror or exc}. The proposal stays pending.") from None
        target = target_dir / MANIFEST
        try:
            atomic_write_text(target, proposal.text)
        except OSError as exc:
            with contextlib.suppress(OSError):
                target_dir.rmdir()
            raise EngineError(f"Cannot write {target}: {exc.strerror or exc}. The proposal stays pending.") from None
        self._remove(proposal_id)
        return target

    def discard(self, proposal_id: str) -> None:
        """Delete the draft, leaving nothing behind; ``not_found`` when there is no such proposal."""
        if not self.exists(proposal_id):
            raise EngineError(f"No pending skill proposal {proposal_id}: it was accepted or discarded already.", kind="not_found")
        self._remove(proposal_id)

    def drop(self, proposal_id: str) -> None:
        """Remove whatever a review left in its slot (a refused or cancelled draft); nothing if there is none."""
        self._remove(proposal_id)

    def _remove(self, proposal_id: str) -> None:
        slot = self.draft_path(proposal_id).parent
        try:
            mode = os.lstat(slot).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None:
            if stat.S_ISDIR(mode):
                shutil.rmtree(slot)
            else:  # a link or file where our directory should be: remove the entry, never follow it
                os.unlink(slot)
        with contextlib.suppress(OSError):  # not empty (other proposals) or gone already
            self.pending_dir.rmdir()
        log.debug("skill proposal %s removed", proposal_id)
