"""Fixtures shared by the whole suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from support.qwen_cli import qwen_cli_path
from support.quiet_home import write_quiet_settings
from support.scripted_openai import ScriptedOpenAI

# Property tests must repeat: the same examples on every run and machine (derandomize), no
# example database carried between runs, and no per-example deadline (a loaded CI machine is
# slow, and tests never assert wall-clock times). Tests that need fewer examples say so.
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None, max_examples=100)
settings.load_profile("repeatable")


@pytest.fixture
def scripted() -> Iterator[ScriptedOpenAI]:
    """A started scripted OpenAI-compatible server (see tests/support/scripted_openai.py)."""
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch HOME whose ``~/.qwen`` holds only a settings file turning background memory runs and skill review off.

    Tests that start the server or the CLI as a subprocess pass it through the
    child's environment too (``lsp_harness.server_env``).
    """
    h = tmp_path / "home"
    write_quiet_settings(h)  # background model requests off (support/quiet_home.py says why)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    return h


@pytest.fixture(scope="session")
def qwen_cli() -> str:
    """The real Qwen Code CLI 0.24.4's ``qwen`` (installed on first use; ``support/qwen_cli.py``)."""
    return qwen_cli_path()
