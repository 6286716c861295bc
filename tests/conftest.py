"""Fixtures shared by the whole suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.scripted_openai import ScriptedOpenAI


@pytest.fixture
def scripted() -> Iterator[ScriptedOpenAI]:
    """A started scripted OpenAI-compatible server (see tests/support/scripted_openai.py)."""
    with ScriptedOpenAI() as server:
        yield server
