"""Every spelling of every refused option is refused: the family, generated from the tables themselves.

For each program and git subcommand, each option whose kind writes, leaves
the tree or asks is tried as every prefix ``getopt_long`` would take for it
(the unambiguous ones), with ``=value`` and as a separate word, and each
refused short letter alone, bundled after a harmless flag and with a glued
value. None may come back read-only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qwen_lsp.shell.analysis import analyse
from qwen_lsp.shell.git import _SUBCOMMANDS
from qwen_lsp.shell.options import Kind, Table, parse
from qwen_lsp.shell.programs import PROGRAMS

REFUSED = {Kind.WRITES, Kind.LEAVES, Kind.ASKS}
TABLES: list[tuple[str, Table]] = [(name, p.options) for name, p in PROGRAMS.items()] + [(f"git {sub}", t) for sub, t in _SUBCOMMANDS.items()]
WORD_PRINTERS = ("echo", "printf")
"""They print their words rather than parse options (``printf -v`` is in the verdict table)."""


def spellings(table: Table) -> list[list[str]]:
    found = []
    for name, kind in table.long.items():
        if kind not in REFUSED:
            continue
        for end in range(1, len(name) + 1):
            prefix = name[:end]
            if sum(1 for other in table.long if other.startswith(prefix)) == 1 or prefix == name:
                found += [[f"--{prefix}"], [f"--{prefix}=x"], [f"--{prefix}", "x"]]
    flag = next((c for c, k in table.short.items() if k is Kind.FLAG), None)
    for letter, kind in table.short.items():
        if kind in REFUSED:
            found += [[f"-{letter}"], [f"-{letter}x"], [f"-{letter}", "x"]]
            if flag:
                found.append([f"-{flag}{letter}x"])
    return found


@pytest.mark.parametrize(("program", "table"), TABLES, ids=[t[0] for t in TABLES])
def test_no_spelling_of_a_refused_option_reads_as_harmless(program: str, table: Table) -> None:
    for args in spellings(table):
        assert parse(program, [*args, "file"], table).refusal is not None, (program, args)


ANALYSED = [t for t in TABLES if t[0] not in WORD_PRINTERS]


@pytest.mark.parametrize(("program", "table"), ANALYSED, ids=[t[0] for t in ANALYSED])
def test_the_same_spellings_ask_through_the_whole_analyser(program: str, table: Table, tmp_path: Path) -> None:
    for args in spellings(table):
        command = " ".join([program, *args, "file"])
        assert not analyse(command, tmp_path, [tmp_path]).read_only, command


def test_an_unknown_or_ambiguous_option_asks_and_an_unambiguous_one_is_taken(tmp_path: Path) -> None:
    for command in ("sort --zzz f", "grep --fil=x f", "ls --deref x", "sort --random-s=x f", "cat -Q f", "tail --s=1 f"):
        assert not analyse(command, tmp_path, [tmp_path]).read_only, command
    assert analyse("head --q f", tmp_path, [tmp_path]).read_only  # --q: only --quiet starts so


import tempfile  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

READ_ONLY = ["ls", "cat README.md", "git status", "grep -rn x .", "wc -l f", "head -5 f", "find . -name x", "echo hi", "pwd"]
WRITERS = ["touch X", "rm -f X", "mv a X", "cp a X", "tee X", "dd of=X", "chmod 777 X", "ln -s a X", "git commit -m X", "sh -c 'touch X'"]
JOINS = [";", "&&", "||", "|", "\n", " ; ", " && ", "\n\n", "#\n"]


SCRATCH = Path(tempfile.mkdtemp(prefix="analyser-"))
"""An empty folder the generated commands are judged in (one for the module: hypothesis reruns a test many times)."""


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(READ_ONLY), st.sampled_from(JOINS), st.sampled_from(WRITERS), st.booleans())
def test_a_writer_joined_to_a_read_only_command_is_never_read_only(reader: str, join: str, writer: str, first: bool) -> None:
    command = f"{writer}{join}{reader}" if first else f"{reader}{join}{writer}"
    assert not analyse(command, SCRATCH, [SCRATCH]).read_only, command


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gets_a_verdict_and_never_an_exception(command: str) -> None:
    assert analyse(command, SCRATCH, [SCRATCH]).safety in ("read-only", "write", "unknown")


def test_a_glob_over_the_whole_file_system_is_refused_before_it_is_walked() -> None:
    verdict = analyse("ls /*/*/*/*/*/*/*", SCRATCH, [SCRATCH])
    assert not verdict.read_only and "files" in verdict.reason


def test_a_lone_surrogate_is_not_plain() -> None:
    assert not analyse("ls \udced\udca0", SCRATCH, [SCRATCH]).read_only


def test_text_that_crashes_the_bash_grammar_never_reaches_it() -> None:
    """tree-sitter-bash 0.25.1 segfaults on ``{`` followed by some astral code points: judged in a child process,
    the analyser must answer (not kill it) for each, and a BMP character in the same places still parses."""
    import subprocess
    import sys

    probe = (
        "from pathlib import Path; from qwen_lsp.shell.analysis import analyse; import tempfile; t = Path(tempfile.mkdtemp())\n"
        "for c in ['{\\U000cb090', '|{\\U000e0001', 'a|{\\U0010ffff', 'echo {\\U0001f600}', 'ls \\U0001f600']:\n"
        "    assert not analyse(c, t, [t]).read_only\n"
        "for c in ['echo {\\u00e9', 'ls \\u4e00', 'echo \\u00e9']:\n"
        "    analyse(c, t, [t])\n"
        "from qwen_lsp.shell.syntax import _parser\n"
        "for cp in range(0x80, 0x10000):\n"
        "    if not 0xD800 <= cp <= 0xDFFF:\n"
        "        for template in ('{%s', '${%s', 'a {%s}', '%s'):\n"
        "            _parser().parse((template % chr(cp)).encode())\n"
        "print('answered')\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "answered", out.stderr[-2000:]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x10000), min_size=1, max_size=5), st.sampled_from(["{%s", "|{%s", "a {%s}", "%s"]))
def test_astral_text_in_any_place_is_refused_before_parsing(astral: str, template: str) -> None:
    verdict = analyse(template % astral, SCRATCH, [SCRATCH])
    assert not verdict.read_only and "Basic Multilingual Plane" in verdict.reason
