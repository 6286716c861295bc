"""The package type-checks clean under mypy (with the pydantic plugin), as part of the test command.

Type hints that nothing checks drift: before this test, the read-only tools
did not satisfy the ``Tool`` protocol and the model client did not match
the loop's ``StreamingModel``. Configuration lives in ``pyproject.toml``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_mypy_is_clean() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(REPO / ".mypy_cache")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
