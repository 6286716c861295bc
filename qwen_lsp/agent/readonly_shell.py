"""Which main-chat shell commands run without asking: Qwen Code 0.24.4's read-only rule, kept narrower.

In ``default`` (and ``auto-edit`` and ``auto``) mode Qwen Code 0.24.4 runs a
shell command without a confirmation when its classifier
(``isShellCommandReadOnlyAST`` in ``shellReadOnlyChecker.ts``) finds it
read-only: every command in it is one of ``READ_ONLY_ROOT_COMMANDS``, with
the per-command checks (``find -delete``/``-exec``, ``sort -o``, ``uniq``
with an output file, ``rg --pre``…), no writing redirection, no
substitution that is not itself read-only.

We follow the same rule on a smaller, provable subset, because here the
command comes from a model that read an untrusted repository:

* the command must pass the forks' read-only parser (``tools/shell.py``:
  a ``|`` pipeline of ``ls cat head tail grep rg find wc sort uniq pwd``
  without the options that write or run programs; no ``;``, ``&&``,
  ``||``, ``&``, redirections, subshells, ``$``, backticks or newlines);
* no word may contain a glob or brace character (``* ? [ ] { }``) or start
  with ``~``, so what the shell expands is exactly what was checked;
* every argument naming a path — or naming an existing file, so that a
  symlink the repository ships (``notes.txt -> ~/.aws/credentials``) counts
  — must resolve inside the workspace (the CLI allows ``cat ~/.ssh/id_rsa``;
  we ask first), and no option may follow symlinks out of a tree
  (``grep -R``, ``rg -L``/``--follow``, ``find -L``/``-follow``).

Everything else — ``git``, ``sed``, ``awk``, ``echo`` included, which the
CLI also lets through — still asks: ``git diff`` and ``git status`` run
programs a repository's own ``.git/config`` names, and ``sed``/``awk``
scripts can write files. The command then runs as asked (``bash -c``).
"""

from __future__ import annotations

from pathlib import Path

from .tools.shell import ShellRefused, parse_read_only, path_arguments
from .tools.workspace import resolved_inside

_EXPANDING = frozenset("*?[]{}")
_FOLLOWS_LINKS: dict[str, tuple[str, frozenset[str]]] = {
    # program: (short option letter that follows symlinks, long spellings)
    "grep": ("R", frozenset({"--dereference-recursive"})),
    "rg": ("L", frozenset({"--follow"})),
    "find": ("L", frozenset({"-follow"})),
}


def is_read_only(command: str, cwd: Path, workspace_root: Path) -> bool:
    """True when ``command`` may run without asking by the rules in the module doc (stats files: call off the event loop)."""
    try:
        pipeline = parse_read_only(command)
    except ShellRefused:
        return False
    root = workspace_root.resolve()
    for stage in pipeline.stages:
        if any(word.startswith("~") or _EXPANDING.intersection(word) for word in stage) or _follows_links(stage):
            return False
        try:
            for raw in {*path_arguments(stage), *_existing(stage[1:], cwd)}:
                candidate = Path(raw) if Path(raw).is_absolute() else cwd / raw
                if resolved_inside(candidate, root) is None:
                    return False
        except (OSError, ValueError):  # a name too long to stat, say: not provably read-only
            return False
    return True


def _follows_links(argv: list[str]) -> bool:
    letter, long = _FOLLOWS_LINKS.get(argv[0], ("", frozenset()))
    for arg in argv[1:]:
        if arg in long or (letter and arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]):
            return True
    return False


def _existing(words: list[str], cwd: Path) -> list[str]:
    """Words that name an existing file or directory from ``cwd`` (a symlink is checked where it points)."""
    found = []
    for word in words:
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        if value and not value.startswith("-") and "\0" not in value and (cwd / value).exists():
            found.append(value)
    return found
