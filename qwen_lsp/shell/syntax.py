"""A shell command as bash will read it: tree-sitter-bash's tree, reduced to plain simple commands or refused.

Qwen Code 0.24.4 judges commands from the same grammar (``shellAstParser.ts``
on tree-sitter-bash); so do we, with the ``tree_sitter`` and
``tree_sitter_bash`` wheels. This module keeps only what can be judged
exactly, and says :class:`NotPlain` (with the reason a person can read) for
everything else:

* statements joined by ``;``, newlines, ``&&``, ``||`` and ``|`` (``!`` in
  front is fine); ``&`` (background), ``|&``, subshells, ``{ …; }``, loops,
  conditionals, function definitions and variable assignments are not plain;
* each word is literal once quoting is removed: plain characters,
  ``'…'``, ``"…"`` without ``$`` or backticks, backslash escapes. Any
  expansion (``$x``, ``${x}``, ``$(…)``, backticks, ``<(…)``, ``$((…))``,
  ``$'…'``, ``$"…"``), an unquoted ``~``, ``{`` or ``}`` is not plain;
* an unquoted ``*``, ``?`` or ``[`` makes the word a glob: the caller expands
  it against the directory as bash would (:func:`expand`), so what is judged
  is the argv bash will pass, file names starting with ``-`` included;
* redirections: reading ``< file`` (the path is returned for checking),
  duplicating a descriptor (``2>&1``, ``>&2``) and writing to ``/dev/null``
  are plain; writing to any other file is a :class:`Write`; here-documents
  and here-strings are not plain;
* a parse error anywhere, or a node type this module does not know, is not plain;
* a character past U+FFFF is not plain, before the grammar sees it (:data:`_OUTSIDE_BMP`).

Comments are what bash calls comments: tree-sitter, like bash, only starts
one at the beginning of a word, so ``cat README.md#;touch X`` is two
commands here, as it is to bash. A backslash-newline joins words in bash
but separates them in the tree; :func:`parse` therefore refuses a command
whose words would differ with the continuations removed (0.24.4 re-checks
the joined text the same way).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

MAX_COMMAND_CHARS = 4_000
_OUTSIDE_BMP = re.compile("[\U00010000-\U0010FFFF]")
"""tree-sitter-bash 0.25.1's scanner crashes the process (a segmentation fault) on some code points past
U+FFFF after a ``{`` (``{`` then U+E0001, U+CB090, U+10FFFF…), so no such text ever reaches it; every code
point of the Basic Multilingual Plane parses in those positions (``tests/test_shell_options.py`` tries them all)."""
MAX_GLOB_MATCHES = 500
MAX_WORDS = 2_000


class NotPlain(ValueError):
    """The command holds something that cannot be judged exactly; the message says what."""


class Write(ValueError):
    """The command writes a file by redirection; the message names it."""


@dataclass(frozen=True)
class Word:
    """One word after quote removal; ``pattern`` is set when an unquoted glob character makes it a pattern."""

    text: str
    pattern: str | None = None


@dataclass
class Simple:
    """A simple command: its words (name first), and the files its redirections read."""

    words: list[Word]
    reads: list[str] = field(default_factory=list)


@dataclass
class Script:
    """The simple commands in source order; ``connectors`` the operators seen between statements;
    ``writes`` the files its redirections write (only with ``keep_writes``)."""

    commands: list[Simple]
    connectors: set[str]
    writes: list[str] = field(default_factory=list)


_SEPARATORS = frozenset({";", "&&", "||", "|", "\n", ";;"})
_CONTAINERS = frozenset({"program", "list", "pipeline", "negated_command", "redirected_statement"})
_WORD_NODES = frozenset({"word", "raw_string", "string", "concatenation", "number"})
_DESCRIPTOR_DUP = frozenset({">&", "<&"})
_WRITING = frozenset({">", ">>", "&>", "&>>", ">|"})
_GLOB = frozenset("*?[")


@cache
def _parser() -> Any:
    """Built at the first command, not at import: loading the grammar costs a few milliseconds."""
    from tree_sitter import Language, Parser
    import tree_sitter_bash

    return Parser(Language(tree_sitter_bash.language()))


def parse(command: str, *, keep_writes: bool = False) -> Script:
    """The command's simple commands; :class:`NotPlain` or :class:`Write` when it is not plain (module doc).

    With ``keep_writes`` a writing redirection is listed in :attr:`Script.writes` instead of raised."""
    if not command.strip():
        raise NotPlain("the command is empty")
    if len(command) > MAX_COMMAND_CHARS:
        raise NotPlain(f"the command is longer than {MAX_COMMAND_CHARS} characters")
    if "\x00" in command:
        raise NotPlain("the command contains a NUL character")
    try:
        command.encode("utf-8")
    except UnicodeEncodeError:
        raise NotPlain("the command is not valid text (a lone surrogate)") from None
    if _OUTSIDE_BMP.search(command):
        raise NotPlain("the command holds a character outside the Basic Multilingual Plane")
    script = _parse_once(command, keep_writes)
    if "\\\n" in command or "\\\r\n" in command:
        joined = _parse_once(command.replace("\\\r\n", "").replace("\\\n", ""), keep_writes)
        if [[w.text for w in c.words] for c in joined.commands] != [[w.text for w in c.words] for c in script.commands]:
            raise NotPlain("a backslash-newline joins words differently than it separates them")
    return script


def _parse_once(command: str, keep_writes: bool) -> Script:
    source = command.encode("utf-8")
    tree = _parser().parse(source)
    root = tree.root_node
    if root.has_error:
        raise NotPlain("the command does not parse as bash")
    commands: list[Simple] = []
    connectors: set[str] = set()
    stack = [root]
    order: list[Any] = []
    while stack:  # iterative: `a && b && …` nests one list per operator
        node = stack.pop()
        kind = node.type
        if kind in _CONTAINERS:
            for child in reversed(node.children):
                stack.append(child)
            continue
        if kind == "comment":
            continue
        if kind == "command":
            order.append(node)
            continue
        if not node.is_named:
            if node.type in _SEPARATORS or node.type == "!":
                connectors.add(node.type)
                continue
            raise NotPlain(_described(node.type))
        if kind.endswith("_redirect"):
            order.append(node)  # a redirection of the statement before it
            continue
        raise NotPlain(_described(kind))
    writes: list[str] | None = [] if keep_writes else None
    for node in order:
        if node.type == "command":
            commands.append(_simple(node, writes))
        elif commands:
            _redirect(node, commands[-1], writes)
        else:
            raise NotPlain("a redirection without a command")
    if not commands:
        raise NotPlain("the command runs nothing")
    if sum(len(c.words) for c in commands) > MAX_WORDS:
        raise NotPlain(f"the command has more than {MAX_WORDS} words")
    return Script(commands, connectors, writes or [])


_DESCRIPTIONS = {
    "&": "'&' runs a command in the background",
    "|&": "'|&' pipes standard error too",
    "subshell": "a subshell '( … )'",
    "compound_statement": "a group '{ …; }'",
    "function_definition": "a function definition",
    "variable_assignment": "a variable assignment",
    "variable_assignments": "a variable assignment",
    "command_substitution": "command substitution",
    "process_substitution": "process substitution",
    "heredoc_redirect": "a here-document",
    "herestring_redirect": "a here-string",
    "for_statement": "a loop",
    "c_style_for_statement": "a loop",
    "while_statement": "a loop",
    "if_statement": "a conditional",
    "case_statement": "a case statement",
    "test_command": "a test '[[ … ]]'",
    "declaration_command": "a declaration",
    "unset_command": "an unset",
    "simple_expansion": "a variable expansion",
    "expansion": "a parameter expansion",
    "arithmetic_expansion": "arithmetic expansion",
    "ansi_c_string": "a $'…' string",
    "translated_string": "a $\"…\" string",
    "brace_expression": "brace expansion",
}


def _described(kind: str) -> str:
    return f"the command holds {_DESCRIPTIONS.get(kind, repr(kind))}"


def _simple(node: Any, writes: list[str] | None) -> Simple:
    words: list[Word] = []
    reads: list[str] = []
    simple = Simple(words, reads)
    for child in node.named_children:
        kind = child.type
        if kind == "command_name":
            inner = child.named_children
            if len(inner) != 1:
                raise NotPlain("the command name is not a plain word")
            words.append(_word(inner[0]))
        elif kind in _WORD_NODES:
            words.append(_word(child))
        elif kind.endswith("_redirect"):
            _redirect(child, simple, writes)
        elif kind == "comment":
            continue
        else:
            raise NotPlain(_described(kind))
    if not words:
        raise NotPlain("a command without a name")
    return simple


def _redirect(node: Any, simple: Simple, writes: list[str] | None) -> None:
    if node.type != "file_redirect":
        raise NotPlain(_described(node.type))
    operator = next((c.type for c in node.children if not c.is_named), None)
    targets = [c for c in node.named_children if c.type != "file_descriptor"]
    if operator is None or len(targets) != 1:
        raise NotPlain("a redirection that cannot be read exactly")
    target = _word(targets[0])
    if target.pattern is not None:
        raise NotPlain("a redirection to a glob")
    if operator in _DESCRIPTOR_DUP and (target.text.isdigit() or target.text == "-"):
        return
    if operator in _WRITING or operator in _DESCRIPTOR_DUP:
        if target.text == os.devnull:
            return
        if writes is None:
            raise Write(f"'{operator} {target.text}' writes to a file")
        writes.append(target.text)
        return
    if operator == "<":
        simple.reads.append(target.text)
        return
    raise NotPlain(f"the redirection '{operator}' is not plain")


def _word(node: Any) -> Word:
    """Quote removal on one argument node (module doc); expansions are :class:`NotPlain`."""
    pieces: list[tuple[str, bool]] = []  # (text, quoted)
    _pieces(node, pieces)
    text = "".join(p for p, _ in pieces)
    if any(not quoted and _GLOB.intersection(p) for p, quoted in pieces):
        pattern = "".join(p if not quoted else glob.escape(p) for p, quoted in pieces)
        return Word(text, pattern)
    return Word(text)


def _pieces(node: Any, out: list[tuple[str, bool]]) -> None:
    kind = node.type
    raw = node.text.decode("utf-8", errors="replace")
    if kind == "concatenation":
        for child in node.children:
            if not child.is_named:
                raise NotPlain(f"{raw!r} is not a plain word")
            _pieces(child, out)
    elif kind == "raw_string":
        out.append((raw[1:-1], True))
    elif kind == "string":
        for child in node.children:
            if child.is_named and child.type != "string_content":
                raise NotPlain(f"{_DESCRIPTIONS.get(child.type, 'an expansion')} inside {raw!r}")
        out.append((_double_quoted(raw[1:-1]), True))
    elif kind in ("word", "number"):
        _unquoted(raw, out)
    else:
        raise NotPlain(_described(kind) if kind in _DESCRIPTIONS else f"{raw!r} is not a plain word ({kind})")


def _double_quoted(body: str) -> str:
    if "$" in body.replace("\\$", "") or "`" in body.replace("\\`", ""):
        raise NotPlain("an expansion inside double quotes")
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] in '$`"\\\n':
            if body[i + 1] != "\n":
                out.append(body[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _unquoted(raw: str, out: list[tuple[str, bool]]) -> None:
    """Unquoted text: backslash escapes removed; a ``~`` where bash expands it (at the word's start, or
    after ``=`` or ``:``), ``$``, backticks, braces and stray quotes are not plain."""
    i = 0
    plain: list[str] = []
    while i < len(raw):
        ch = raw[i]
        if ch == "\\":
            if plain:
                out.append(("".join(plain), False))
                plain = []
            if i + 1 < len(raw) and raw[i + 1] != "\n":
                out.append((raw[i + 1], True))
            i += 2
            continue
        if ch == "~" and ((not plain and not out) or (plain and plain[-1] in "=:")):
            raise NotPlain(f"{raw!r} starts a path with '~', which bash expands to a home directory")
        if ch in "$`{}'\"":
            raise NotPlain(f"{raw!r} holds an unquoted {ch!r}, which bash expands")
        plain.append(ch)
        i += 1
    if plain:
        out.append(("".join(plain), False))


def expand(word: Word, cwd: str) -> list[str]:
    """The words bash passes for ``word`` run in ``cwd``: a glob's sorted matches, or the word itself when none match.

    The walk is bounded: at most :data:`MAX_GLOB_ENTRIES` directory entries are
    looked at and :data:`MAX_GLOB_MATCHES` kept (``/*/*/*/*`` would otherwise
    walk the whole file system before anyone is asked); past either the word
    is not plain.
    """
    if word.pattern is None:
        return [word.text]
    pattern = word.pattern
    if "**" in pattern or "[^" in pattern or "[[:" in pattern:
        raise NotPlain(f"{word.text!r}: this glob depends on bash's own options or syntax")
    if any(part.startswith(".") and _GLOB.intersection(part) for part in pattern.split("/")):
        raise NotPlain(f"{word.text!r}: a glob over dot-files may match '..' in some bash versions")
    return sorted(_bounded_glob(pattern, cwd, word.text)) or [word.text]


MAX_GLOB_ENTRIES = 20_000


def _bounded_glob(pattern: str, cwd: str, shown: str) -> list[str]:
    absolute = pattern.startswith("/")
    parts = pattern.lstrip("/").split("/")
    found = ["/" if absolute else ""]
    budget = MAX_GLOB_ENTRIES
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        grown: list[str] = []
        for prefix in found:
            here = os.path.join(cwd, prefix) if prefix else cwd
            if part == "":  # a trailing "/": directories only
                if os.path.isdir(here):
                    grown.append(prefix + "/" if not prefix.endswith("/") else prefix)
                continue
            if not glob.has_magic(part):
                grown.append(prefix + part if prefix.endswith("/") or not prefix else f"{prefix}/{part}")
                continue
            try:
                with os.scandir(here) as entries:
                    for entry in entries:
                        budget -= 1
                        if budget < 0:
                            raise NotPlain(f"{shown!r}: the glob looks at more than {MAX_GLOB_ENTRIES} files")
                        if entry.name.startswith(".") or not fnmatch.fnmatchcase(entry.name, part):
                            continue
                        if last or entry.is_dir():
                            grown.append(prefix + entry.name if prefix.endswith("/") or not prefix else f"{prefix}/{entry.name}")
            except OSError:
                continue
        if len(grown) > MAX_GLOB_MATCHES:
            raise NotPlain(f"{shown!r} matches more than {MAX_GLOB_MATCHES} files")
        found = grown
    return [path for path in found if os.path.lexists(os.path.join(cwd, path))]
