"""The core system prompt and the two summarising prompts (Qwen Code's ``core/prompts.ts``).

The base prompt is written in our own words with the intent of Qwen Code's
``getCoreSystemPrompt``: the same sections in the same order, each of the
self-deciding sections choosing itself the same way:

1. identity (the role depends on the interaction mode), core mandates, task
   management, workflows, operational guidelines;
2. exactly one sandbox section, chosen by ``SANDBOX``;
3. "executing actions with care" (which actions need confirmation);
4. a git section, only when cwd is inside a git repository;
5. tool-call examples in the style the model expects, chosen by
   ``QWEN_CODE_TOOL_CALL_STYLE`` or by the model name (only names shorter
   than 100 characters are matched, as a guard against pathological input);
6. a final reminder that repeats the interaction mode's question rule.

Tools are named only when they are offered (``tools``): Qwen Code offers
all of its tools, so its prompt names ``edit``, ``run_shell_command``,
``todo_write`` and more; a model told about a tool it lacks wastes a round
calling it. With ``tools=None`` (Qwen Code's full set) every mention is
kept. The result depends on the set, not its order, so the bytes stay
stable for as long as the tool set does.

``QWEN_SYSTEM_MD`` replaces the base verbatim (a missing file is an error
the user sees), ``QWEN_WRITE_SYSTEM_MD`` writes the base out. The suffix
rule is the seed-era one, which 0.24 still uses for the main session:
``base + "\\n\\n---\\n\\n" + part`` for each non-blank part, so an empty part
leaves no orphan separator.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ..files.reading import read_bytes
from .text import GitAncestry
from ..text.jstext import js_trim

log = logging.getLogger(__name__)


class ContextError(Exception):
    """A context problem the user must fix before a turn can run; ``str()`` is user-facing."""


# ------------------------------------------------------------------ interaction modes


@dataclass(frozen=True)
class InteractionMode:
    role: str
    questions: str
    without_question_tool: str | None = None
    """The rule when ``ask_user_question`` is not offered; None when ``questions`` does not name it."""

    def question_rule(self, offered: _Offered) -> str:
        if self.without_question_tool is None or offered("ask_user_question"):
            return self.questions
        return self.without_question_tool


_ASK_IN_REPLY = (
    "When something essential is ambiguous, ask one short, concrete question at the end of your reply; the user "
    "answers in their next message. Never include time estimates."
)


INTERACTION_MODES: dict[str, InteractionMode] = {
    "interactive": InteractionMode(
        "an interactive CLI agent",
        "Use 'ask_user_question' when you need clarification or want to validate assumptions. "
        "Never include time estimates in options.",
        _ASK_IN_REPLY,
    ),
    "headless": InteractionMode(
        "a non-interactive CLI agent",
        "This run has a single turn and nobody can answer after your response. Do not ask the user anything, "
        "not even when asked to, and do not call 'ask_user_question'. Make safe, reasonable assumptions and finish "
        "the task; if something you need is missing, report that blocker as your result.",
        "This run has a single turn and nobody can answer after your response. Do not ask the user anything, "
        "not even when asked to. Make safe, reasonable assumptions and finish "
        "the task; if something you need is missing, report that blocker as your result.",
    ),
    "acp": InteractionMode(
        "a CLI agent operating through an ACP host",
        "Use 'ask_user_question' when clarification is necessary; the ACP host relays the question and the answer.",
        _ASK_IN_REPLY,
    ),
    # The language server's own mode: the user chats in an editor panel and
    # answers in the next message, but no question tool is relayed, so the
    # question goes in the reply itself.
    "editor": InteractionMode("an interactive coding agent running inside the user's editor", _ASK_IN_REPLY),
}


def interaction_mode(name: str) -> InteractionMode:
    return INTERACTION_MODES.get(name, INTERACTION_MODES["interactive"])


class _Offered:
    """Which tools the model has this turn; ``None`` stands for Qwen Code's full set."""

    def __init__(self, tools: Collection[str] | None) -> None:
        self._tools = None if tools is None else frozenset(tools)

    def __call__(self, *names: str) -> bool:
        return self._tools is None or all(n in self._tools for n in names)

    def quoted(self, *names: str) -> str:
        """``'a', 'b'`` for the offered ones among ``names``, in the order given."""
        return ", ".join(f"'{n}'" for n in names if self(n))


# ------------------------------------------------------------------ env switches


@dataclass(frozen=True)
class PathSwitch:
    """Qwen Code's ``resolvePathFromEnv``: unset, an on/off switch, or a path."""

    is_switch: bool
    value: str | None
    disabled: bool

    @property
    def enabled(self) -> bool:
        return self.value is not None and not self.disabled


