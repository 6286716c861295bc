"""Fixtures shared by the whole suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.scripted_openai import ScriptedOpenAI


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
    (h / ".qwen").mkdir(parents=True)
    # Background memory runs (extraction after every turn, dream) would each take a scripted
    # reply and make every request count in the suite depend on timing; tests of memory turn
    # them back on in their own settings layer, which lies over this user file. Follow-up
    # suggestions (a side query after every turn) and skill review (a fork after 20 tool calls)
    # likewise; their tests turn them on.
    (h / ".qwen" / "settings.json").write_text(
        '{"memory": {"autoExtract": false, "autoDream": false}, "followup": {"enabled": false}, "skills": {"review": {"enabled": false}}}\n'
    )
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    return h
