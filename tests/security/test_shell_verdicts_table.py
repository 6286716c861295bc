"""The command analyser against the verdicts Qwen Code 0.24.4 itself gives, command by command.

``tests/data/shell_verdicts_qwen_0.24.4.json`` was recorded by running the
CLI's own classifier (``scripts/record_shell_verdicts.mjs``: 734 commands in
a scratch git repository laid out as :func:`recorded_repo` lays it out).
Every command gets the CLI's verdict here too, except where we are stricter
on purpose — each such difference must carry a reason of one of the kinds
docs/security.md ("Commands") lists — and the few where bash's own reading
is exactly known and harmless (:data:`LOOSER`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from qwen_lsp.shell.analysis import analyse

DATA = Path(__file__).resolve().parent.parent / "data" / "shell_verdicts_qwen_0.24.4.json"
TABLE = json.loads(DATA.read_text())

STRICTER = {
    "outside": r"is outside the workspace|leaves the workspace|starts a path with '~'",
    "links or file lists": r"follows symbolic links",
    "writes or runs a program": r"writes files or runs another program|changes files|writes to a file",
    "not a known option": r"is not an option known to be read-only|is not a predicate known|is not a listing option",
    "not plain shell": r"the command holds|holds an unquoted|backslash-newline|redirection that cannot be read",
    "program interpreters": r"awk program|sed script|is not one of the read-only commands|names a program by its path",
    "waits or contacts the network": r"is not known to be harmless here|may contact the network",
}
"""Kinds of stricter verdict, as docs/security.md ("Commands") lists them, matched on the analyser's reason."""

LOOSER = {
    "find . -name *.py": "the glob is expanded as bash expands it (no match here: the literal pattern)",
    "sort *.txt": "the glob is expanded as bash expands it; every match is checked",
    "git log -- *.md": "the glob is expanded as bash expands it; every match is checked",
    "file README.md": "file is one of our read-only programs",
    "cd src && git status": "git's configuration is judged in every directory the command may be in",
    "ls > /dev/null": "writing to /dev/null changes nothing",
    "ls > /dev/null 2>&1": "writing to /dev/null changes nothing",
    "ls 2>/dev/null": "writing to /dev/null changes nothing",
    "ls #; touch X": "a comment, as bash reads it",
    "ls # && touch X": "a comment, as bash reads it",
    "ls;#touch X": "a comment, as bash reads it",
    "ls ;# touch X": "a comment, as bash reads it",
    "cat README.md #comment": "a comment, as bash reads it",
    "ls # c\npwd": "a comment, as bash reads it",
    "'ls' -la": "quote removal, as bash does it",
    '"ls"': "quote removal, as bash does it",
    '"ls" -la': "quote removal, as bash does it",
    "l\\s": "quote removal, as bash does it",
    '"l"s': "quote removal, as bash does it",
    "'git' status": "quote removal, as bash does it",
    "g\\it status": "quote removal, as bash does it",
    "c''at README.md": "quote removal, as bash does it",
}


@pytest.fixture(scope="module")
def recorded_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layout the verdicts were recorded in (the data file's ``cwd``)."""
    ws = tmp_path_factory.mktemp("recorded") / "ws"
    for name in "README.md cfg.txt data.txt list.txt docs/guide.md src/main.py script.sh prog.awk".split():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("x\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=ws, env=env, check=True)
    subprocess.run(["git", "add", "-A"], cwd=ws, env=env, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=ws, env=env, check=True)
    return ws


def test_the_table_is_the_recorded_one_and_big_enough() -> None:
    assert "0.24.4" in TABLE["header"]["recorded_by"] and len(TABLE["entries"]) >= 150


@pytest.mark.parametrize("entry", TABLE["entries"], ids=lambda e: e["command"][:60])
def test_each_command_gets_the_clis_verdict_or_a_documented_stricter_one(entry: dict, recorded_repo: Path) -> None:
    verdict = analyse(entry["command"], recorded_repo, [recorded_repo])
    ours = "allow" if verdict.read_only else "ask"
    if ours == entry["cli"]:
        assert entry["command"] not in LOOSER  # the list holds only what still differs
        return
    if ours == "allow":
        assert entry["command"] in LOOSER, f"runs without asking where 0.24.4 asks: {entry['command']!r}"
        return
    kinds = [kind for kind, pattern in STRICTER.items() if re.search(pattern, verdict.reason)]
    assert kinds, f"stricter than 0.24.4 for an undocumented reason: {entry['command']!r}: {verdict.reason}"


def test_git_with_a_program_in_the_repositorys_config_asks(tmp_path: Path) -> None:
    """0.24.4 asks on ``diff.external``/``core.fsmonitor`` only; any key that is not known to be harmless asks here."""
    for key, value in (("diff.external", "touch X"), ("core.fsmonitor", "touch X"), ("filter.x.clean", "touch X"),
                       ("diff.x.textconv", "touch X"), ("core.pager", "touch X"), ("include.path", "/tmp/other"),
                       ("gpg.program", "touch X"), ("core.worktree", "/"), ("alias.st", "!touch X")):
        repo = tmp_path / key
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "config", "--file", str(repo / ".git" / "config"), key, value], check=True)
        for command in ("git status", "git diff", "git log -p -1", "git grep x"):
            verdict = analyse(command, repo, [repo])
            assert not verdict.read_only and key in verdict.reason, (key, command, verdict)
    for case in TABLE["git_config_cases"]:
        if case["cli"] == "ask":
            repo = tmp_path / "case"
            if not repo.exists():
                subprocess.run(["git", "init", "-q", str(repo)], check=True)
                subprocess.run(["git", "config", "--file", str(repo / ".git" / "config"), "diff.external", "touch X"], check=True)
            assert not analyse(case["command"], repo, [repo]).read_only, case["command"]