def resolve_path_switch(raw: str | None, home: str) -> PathSwitch:
    text = (raw or "").strip()
    if not text:
        return PathSwitch(False, None, False)
    lowered = text.lower()
    if lowered in ("0", "false", "1", "true"):
        return PathSwitch(True, lowered, lowered in ("0", "false"))
    if text == "~":
        text = home
    elif text.startswith("~/"):
        text = os.path.join(home, text[2:])
    return PathSwitch(False, os.path.normpath(os.path.abspath(text)), False)


# ------------------------------------------------------------------ sections


def sandbox_section(env: Mapping[str, str]) -> str:
    sandbox = env.get("SANDBOX", "")
    if sandbox == "sandbox-exec":
        return """# macOS Seatbelt
You run under macOS Seatbelt, which limits what you can reach outside the project directory and the system temp directory. When a command fails with "Operation not permitted" or a similar error, say that Seatbelt is the likely cause and explain how the user could adjust their Seatbelt profile."""
    if sandbox:
        return """# Sandbox
You run in a sandbox container that restricts access outside the project directory and the system temp directory, and that may isolate host resources such as ports. When a command fails because of those limits, say that the sandbox is the likely cause and explain how the user could adjust their sandbox configuration."""
    return """# Outside of Sandbox
You run directly on the user's machine, not in a sandbox. Before a command that changes the system outside the project directory or the system temp directory, explain briefly why it is needed and remind the user that they may want to enable sandboxing."""


ACTIONS_SECTION = """# Executing actions with care
Weigh how reversible an action is and how far its effects reach. Local, reversible steps such as editing files or running tests are fine to take freely. Anything hard to undo, anything that touches shared systems beyond this machine, and anything destructive needs the user's confirmation first when the interaction mode lets them answer; otherwise stop and report what blocks you. Asking costs little; an unwanted action (lost work, a message sent, a deleted branch) can cost a lot. A user who approved an action once has not approved it for every later case: unless durable instructions such as QWEN.md authorise it in advance, confirm again. Authority covers what was asked and no more, so keep your actions to the scope of the request.

Actions that call for confirmation include:
- destroying things: deleting files or branches, dropping tables, killing processes, rm -rf, overwriting uncommitted work;
- hard-to-reverse changes: force-pushing, git reset --hard, amending published commits, removing or downgrading dependencies, changing CI/CD pipelines;
- anything others will see or share: pushing, opening/closing/commenting on PRs or issues, sending messages, posting to outside services, changing shared infrastructure or permissions;
- uploading content to third-party tools (pastebins, renderers, gists), which publishes it and may keep it cached.

Do not use destructive shortcuts to get past an obstacle. Find and fix the cause instead of bypassing checks (for example with --no-verify). When you meet unexpected state such as unfamiliar files, branches or lock files, investigate before deleting or overwriting: it may be the user's work in progress. Resolve merge conflicts rather than discarding changes. When in doubt, follow the interaction mode's rule for questions before acting."""


GIT_SECTION = """# Git Repository
- The working directory is inside a git repository.
- Before committing or preparing a commit, gather the facts with shell commands:
  - `git status` to separate the requested change from work that was already there;
  - `git diff HEAD` to see every change to tracked files since the last commit (`git diff --staged` when only the staged part matters);
  - `git log -n 3` to match the style of recent commit messages.
- Stage only the paths that belong to the change; avoid blanket staging such as `git add -A` when unrelated changes exist.
- Chain commands where you can, e.g. `git status && git diff HEAD && git log -n 3`.
- Always propose a draft commit message; do not ask the user to write it. Say why more than what.
- Keep the user informed, asking for confirmation where the interaction mode allows and reporting blockers otherwise.
- After committing, check with `git status` that it worked. If a commit fails, do not work around the failure unless asked.
- Never push to a remote unless the user explicitly asks.

## Git as Source of Truth
- For history, recent changes or who changed what, run `git log` / `git blame`; do not rely on memory or guesses.
- For the recent or current state of the code, prefer `git log` or reading the code over any cached assumption: memories and snapshots are frozen in time.
- A fix recipe lives in the code; its commit message carries the context."""


def is_git_repository(directory: str) -> bool:
    """``.git`` (anything by that name) in ``directory`` or an ancestor, as Qwen Code checks."""
    return GitAncestry().in_git(directory)


# ------------------------------------------------------------------ tool-call examples

