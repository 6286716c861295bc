"""The reference Qwen Code CLI (0.24.4) for the tests that run it beside qwen-lsp.

``scripts/install_qwen_cli.sh`` installs ``@qwen-code/qwen-code@0.24.4`` from the npm
registry into a cache folder (the same way ``vscode-extension/e2e/codeserver/install.sh``
provisions code-server) and prints its ``qwen``. A machine without npm skips these
tests, except under CI (``CI=true``), where a CLI that cannot be installed fails them:
the interop suite must never pass by not running.

``cli_env`` is the environment both tools get: one scratch ``HOME``, the scripted
endpoint, no variable of the caller's leaking in. ``QUIET_CLI_SETTINGS`` keeps the CLI
off every network but the endpoint (no usage statistics, no update check).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

VERSION = "0.24.4"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "install_qwen_cli.sh"
QUIET_CLI_SETTINGS = {"privacy": {"usageStatisticsEnabled": False}, "general": {"enableAutoUpdate": False}}

_found: list[str] = []


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def qwen_cli_path() -> str:
    """The installed CLI's executable; skips (fails under CI) when it cannot be installed."""
    if _found:
        return _found[0]
    try:
        done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = f"{SCRIPT.name} did not run: {exc}"
    else:
        lines = done.stdout.strip().splitlines()
        if done.returncode == 0 and lines and os.access(lines[-1], os.X_OK):
            _found.append(lines[-1])
            return lines[-1]
        why = f"{SCRIPT.name} failed ({done.returncode}): {done.stderr.strip()[-1500:]}"
    message = f"the Qwen Code CLI {VERSION} (npm @qwen-code/qwen-code) could not be installed: {why}"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def cli_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "QWEN_", "DASHSCOPE_"))}
    env.update(HOME=str(home), OPENAI_BASE_URL=base_url, OPENAI_API_KEY="test-key", NO_COLOR="1")
    env.update(extra)
    return env
