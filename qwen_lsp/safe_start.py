"""Every start of the program drops the working directory from the module path before importing anything else.

``python -m qwen_lsp`` (how an editor starts the server from a configured
Python) puts the working directory first on ``sys.path``, and editors start
language servers *in the workspace*: a repository's ``yaml.py``,
``httpx.py`` or even ``json.py`` was imported, and ran, in place of the real
module (``-c`` puts ``''`` there, and an empty ``PYTHONPATH`` entry does the
same for the ``qwen-lsp`` script). Both entries, :mod:`qwen_lsp.__main__` and
the ``qwen-lsp`` script (:func:`main`), call :func:`drop_working_directory`
first; ``qwen_lsp/__init__.py`` imports nothing, so nothing was looked up on the
path before. What this cannot cover: a workspace holding a ``qwen_lsp``
package or ``qwen_lsp.py`` itself is found by ``python -m qwen_lsp`` before
any of our code runs. So a launcher must also pass ``-P`` (Python 3.11+:
no unsafe path; ``-I`` would also hide the user's site-packages) or start
the interpreter outside the workspace (docs/security.md, "Starting the server").
"""

from __future__ import annotations

import os
import sys


def drop_working_directory() -> None:
    """Remove ``''``, ``'.'`` and every ``sys.path`` entry that is the working directory (links followed).

    A virtual environment *inside* the project stays: only the directory
    itself is dropped, never what lies below it.
    """
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:  # a deleted working directory: drop the relative entries, which would name it
        here = None
    kept = []
    for entry in sys.path:
        if entry in ("", ".") or (here is not None and _same(entry, here)):
            continue
        kept.append(entry)
    sys.path[:] = kept


def _same(entry: str, here: str) -> bool:
    try:
        return os.path.realpath(entry) == here
    except (OSError, ValueError):
        return False


def main() -> int:
    """The ``qwen-lsp`` script: the path made safe, then the command line."""
    drop_working_directory()
    from .cli import main as cli_main

    return cli_main()