_GENERAL_EXAMPLES = """# Examples (Illustrating Tone and Workflow)
<example>
user: 1 + 2
model: 3
</example>

<example>
user: list the files here.
model: [tool_call: list_directory for path '.']
</example>

<example>
user: Where is the retry limit configured?
model: I'll search for it.
[tool_call: grep_search for pattern 'retry_limit|max_retries']
(After the results)
The limit is set in `config/network.py` as `MAX_RETRIES = 5`.
</example>

<example>
user: Rename `parse_cfg` to `parse_config` in utils.py.
model: [tool_call: read_file for absolute_path '/path/to/utils.py']
(After reading)
[tool_call: edit for file_path '/path/to/utils.py', old_string 'def parse_cfg(', new_string 'def parse_config(']
Done. I'll run the tests to check nothing else referred to the old name.
[tool_call: run_shell_command for 'pytest -q']
</example>"""

_QWEN_CODER_EXAMPLES = """# Examples (Illustrating Tone and Workflow)
<example>
user: 1 + 2
model: 3
</example>

<example>
user: list the files here.
model:
<tool_call>
<function=list_directory>
<parameter=path>
.
</parameter>
</function>
</tool_call>
</example>

<example>
user: Where is the retry limit configured?
model: I'll search for it.
<tool_call>
<function=grep_search>
<parameter=pattern>
retry_limit|max_retries
</parameter>
</function>
</tool_call>
(After the results)
The limit is set in `config/network.py` as `MAX_RETRIES = 5`.
</example>

<example>
user: Run the tests.
model:
<tool_call>
<function=run_shell_command>
<parameter=command>
pytest -q
</parameter>
</function>
</tool_call>
</example>"""

_QWEN_VL_EXAMPLES = """# Examples (Illustrating Tone and Workflow)
<example>
user: 1 + 2
model: 3
</example>

<example>
user: list the files here.
model:
<tool_call>
{"name": "list_directory", "arguments": {"path": "."}}
</tool_call>
</example>

<example>
user: Where is the retry limit configured?
model: I'll search for it.
<tool_call>
{"name": "grep_search", "arguments": {"pattern": "retry_limit|max_retries"}}
</tool_call>
(After the results)
The limit is set in `config/network.py` as `MAX_RETRIES = 5`.
</example>

<example>
user: Run the tests.
model:
<tool_call>
{"name": "run_shell_command", "arguments": {"command": "pytest -q"}}
</tool_call>
</example>"""

_GEMMA4_EXAMPLES = """# Examples (Illustrating Tone and Workflow)
<example>
user: 1 + 2
model: 3
</example>

<example>
user: list the files here.
model: <|tool_call>call:list_directory{path:<|"|>.<|"|>}<tool_call|>
</example>

<example>
user: Where is the retry limit configured?
model: I'll search for it.
<|tool_call>call:grep_search{pattern:<|"|>retry_limit|max_retries<|"|>}<tool_call|>
(After the results)
The limit is set in `config/network.py` as `MAX_RETRIES = 5`.
</example>"""

_EXAMPLE_TOOL = re.compile(r"(?:tool_call: |<function=|\"name\": \"|call:)([a-z_]+)")


def _examples(style: str, offered: _Offered) -> str:
    """A style's examples, keeping only those whose tool calls are all offered."""
    head, *examples = TOOL_CALL_STYLES[style].split("\n<example>")
    kept = [e for e in examples if offered(*_EXAMPLE_TOOL.findall(e))]
    return (head + "".join("\n<example>" + e for e in kept)).rstrip()


TOOL_CALL_STYLES: dict[str, str] = {
    "general": _GENERAL_EXAMPLES,
    "qwen-coder": _QWEN_CODER_EXAMPLES,
    "qwen-vl": _QWEN_VL_EXAMPLES,
    "gemma4": _GEMMA4_EXAMPLES,
}

_MODEL_STYLE_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"qwen[^-]*-coder", re.IGNORECASE), "qwen-coder"),
    (re.compile(r"qwen[^-]*-vl", re.IGNORECASE), "qwen-vl"),
    (re.compile(r"coder-model", re.IGNORECASE), "qwen-coder"),
    (re.compile(r"gemma[-_]?4", re.IGNORECASE), "gemma4"),
)


def tool_call_style(model: str, env: Mapping[str, str]) -> str:
    """Which example style fits: the env override if known, else the first model-name match."""
    override = env.get("QWEN_CODE_TOOL_CALL_STYLE", "")
    if override:
        if override.lower() in TOOL_CALL_STYLES:
            return override.lower()
        log.warning("unknown QWEN_CODE_TOOL_CALL_STYLE %r; choosing by model name", override)
    if model and len(model.encode("utf-16-le")) // 2 < 100:
        for pattern, style in _MODEL_STYLE_RULES:
            if pattern.search(model):
                return style
    return "general"


