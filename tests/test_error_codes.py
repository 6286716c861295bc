"""Every error kind carries its code, and ``docs/protocol.md``'s table says the same codes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from qwen_lsp.errors import ERROR_CODES, ErrorKind, EngineError
from qwen_lsp.llm.errors import ErrorKind as ModelErrorKind

ROOT = Path(__file__).resolve().parent.parent


def kinds() -> set[str]:
    found: set[str] = set()
    for arg in get_args(ErrorKind):
        found |= set(get_args(arg)) or {arg}
    return found


def test_every_kind_has_a_code_and_every_code_a_kind():
    assert kinds() == set(ERROR_CODES)
    assert set(get_args(ModelErrorKind)) <= kinds()  # the engine passes a model error's kind on as is
    assert EngineError("x", kind="memory_busy").code == -31014


def test_the_docs_table_lists_each_kind_with_its_code():
    text = (ROOT / "docs" / "protocol.md").read_text()
    documented: dict[str, int] = {}
    for code, names in re.findall(r"^\| (-3\d{4}) \| ((?:`\w+`(?: / )?)+) \|", text, flags=re.M):
        for name in re.findall(r"`(\w+)`", names):
            documented[name] = int(code)
    assert documented == {k: v for k, v in ERROR_CODES.items() if k != "invalid_params"}


def test_kinds_raised_by_the_cores_are_known():
    """A ``kind="..."`` literal in the package that is not an ErrorKind would fall through to no code (mypy checks it too)."""
    raised = set()
    for path in (ROOT / "qwen_lsp").rglob("*.py"):
        raised |= set(re.findall(r'EngineError\([^)]*?kind="(\w+)"', path.read_text(), flags=re.S))
    assert raised and raised <= kinds()
