"""``.qwen/rules/*.md``: baseline rules in the system prompt, conditional rules on demand.

A rule file is Markdown with optional YAML frontmatter. Without ``paths:``
it is a *baseline* rule, appended to the context-file text on every turn.
With ``paths:`` (globs relative to the project root) it is *conditional*:
it enters the conversation once, as a reminder, the first time a matching
file is opened or touched — the same mechanism as conditional skills.

Sources, in order (Qwen Code 0.24 ``loadRules``): ``~/.qwen/rules/``, then,
in a trusted folder, ``<project root>/.qwen/rules/`` unless that is the same
directory. Files are found recursively, sorted by code point, read as
UTF-8, BOM and CRLF normalised, HTML comments stripped, trimmed; a rule
whose body ends up empty is dropped.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field

from ..files.containment import is_subpath
from ..matching.globs import ActivationIndex
from ..matching.safe_glob import InvalidGlob, compile_pattern
from ..text.yaml_frontmatter import FrontmatterRefused, js_string
from ..files.containment import RealPaths
from .frontmatter import parse_frontmatter
from .rule_budget import RuleBudget, collect_md
from .text import Problem, lexical_abspath
from ..text.jstext import js_trim

log = logging.getLogger(__name__)

_FRONTMATTER = re.compile(r"^---\n(.*?)\n---(?:\n|$)(.*)$", re.DOTALL)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    path: str  # absolute
    content: str
    paths: tuple[str, ...] = ()
    description: str | None = None

    @property
    def conditional(self) -> bool:
        return bool(self.paths)


def normalize_content(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_html_comments(text: str) -> str:
    """Remove ``<!-- … -->`` until none is left (removal may join a new one), then stray openers."""
    prev = None
    while prev != text:
        prev = text
        text = _HTML_COMMENT.sub("", text)
    return text.replace("<!--", "")


def parse_rule(raw: str, path: str, problems: list[Problem] | None = None) -> Rule | None:
    """A rule, or ``None`` when nothing is left of its body; frontmatter read as Qwen Code reads it.

    A frontmatter refused as a possible YAML bomb (see
    :mod:`qwen_lsp.text.yaml_frontmatter`) drops the whole rule with a warning:
    loading its body without the frontmatter could turn a conditional rule
    into one that is in every prompt.
    """
    text = normalize_content(raw)
    paths: tuple[str, ...] = ()
    description: str | None = None
    match = _FRONTMATTER.match(text)
    body = text
    if match:
        front, body = match.group(1), match.group(2)
        try:
            meta, error = parse_frontmatter(front)
        except FrontmatterRefused as exc:
            _report(problems, path, f"rule skipped: {exc}")
            return None
        if error is not None:
            _report(problems, path, f"frontmatter is not valid YAML, read line by line instead: {error}")
        raw_paths = meta.get("paths")
        if isinstance(raw_paths, list):
            paths = tuple(s for s in (js_string(p) for p in raw_paths) if s)
        elif isinstance(raw_paths, str) and raw_paths:
            paths = (raw_paths,)
        if "description" in meta:
            description = js_string(meta["description"])
    content = js_trim(strip_html_comments(body))
    if not content:
        return None
    return Rule(path=path, content=content, paths=paths, description=description)


def _report(problems: list[Problem] | None, path: str, message: str) -> None:
    log.warning("%s: %s", path, message)
    if problems is not None:
        problems.append(Problem(path, message))


def _exclusion(patterns: Iterable[str], problems: list[Problem]) -> Callable[[str], bool]:
    """``context.ruleExcludes`` as one predicate over absolute paths, compiled for linear-time matching.

    A glob that cannot be compiled safely is reported and skipped; the others still apply.
    """
    matchers = []
    for pattern in patterns:
        try:
            matchers.append(compile_pattern(pattern.lstrip("/")))
        except InvalidGlob as exc:
            log.warning("context.ruleExcludes: glob %r skipped: %s", pattern, exc)
            problems.append(Problem("context.ruleExcludes", f"glob {pattern!r} skipped: {exc}"))
    return lambda path: any(m(path.lstrip("/")) for m in matchers)


def load_rules_dir(
    directory: str, problems: list[Problem], excludes: Iterable[str] = (), budget: RuleBudget | None = None
) -> tuple[list[Rule], list[str]]:
    """Rules in one directory plus every file path read (for change tracking).

    A rule file may be a symlink, but only to a file inside the tree that
    holds this ``.qwen`` directory (the project, or HOME for
    ``~/.qwen/rules``): a cloned repository must not make
    ``.qwen/rules/x.md -> /etc/passwd`` a baseline rule in every prompt.
    Files past the build's ``budget`` (``rule_budget.py``; one of its own
    when none is given) are left out and reported, unread.
    """
    if not os.access(directory, os.F_OK):  # no rules directory, the usual case: nothing to list, compile or report
        return [], []
    own_budget = budget is None
    budget = RuleBudget() if budget is None else budget
    files = sorted(collect_md(directory, budget), key=lambda p: p.encode("utf-16-be"))
    excluded = _exclusion(excludes, problems)
    owner = os.path.dirname(os.path.dirname(lexical_abspath(directory)))
    real_paths = RealPaths()
    rules: list[Rule] = []
    for path in files:
        if excluded(path):
            continue
        if real_paths.inside(path, owner) is None:
            _report(problems, path, f"rule refused: a symlink leads outside {owner}")
            continue
        try:
            raw = budget.read(path, problems)
        except OSError as exc:
            message = f"cannot read rule: {exc.strerror or exc}"
            log.warning("%s: %s", path, message)
            problems.append(Problem(path, message))
            continue
        if raw is None:
            continue
        rule = parse_rule(raw, path, problems)
        if rule is not None:
            rules.append(rule)
    if own_budget:
        budget.report(problems)
    left_out = set(budget.left_out)  # unread, so not watched: only files that were read can change the prompt
    return rules, [f for f in files if f not in left_out]


def format_rules(rules: Iterable[Rule], project_root: str) -> str:
    blocks = []
    for rule in rules:
        display = os.path.relpath(rule.path, project_root).replace("\\", "/")
        blocks.append(f"--- Rule from: {display} ---\n{rule.content}\n--- End of Rule from: {display} ---")
    return "\n\n".join(blocks)


@dataclass
class ConditionalRules:
    """The workspace's conditional rules and their glob index; stateless matching.

    Which rules a chat has already been given lives with that chat
    (:class:`~qwen_lsp.context.session_context.SessionContext`), so two chats
    of one workspace never share injections.
    """

    rules: list[Rule]
    project_root: str
    _index: ActivationIndex = field(init=False, repr=False)
    _by_path: dict[str, Rule] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # The same bucketed index conditional skills use: a didOpen never scans every glob.
        self._index = ActivationIndex([(rule.path, rule.paths) for rule in self.rules])
        self._by_path = {rule.path: rule for rule in self.rules}
        for dropped in self._index.dropped:
            log.warning("%s: invalid glob in paths: %s (%s); the rule's other globs stay", dropped.skill, dropped.pattern, dropped.message)

    def match(self, paths: Iterable[str | os.PathLike[str]], skip: Container[str] = ()) -> list[Rule]:
        """The rules (not in ``skip``, by path) that any of ``paths`` matches, each once, in match order."""
        found: list[Rule] = []
        if not self.rules:
            return found
        seen: set[str] = set()
        for raw in paths:
            for rel in self._relative_forms(os.fspath(raw)):
                for name in self._index.match(rel, skip=lambda n: n in skip or n in seen):
                    seen.add(name)
                    found.append(self._by_path[name])
        return found

    def _relative_forms(self, path: str) -> list[str]:
        """The project-relative path, plus its real-path form when a symlink is involved."""
        full = lexical_abspath(path, self.project_root)
        if not is_subpath(self.project_root, full) or full == self.project_root:
            return []
        forms = [os.path.relpath(full, self.project_root).replace("\\", "/")]
        try:
            real_full, real_root = os.path.realpath(full), os.path.realpath(self.project_root)
        except OSError:
            return forms
        if real_full != full and is_subpath(real_root, real_full):
            alt = os.path.relpath(real_full, real_root).replace("\\", "/")
            if alt not in forms:
                forms.append(alt)
        return forms