# ------------------------------------------------------------------ the base prompt


def _identity(mode: InteractionMode) -> str:
    return (
        f"You are Qwen Code, {mode.role} developed by Alibaba Group, specializing in software engineering tasks. "
        "Your job is to help the user safely and efficiently, following the instructions below and using your tools."
    )


_MANDATES = """# Core Mandates
- **Conventions:** Follow the project's existing conventions. Read the surrounding code, tests and configuration before changing anything.
- **Libraries and frameworks:** Never assume a library is available. Check how the project already uses it (imports, package manifests such as `pyproject.toml`, `package.json`, `Cargo.toml`) before relying on it.
- **Style and structure:** Match the formatting, naming, typing and architecture of the code around you.
- **Idiomatic changes:** Understand the local context (imports, functions, classes) so that your change fits naturally.
- **Comments:** Add few comments, and only to say *why* something is done when that is not obvious. Never talk to the user through code comments.
- **Proactiveness:** Finish the request completely, including directly implied follow-ups such as tests for new behaviour.
- **Ambiguity:** Do not go beyond the clear scope of the request without asking. When asked *how* to do something, explain first.
- **No reverts without cause:** Do not undo changes unless they caused an error or the user asked.
- **Plan before uncertain work:** When the task is not yet clear enough to execute safely, keep investigating read-only or make a plan instead of making speculative edits."""

_TASKS = """# Task Management
For work with several steps, keep a short task list with 'todo_write': add the steps, mark each one in progress when you start it and completed as soon as it is done, so the user can follow along. Do not batch up completions."""

_TASKS_WITHOUT_TOOL = """# Task Management
For work with several steps, name the steps briefly before you start and work through them in order, saying which one you are on, so the user can follow along."""

_WORKFLOWS = """# Primary Workflows

## Software Engineering Tasks
For fixes, features, refactoring or explanations, work in this loop:
1. **Understand:** {understand}
2. **Plan:** form a grounded plan; share a brief version when it helps the user. Plan how you will verify the change, ideally with tests.
3. **Implement:** {implement}
4. **Verify:** {verify}

## New Applications
Clarify the essentials (purpose, platform, key features) when the request leaves them open, propose a concise plan with a sensible technology choice, build a complete working first version, and verify that it builds and runs before handing it over."""

_GUIDELINES = """# Operational Guidelines

## Tone and Style
- Be concise and direct; aim for a few lines of text per reply unless detail is needed.
- Put clarity first for essential explanations and for requests that are ambiguous.
- Skip filler, preambles and postambles. Use GitHub-flavored Markdown; your output is rendered in a monospace panel.
- Use tools for actions and text only to communicate.
- If you cannot or will not do something, say so in a sentence or two and offer an alternative when you can.

## Security and Safety
{security}

## Tool Usage
{tool_usage}"""

_SHELL_SAFETY = "- Before running a shell command that modifies files or the system, explain in a sentence what it does and why."
_SECRETS = "- Never write code that exposes, logs or commits secrets, keys or credentials."
_SHELL_USAGE = (
    "- Prefer the dedicated file tools over shell equivalents for reading, searching and editing.\n"
    "- Avoid commands that wait for input or never exit; run long-lived processes in the background."
)
_MEMORY_USAGE = (
    "- Use 'save_memory' only for durable user-specific facts or preferences that should outlive this conversation, "
    "never for task context."
)

_FINAL = """# Final Reminder
Your purpose is efficient, safe help. Stay concise but never at the cost of clarity, especially around safety and changes to the system. Keep the user in control and follow the project's conventions. Never guess what a file contains{read_it}. You are an agent: keep going until the request is fully resolved.

Interaction mode reminder: {questions}"""


def _workflow_steps(offered: _Offered) -> dict[str, str]:
    readers = offered.quoted("grep_search", "glob", "read_file")
    understand = (
        f"use the search and read tools ({readers}) to learn the relevant code and its conventions."
        if readers
        else "learn the relevant code and its conventions from what the user shows you; ask for what you need."
    )
    editors = offered.quoted("edit", "write_file", "run_shell_command")
    implement = (
        f"make the change with the editing tools ({editors}), following the core mandates."
        if editors
        else "you cannot change files in this session: give the change precisely (file, place, code) for the user "
        "to apply, following the core mandates."
    )
    verify = (
        "run the project's own tests, linters and type checkers (find the commands in its configuration, README or CI) "
        "and fix what they report."
        if offered("run_shell_command")
        else "name the project's own tests, linters and type checkers the user should run (find the commands in its "
        "configuration, README or CI)."
    )
    return {"understand": understand, "implement": implement, "verify": verify}


