"""Fuzzing the repository-controlled parsers for super-linear work: input of size n against 4n.

Time is never measured (tests never assert wall-clock times). Work is
counted instead: every Python line executed under the call, in any module
(``sys.settrace``), which is deterministic on every machine. A parser that
is linear does about 4× the work on 4× the input; a quadratic one does 16×.
The bound, 6×, leaves room for ``n log n`` sorting and constant start-up
work, and catches any quadratic step. What runs in C is not counted: RE2
is linear by construction, and one test scans megabytes in a subprocess
whose generous timeout only catches a catastrophic blow-up.

Inputs are a unit built by hypothesis from near-miss fragments, repeated to
about n characters.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from types import FrameType
from typing import Any

import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from qwen_lsp.context import find_imports
from qwen_lsp.context.code_regions import CodeRegions
from qwen_lsp.matching.globs import ActivationIndex, InvalidGlob, compile_glob
from qwen_lsp.memory.index import sanitize_field
from qwen_lsp.memory.secrets import scan_for_secrets
from qwen_lsp.skills.parse import SkillParseError, normalize_content, split_frontmatter
from qwen_lsp.text.yaml_frontmatter import load_frontmatter

SIZE = 2_000
GROWTH = 4
BOUND = 6.0
# settrace would clobber hypothesis's own tracer in the explain phase.
_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)


def lines_run(fn: Callable[[str], Any], arg: str) -> int:
    count = 0

    def local(frame: FrameType, event: str, _arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def global_(frame: FrameType, event: str, _arg: Any) -> Any:
        return local

    sys.settrace(global_)
    try:
        try:
            fn(arg)
        except (InvalidGlob, SkillParseError, yaml.YAMLError):  # the documented refusals
            pass
    finally:
        sys.settrace(None)
    return count


def grow(unit: str, size: int) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size]


def assert_linear(fn: Callable[[str], Any], unit: str) -> None:
    small = lines_run(fn, grow(unit, SIZE))
    large = lines_run(fn, grow(unit, SIZE * GROWTH))
    assert large <= BOUND * max(small, 50), (small, large)


def units(fragments: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(fragments), min_size=1, max_size=12).map("".join)


_SETTINGS = settings(max_examples=25, phases=_PHASES, suppress_health_check=[HealthCheck.too_slow])

_SECRET_FRAGMENTS = [
    "sk-", "a1-_", "T3Blbk", "sk-ant-", "hf_", "AKIA", "Z" * 15, "LTAI", "xoxb-", "0123456789", "SG.", "-----BEGIN",
    "-----END", " RSA ", "PRIVATE KEY", "PRIVATE KEY-----", " BLOCK-----", "-----", "é", "\U0001f600", " ", "\n",
]


@_SETTINGS
@given(unit=units(_SECRET_FRAGMENTS))
def test_secret_scanner_work_is_linear(unit: str) -> None:
    assert_linear(scan_for_secrets, unit)


@_SETTINGS
@given(unit=units(["@", "@./a", " ", "\n", "`", "```", "x@", "@/", "> ", "- ", "    ", "[", "]", "(", ")", "*", "_", "|"]))
def test_import_scanner_and_code_regions_work_is_linear(unit: str) -> None:
    assert_linear(find_imports, unit)
    assert_linear(lambda text: CodeRegions(text).contains(len(text) // 2), unit)


@_SETTINGS
@given(unit=units(["a", "*", "?", "+(", "@(", "!(", "|", ")", "[", "]", "{", "}", ",", "/", "**", ".", "\\"]))
def test_glob_compile_and_match_work_is_linear(unit: str) -> None:
    def compile_and_match(glob: str) -> None:
        compile_glob.cache_clear()
        index = ActivationIndex([("s", [glob[:200]])])  # repository globs are short; paths are not
        index.match("a/" * (len(glob) // 4) + "b.ts")
        for part in (compile_glob(glob) if "!(" not in glob else ()):
            part.matches("a" * len(glob))

    assert_linear(compile_and_match, unit)


@_SETTINGS
@given(unit=units(["\u200b", "`", "](", " ", "\t", "\x00", "a", "é", "\U0001f600", "\ud800", "\u2028"]))
def test_index_sanitiser_work_is_linear(unit: str) -> None:
    assert_linear(sanitize_field, unit)


@_SETTINGS
@given(unit=units(["a: b\n", "- x\n", "[", "]", "{", "}", "k:", " ", "\n", "'", '"', "#", "---\n", "\r\n", "\ufeff"]))
def test_frontmatter_work_is_linear(unit: str) -> None:
    def parse(text: str) -> None:
        try:
            load_frontmatter(split_frontmatter(normalize_content("---\n" + text + "\n---\n"))[0])
        except SkillParseError:
            pass

    assert_linear(parse, unit)


def test_megabytes_of_hostile_text_scan_in_a_subprocess() -> None:
    """RE2 work is not counted above; a catastrophic regex would not return within the generous timeout."""
    script = textwrap.dedent(
        """
        from qwen_lsp.memory.secrets import scan_for_secrets
        unit = "sk-" + "a1-_" * 200 + " -----BEGIN " + "A" * 100 + "PRIVATE KEY----- xoxb-" + "1" * 12 + " "
        print(scan_for_secrets(unit * (2_000_000 // len(unit))))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_the_work_counter_tells_quadratic_from_linear() -> None:
    """The bound above can fail: a quadratic loop exceeds it, a linear one stays within."""

    def quadratic(text: str) -> None:
        for i in range(len(text) // 10):
            for _ in range(i // 10):
                pass

    def linear(text: str) -> None:
        for _ in range(len(text) // 10):
            pass

    small, large = lines_run(quadratic, grow("a", SIZE)), lines_run(quadratic, grow("a", SIZE * GROWTH))
    assert large > BOUND * small
    assert_linear(linear, "a")
