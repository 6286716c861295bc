"""The system prompt's auto-memory block (Qwen Code's ``buildManagedAutoMemoryPrompt``, ``memory/prompt.ts``).

It teaches the model the memory protocol — where each scope's directory is,
the four memory types and which scope each belongs in, what never to save,
the two-step save (a file with ``name`` / ``description`` / ``type``
frontmatter, then one index line), when to read memory and how far to trust
it — and then shows each scope's ``MEMORY.md`` index, the part of memory that
is always in context. The prose is ours; the structure, the scope and type
vocabulary, the index headings, the empty-index sentence and the truncation
warning match Qwen Code, so a model moving between the two sees one protocol.

While every index is empty a condensed variant is sent (there is nothing to
recall yet, so the long guidance would be dead weight). The function is pure:
equal inputs give byte-identical output, which keeps the endpoint's prompt
cache warm across turns while no memory changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .model import SCOPES, Scope
from ..text.jstext import u16_head, u16_len

MAX_INDEX_LINES = 200
MAX_INDEX_CHARS = 25_000
"""UTF-16 units of an index loaded into the prompt (JS ``.length``)."""

EMPTY_INDEX_TEXT = "Your MEMORY.md is currently empty. When you save new memories, they will appear here."
_NUMBER_WORDS = ("zero", "one", "two", "three", "four")
_DIR_EXISTS = (
    "The directory already exists: write files into it directly with the write_file tool"
    " (no mkdir, no existence check first)."
)

_TIER_LINES: dict[Scope, str] = {
    "user": "- USER memory (across all projects; lasting knowledge about who the user is): `{dir}`",
    "project": "- PROJECT memory (this project only, private to you): `{dir}`",
    "team": (
        "- TEAM memory (this project, shared with every collaborator through the repository — just save"
        " the file; the repository's normal git workflow carries it to teammates, so do not run git"
        " yourself): `{dir}`"
    ),
}

FRONTMATTER_EXAMPLE = (
    "```markdown",
    "---",
    "name: {{short name of the memory}}",
    "description: {{one line saying what this memory is about — future recall decides relevance from this line, so be specific}}",
    "type: {{user, feedback, project, reference}}",
    "---",
    "",
    "{{the memory itself — for feedback and project memories: the rule or fact, then a **Why:** line and a **How to apply:** line}}",
    "```",
)

_TYPES_SECTION = (
    "## Types of memory",
    "",
    "Every memory has one of four types. Each type's `<scope>` says which directory it goes in when both a"
    " user directory (all projects) and a project directory (this project only) are available:",
    "",
    "<types>",
    "<type>",
    "    <name>user</name>",
    "    <scope>always user (all projects)</scope>",
    "    <description>Who the user is: their role, goals, responsibilities and what they already know. These"
    " let you pitch your help at the right level — a senior engineer and a first-time programmer need"
    " different explanations. Save only what helps the work; never record judgements about the person.</description>",
    "    <when_to_save>When you learn something about the user's role, preferences, responsibilities or knowledge.</when_to_save>",
    "    <how_to_use>When your answer should fit the user's background, e.g. explaining code in terms of what they already know.</how_to_use>",
    "    <examples>",
    "    user: I'm a data scientist looking into what logging we have",
    "    assistant: [saves user memory: data scientist, currently focused on observability and logging]",
    "",
    "    user: I've written Go for ten years but this is my first time in the React side of this repo",
    "    assistant: [saves user memory: deep Go experience, new to React and to this frontend — explain frontend ideas through backend analogues]",
    "    </examples>",
    "</type>",
    "<type>",
    "    <name>feedback</name>",
    "    <scope>user by default; project ONLY when the guidance is a project-wide convention every contributor"
    " must follow (a testing policy, a build invariant), not a personal preference.</scope>",
    "    <description>Guidance from the user on how to work: what to stop doing and what to keep doing. Record"
    " confirmations as well as corrections — saving only corrections makes you drift away from approaches the"
    " user already approved, and overly cautious.</description>",
    "    <when_to_save>When the user corrects you (\"no, not that\", \"stop doing X\") or confirms a non-obvious"
    " choice worked (\"yes, exactly\", accepting an unusual approach without pushback). Save what will matter in"
    " later conversations, especially what is surprising, and include why.</when_to_save>",
    "    <how_to_use>Follow these so the user never has to give the same guidance twice.</how_to_use>",
    "    <body_structure>The rule first, then a **Why:** line (the reason given — often an incident or a strong"
    " preference) and a **How to apply:** line (where and when it applies). The why lets you judge edge cases.</body_structure>",
    "    <examples>",
    "    user: don't mock the database in these tests — mocked tests passed last quarter while the prod migration failed",
    "    assistant: [saves feedback memory: integration tests hit a real database, never mocks. Why: mock/prod divergence once hid a broken migration]",
    "",
    "    user: stop summarising what you did at the end of every reply, I can read the diff",
    "    assistant: [saves feedback memory: this user wants terse replies without trailing summaries]",
    "",
    "    user: yes, one bundled PR was right here, splitting it would have been churn",
    "    assistant: [saves feedback memory: for refactors in this area the user prefers one bundled PR — a confirmed judgement call, not a correction]",
    "    </examples>",
    "</type>",
    "<type>",
    "    <name>project</name>",
    "    <scope>always project (this project only)</scope>",
    "    <description>Ongoing work, goals, initiatives, bugs or incidents in this project that the code and git"
    " history do not show: the context and motivation behind what the user is doing.</description>",
    "    <when_to_save>When you learn who is doing what, why, or by when. This changes quickly, so keep it current."
    " Always turn relative dates into absolute ones (\"Thursday\" → \"2026-03-05\") so the memory still makes sense later.</when_to_save>",
    "    <how_to_use>To understand the reasons behind a request and make better-informed suggestions.</how_to_use>",
    "    <body_structure>The fact or decision first, then a **Why:** line (the motivation — a constraint, deadline or"
    " stakeholder) and a **How to apply:** line (how it should shape your suggestions). Project memories age fast;"
    " the why tells a later reader whether it still holds.</body_structure>",
    "    <examples>",
    "    user: we're freezing non-critical merges after Thursday, mobile is cutting a release branch",
    "    assistant: [saves project memory: merge freeze from 2026-03-05 for the mobile release cut; flag non-critical PRs planned after that]",
    "",
    "    user: we're replacing the old auth middleware because legal flagged how it stores session tokens",
    "    assistant: [saves project memory: the auth middleware rewrite is a compliance requirement (session token storage), not tech-debt cleanup — favour compliance over ergonomics]",
    "    </examples>",
    "</type>",
    "<type>",
    "    <name>reference</name>",
    "    <scope>project by default (this project's tracker, chat channel, dashboards); user when the resource"
    " belongs to the user rather than the project (e.g. the company wiki they always read).</scope>",
    "    <description>Where to find information that lives outside the project directory, in other systems.</description>",
    "    <when_to_save>When you learn about an external resource and what it is for — e.g. which tracker project holds these bugs, which channel collects feedback.</when_to_save>",
    "    <how_to_use>When the user mentions an external system or needs information that may live in one.</how_to_use>",
    "    <examples>",
    "    user: the Linear project \"INGEST\" has the context on these tickets, all pipeline bugs go there",
    "    assistant: [saves reference memory: pipeline bugs are tracked in the Linear project \"INGEST\"]",
    "",
    "    user: oncall watches the Grafana board grafana.internal/d/api-latency — touch request handling and that's what pages someone",
    "    assistant: [saves reference memory: grafana.internal/d/api-latency is oncall's latency dashboard — check it when changing request-path code]",
    "    </examples>",
    "</type>",
    "</types>",
    "",
)

_TEAM_SECTION = (
    "## Saving to team memory",
    "",
    "TEAM memory reaches every collaborator through the repository, so it refines the `<scope>` guidance above:",
    "",
    "- A `feedback` memory that is a project-wide convention every contributor must follow (a testing policy, a"
    " build invariant) → TEAM instead of the project directory.",
    "- A `reference` the whole team relies on (tracker, dashboard, channel) → TEAM instead of the project directory.",
    "- `user` memories are always private — never TEAM.",
    "- `project` memories stay private by default; TEAM only for lasting shared facts every contributor needs,"
    " never time-bound state such as freezes or in-flight work.",
    "- You MUST NOT save sensitive data to TEAM memory — no API keys, tokens or credentials. Everyone who can read"
    " the repository sees it, and such writes are refused automatically.",
    "- For TEAM memory write only the memory file (Step 1): its `MEMORY.md` index is generated from the files — do"
    " NOT edit the team index by hand (the two-step rule is for the private directories).",
    "",
)

_WHAT_NOT_TO_SAVE = (
    "## What NOT to save in memory",
    "",
    "- Code patterns, conventions, architecture, file paths or project structure — reading the project shows them.",
    "- Git history, recent changes, who changed what — `git log` / `git blame` are the authority.",
    "- Debugging solutions or fix recipes — the fix is in the code and the commit message explains it.",
    "- MCP tool names, parameter schemas, field mappings, guessed tool-call formats or raw failed tool-call"
    " transcripts — the live tool definitions are authoritative and change. Save a tool-related note only for a"
    " confirmed lasting workaround, warning, owner or escalation path.",
    "- Anything already written in QWEN.md or AGENTS.md files.",
    "- Ephemeral task details: work in progress, temporary state, the current conversation's context.",
    "",
    "These exclusions hold even when the user explicitly asks you to save. Asked to save a PR list or an activity"
    " summary, ask what was *surprising* or *non-obvious* about it — that is the part worth keeping.",
)

_WHEN_TO_ACCESS = (
    "## When to access memories",
    "- When memories look relevant, or the user refers to work from an earlier conversation.",
    "- You MUST access memory when the user explicitly asks you to check, recall or remember.",
    "- If the user says to *ignore* or *not use* memory, act as if MEMORY.md were empty: do not apply, cite, compare"
    " against or mention remembered content.",
    "- Memories go stale. Treat one as what was true when it was written; before answering or building on memory"
    " alone, check it against the current files or resources. When a memory conflicts with what you observe now,"
    " trust the present — and update or remove the stale memory instead of acting on it.",
)

_TRUSTING_RECALL = (
    "## Before recommending from memory",
    "",
    "A memory naming a function, file or flag only says it existed when the memory was written; it may since have"
    " been renamed, removed or never merged. Before recommending it:",
    "",
    "- A file path: check that the file exists.",
    "- A function or flag: grep for it.",
    "- If the user is about to act on your recommendation (not just asking about history), verify first.",
    "",
    '"The memory says X exists" is not "X exists now."',
    "",
    "A memory summarising repository state (activity logs, architecture snapshots) is frozen in time. For *recent*"
    " or *current* state prefer `git log` or reading the code over the snapshot.",
)

_PERSISTENCE = (
    "## Memory and other forms of persistence",
    "Memory is one of several ways to keep information; what sets it apart is that it is recalled in future"
    " conversations. Do not use it for what only matters in the current conversation.",
    "- Plans instead of memory: to agree with the user on the approach for a non-trivial task, use a plan, and when"
    " your approach changes, update the plan — not a memory.",
    "- Tasks instead of memory: to split the current work into steps or track progress, use tasks. Memory is for"
    " what will help in future conversations.",
)

_CONDENSED_TYPES = (
    "## Memory types",
    "",
    "- **user** — the user's role, goals, responsibilities and knowledge (always user scope)",
    "- **feedback** — guidance on how to work: corrections AND confirmed approaches",
    "- **project** — ongoing work, goals, initiatives, bugs or incidents the code and git do not show",
    "- **reference** — where information lives in external systems",
)

_CONDENSED_DO_NOT_SAVE = (
    "## Do not save",
    "",
    "- Code patterns, architecture or file paths (read the project instead)",
    "- Git history or debugging solutions",
    "- MCP tool schemas or raw failed tool-call transcripts",
    "- Ephemeral task state or the current conversation's context",
    "- What QWEN.md or AGENTS.md already says",
)

_ENTRY_FORMAT = "`- [Title](file.md) — one-line hook`"


def truncate_index(text: str) -> str:
    """An index as loaded into the prompt: at most 200 lines and 25,000 characters, with a warning when cut.

    Cut at the last line break before the character limit, so no line is
    loaded half. The warning names what tripped: the line count, the size, or both.
    """
    trimmed = text.strip()
    lines = trimmed.split("\n")
    size = u16_len(trimmed)
    too_many, too_big = len(lines) > MAX_INDEX_LINES, size > MAX_INDEX_CHARS
    if not too_many and not too_big:
        return trimmed
    kept = "\n".join(lines[:MAX_INDEX_LINES]) if too_many else trimmed
    if u16_len(kept) > MAX_INDEX_CHARS:
        head = u16_head(kept, MAX_INDEX_CHARS + 1)  # JS lastIndexOf('\n', 25000) may find a break at 25,000
        cut = head.rfind("\n")
        kept = kept[:cut] if cut > 0 else u16_head(kept, MAX_INDEX_CHARS)
    kb = f"{size / 1024:.1f} KB"
    if too_big and not too_many:
        reason = f"{kb} (limit: {MAX_INDEX_CHARS / 1024:.1f} KB) — index entries are too long"
    elif too_many and not too_big:
        reason = f"{len(lines)} lines (limit: {MAX_INDEX_LINES})"
    else:
        reason = f"{len(lines)} lines and {kb}"
    return (
        f"{kept}\n\n> WARNING: MEMORY.md is {reason}. Only part of it was loaded."
        " Keep index entries to one line under ~200 chars; move detail into topic files."
    )


def _index_block(root: Path, index: str | None) -> list[str]:
    content = index.strip() if index else ""
    return [f"## {root}/MEMORY.md", "", truncate_index(content) if content else EMPTY_INDEX_TEXT]


def build_memory_block(roots: Mapping[Scope, Path | None], indexes: Mapping[Scope, str | None], *, force_full: bool = False) -> str:
    """The ``# auto memory`` block for the scopes whose root is given (project is required).

    ``roots`` maps a scope to its memory directory (a missing or None entry:
    that scope is not offered); ``indexes`` to its ``MEMORY.md`` text (missing,
    None or blank: empty). Tiers and indexes are listed user, project, team.
    """
    project = roots.get("project")
    if project is None:
        raise ValueError("the auto-memory block needs the project memory directory")
    team = roots.get("team")
    present = [(scope, path) for scope in SCOPES if (path := roots.get(scope)) is not None]
    tiers = [_TIER_LINES[scope].format(dir=path) for scope, path in present]
    multi = len(tiers) > 1
    index_sections: list[str] = []
    for n, (scope, path) in enumerate(present):
        index_sections += ([""] if n else []) + _index_block(path, indexes.get(scope))

    if multi:
        count = _NUMBER_WORDS[len(tiers)] if len(tiers) < len(_NUMBER_WORDS) else str(len(tiers))
        intro = [f"You have {count} persistent, file-based memory directories. {_DIR_EXISTS}", "", *tiers]
    else:
        intro = [f"You have a persistent, file-based memory system at `{project}`. {_DIR_EXISTS}"]

    if not force_full and all(not (indexes.get(scope) or "").strip() for scope, _ in present):
        return "\n".join(_condensed(project, intro, index_sections, multi, team is not None))

    if multi:
        intro += ["", "For each memory you save, pick its directory with the per-type `<scope>` guidance below."]
    lines = [
        "# auto memory",
        "",
        *intro,
        "",
        "Build this memory up over time, so that future conversations know who the user is, how they like to work"
        " with you, which behaviours to avoid or repeat, and the context behind the work they give you.",
        "",
        "If the user explicitly asks you to remember something, save it at once as the type that fits best. If they"
        " ask you to forget something, find and remove the matching entry.",
        "",
        *_TYPES_SECTION,
        *(_TEAM_SECTION if team is not None else ()),
        *_WHAT_NOT_TO_SAVE,
        "",
        *_how_to_save(project, multi),
        "",
        *_WHEN_TO_ACCESS,
        "",
        *_TRUSTING_RECALL,
        "",
        *_PERSISTENCE,
        "",
        *index_sections,
    ]
    return "\n".join(lines)


def _how_to_save(project: Path, multi: bool) -> list[str]:
    if multi:
        step1 = (
            "**Step 1** — write the memory to its own file in the directory its `<scope>` chooses, under the"
            " subdirectory of its type (e.g. `user/role.md`, `feedback/testing.md`), with this frontmatter:"
        )
        step2 = (
            "**Step 2** — add a pointer to that file to the `MEMORY.md` index in the SAME directory you wrote to"
            " (each directory has its own index — never point across). One line per entry, under ~150 characters:"
            f" {_ENTRY_FORMAT}. The index has no frontmatter. Never write memory content into `MEMORY.md` itself."
        )
        loaded = f"- Every `MEMORY.md` index is always in your context — lines after {MAX_INDEX_LINES} are cut, so keep each index short"
        duplicates = "- Do not write duplicates. First look for an existing memory, in any of your memory directories, that you can update."
    else:
        step1 = (
            "**Step 1** — write the memory to its own file under the subdirectory of its type (e.g. `user/role.md`,"
            " `feedback/testing.md`), with this frontmatter:"
        )
        step2 = (
            f"**Step 2** — add a pointer to that file to `{project}/MEMORY.md` (the full absolute path). That file is an"
            f" index, not a memory: one line per entry, under ~150 characters: {_ENTRY_FORMAT}. It has no frontmatter."
            f" Never write memory content into `{project}/MEMORY.md` itself."
        )
        loaded = f"- `{project}/MEMORY.md` is always in your context — lines after {MAX_INDEX_LINES} are cut, so keep the index short"
        duplicates = "- Do not write duplicates. First look for an existing memory you can update."
    return [
        "## How to save memories",
        "",
        "Saving a memory takes two steps:",
        "",
        step1,
        "",
        *FRONTMATTER_EXAMPLE,
        "",
        step2,
        "",
        loaded,
        "- Keep each memory file's name, description and type in step with its content",
        "- Organise memory by topic, not by date.",
        "- Update or remove memories that turn out wrong or outdated.",
        duplicates,
    ]


def _condensed(project: Path, intro: list[str], index_sections: list[str], multi: bool, has_team: bool) -> list[str]:
    if multi:
        save = [
            "**Step 1** — write the memory to its own file (e.g. `user/role.md`, `feedback/testing.md`) in the"
            " directory its type's scope chooses, with this frontmatter:",
            "",
            *FRONTMATTER_EXAMPLE,
            "",
            "**Step 2** — add a pointer to that file to the `MEMORY.md` index in the SAME directory you wrote to."
            f" One line per entry, under ~150 chars: {_ENTRY_FORMAT}.",
        ]
        if has_team:
            save += [
                "",
                "With a team directory, project-wide conventions and shared references go to TEAM instead of PROJECT."
                " Never save secrets to TEAM. For TEAM write only the file (Step 1) — its index is generated; do NOT"
                " edit the team MEMORY.md by hand.",
            ]
    else:
        save = [
            "**Step 1** — write the memory to its own file (e.g. `user/role.md`, `feedback/testing.md`) with this frontmatter:",
            "",
            *FRONTMATTER_EXAMPLE,
            "",
            f"**Step 2** — add a pointer to that file to `{project}/MEMORY.md`. One line per entry, under ~150 chars: {_ENTRY_FORMAT}.",
        ]
    return [
        "# auto memory",
        "",
        *intro,
        "",
        "Your memory is empty so far. When you learn something worth keeping across conversations, save it as below.",
        "",
        *_CONDENSED_TYPES,
        "",
        *_CONDENSED_DO_NOT_SAVE,
        "",
        "## How to save memories",
        "",
        "Two steps:",
        "",
        *save,
        "",
        *index_sections,
    ]