def _guidelines(offered: _Offered, questions: str) -> str:
    shell = offered("run_shell_command")
    security = "\n".join(([_SHELL_SAFETY] if shell else []) + [_SECRETS])
    usage = ["- Use absolute paths with file tools.", "- Run independent tool calls in parallel."]
    if shell:
        usage.append(_SHELL_USAGE)
    if offered("save_memory"):
        usage.append(_MEMORY_USAGE)
    usage += ["- Respect a declined tool call: do not retry it unless the user asks again.", f"- {questions}"]
    return _GUIDELINES.format(security=security, tool_usage="\n".join(usage))


def build_base_prompt(
    model: str,
    mode_name: str,
    cwd: str,
    env: Mapping[str, str],
    *,
    in_git: bool | None = None,
    tools: Collection[str] | None = None,
) -> str:
    """The built-in base prompt.

    ``in_git`` is :func:`is_git_repository` of ``cwd`` if the caller already
    knows it; ``tools`` are the names offered to the model (None: Qwen Code's
    full set), and no other tool is named.
    """
    in_repo = is_git_repository(cwd) if in_git is None else in_git
    offered = None if tools is None else frozenset(tools)
    return _compose_base_prompt(mode_name, offered, sandbox_section(env), in_repo, tool_call_style(model, env))


@functools.lru_cache(maxsize=32)
def _compose_base_prompt(mode_name: str, tools: frozenset[str] | None, sandbox: str, in_repo: bool, style: str) -> str:
    """The base prompt from the values it depends on: a pure function, so every assembler of a process shares it.

    Composing it formats a dozen sections (~50 µs); a cold context build pays that on each new workspace or setting.
    """
    mode = interaction_mode(mode_name)
    offered = _Offered(tools)
    questions = mode.question_rule(offered)
    parts = [
        _identity(mode),
        _MANDATES,
        _TASKS if offered("todo_write") else _TASKS_WITHOUT_TOOL,
        _WORKFLOWS.format(**_workflow_steps(offered)),
        _guidelines(offered, questions),
        sandbox,
        ACTIONS_SECTION,
    ]
    if in_repo:
        parts.append(GIT_SECTION)
    parts.append(_examples(style, offered))
    read_it = ": read it with 'read_file'" if offered("read_file") else ""
    parts.append(_FINAL.format(questions=questions, read_it=read_it))
    return js_trim("\n\n".join(parts))


def resolve_base_prompt(
    model: str,
    mode_name: str,
    cwd: str,
    env: Mapping[str, str],
    home: str,
    *,
    in_git: bool | None = None,
    tools: Collection[str] | None = None,
) -> str:
    """The base prompt with ``QWEN_SYSTEM_MD`` / ``QWEN_WRITE_SYSTEM_MD`` applied.

    Raises :class:`ContextError` when ``QWEN_SYSTEM_MD`` names a file that
    does not exist (or cannot be read): a silent fallback would hide the
    user's own prompt.
    """
    default_path = os.path.join(cwd, ".qwen", "system.md")
    override = resolve_path_switch(env.get("QWEN_SYSTEM_MD"), home)
    if override.enabled:
        path = default_path if override.is_switch else str(override.value)
        if not os.path.exists(path):
            raise ContextError(f"missing system prompt file '{path}' (named by QWEN_SYSTEM_MD)")
        try:
            base = read_bytes(path).decode("utf-8", errors="replace")
        except OSError as exc:
            raise ContextError(f"cannot read system prompt file '{path}': {exc.strerror or exc}") from exc
    else:
        base = build_base_prompt(model, mode_name, cwd, env, in_git=in_git, tools=tools)
    write = resolve_path_switch(env.get("QWEN_WRITE_SYSTEM_MD"), home)
    if write.enabled:
        target = default_path if write.is_switch else str(write.value)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8", newline="") as fh:
                fh.write(base)
        except OSError as exc:
            log.warning("QWEN_WRITE_SYSTEM_MD: cannot write %s: %s", target, exc)
    return base


def system_prompt_suffix(text: str | None) -> str:
    """``"\\n\\n---\\n\\n" + text.trim()``, or nothing for a blank part (no orphan separator)."""
    trimmed = js_trim(text or "")
    return f"\n\n---\n\n{trimmed}" if trimmed else ""


# ------------------------------------------------------------------ summarising prompts
