"""Every subcommand takes its options before, between or after its positional text."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qwen_lsp.cli import build_parser

# One command line per subcommand that has both options and positionals, options written last;
# the test moves each option (with its value) to every other place and expects the same result.
EXAMPLES: dict[str, tuple[list[str], list[list[str]]]] = {
    # subcommand: (positionals, options)
    "chat": (["explain", "this"], [["--session", "S1"], ["--approval-mode", "plan"]]),
    "skills": (["list"], [["--json"]]),
    "memory": (["recall", "how", "do", "we", "run", "tests"], [["--no-model"], ["--json"], ["--scope", "team"]]),
}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _has_options_and_positionals(p: argparse.ArgumentParser) -> bool:
    kinds = {bool(a.option_strings) for a in p._actions if not isinstance(a, argparse._HelpAction)}
    return kinds == {True, False}


def test_the_examples_cover_every_subcommand_with_options_and_positionals():
    assert {name for name, p in _subparsers().items() if _has_options_and_positionals(p)} == set(EXAMPLES)


@pytest.mark.parametrize("command", sorted(EXAMPLES))
def test_options_before_between_and_after_the_positionals_parse_alike(command: str):
    positionals, options = EXAMPLES[command]
    expected = vars(build_parser().parse_args([command, *positionals, *(t for o in options for t in o)]))
    for at in range(len(positionals) + 1):
        for moved in options:
            rest = [t for o in options if o is not moved for t in o]
            argv = [command, *positionals[:at], *moved, *positionals[at:], *rest]
            assert vars(build_parser().parse_args(argv)) == expected, argv
    all_first = [command, *(t for o in options for t in o), *positionals]
    assert vars(build_parser().parse_args(all_first)) == expected


def test_text_after_a_double_dash_is_text_even_when_it_looks_like_an_option():
    args = build_parser().parse_args(["chat", "--session", "S1", "--", "--json", "-x", "fix"])
    assert (args.session, args.prompt) == ("S1", ["--json", "-x", "fix"])
    args = build_parser().parse_args(["memory", "forget", "--yes", "--", "--scope"])
    assert (args.action, args.text, args.yes, args.scope) == ("forget", ["--scope"], True, None)


def test_memory_recall_runs_with_the_option_first_or_last(tmp_path: Path):
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    env["HOME"] = str(home)
    outputs = []
    for argv in (["memory", "recall", "--no-model", "how do we run tests"], ["memory", "recall", "how do we run tests", "--no-model"]):
        done = subprocess.run([sys.executable, "-m", "qwen_lsp", *argv], cwd=repo, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
