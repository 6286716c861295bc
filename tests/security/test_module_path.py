"""No start of the server imports a module from the workspace it is started in.

Editors start language servers with the workspace as the working
directory, and ``python -m`` puts that directory first on the module path:
a repository's ``yaml.py`` was imported, and ran, when ``qwen.server.path``
named a Python. Here a workspace holds a module named like every module
the server imports (standard library and third-party, found by asking a
server started elsewhere), each of which leaves a mark when imported, and
the server is started in it each way it can be: the ``qwen-lsp`` script
(the Neovim recipe), ``python -m qwen_lsp``, ``python -P -m qwen_lsp`` (what
the extension runs) and the bundled launcher. None may leave a mark, and
each must still answer ``initialize``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.raw_peer import RawPeer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("qwen-lsp")
LAUNCHER = ROOT / "vscode-extension" / "bundled" / "launch.py"
ALWAYS = ("yaml", "httpx", "json", "pygls", "lsprotocol", "pydantic", "re2", "tiktoken", "watchdog", "cattrs", "attrs", "anyio", "logging", "argparse", "asyncio")


def frame(obj: object) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def serve_once(command: list[str], workspace: Path, home: Path, env: dict[str, str] | None = None) -> None:
    """Start the server in ``workspace``: initialize, a context request (which loads most of what a turn needs), then end of input."""
    peer = RawPeer(home, workspace, command=command, cwd=workspace, env=env)
    try:
        peer.request(2, "qwen/context", {})
        assert "result" in peer.response(2), peer.stderr()[-2000:]
        assert peer.proc.stdin is not None
        peer.proc.stdin.close()  # end of input: the server stops on its own
        peer.proc.wait(60)
    finally:
        peer.close()


@pytest.fixture(scope="module")
def imported_modules(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Every top-level module a server session imports, asked of a server started in a clean directory."""
    clean = tmp_path_factory.mktemp("clean")
    out = clean / "modules.txt"
    probe = (
        "import runpy, sys, atexit\n"
        f"atexit.register(lambda: open({str(out)!r}, 'w').write(' '.join(sorted({{m.split('.')[0] for m in sys.modules}}))))\n"
        "sys.argv = ['qwen-lsp', 'serve', '--stdio']\n"
        "runpy.run_module('qwen_lsp', run_name='__main__')\n"
    )
    (clean / "home").mkdir()
    serve_once([sys.executable, "-c", probe], clean, clean / "home")
    names = set(out.read_text().split()) | set(ALWAYS)
    return sorted(n for n in names if n.isidentifier() and n not in ("qwen_lsp", "__main__"))


def plant(workspace: Path, names: list[str], marks: Path) -> None:
    for name in names:
        (workspace / f"{name}.py").write_text(f"open({str(marks / name)!r}, 'w').close()\n")
    (workspace / "qwen_lsp").mkdir()
    (workspace / "qwen_lsp" / "__init__.py").write_text(f"open({str(marks / 'qwen_lsp')!r}, 'w').close()\n")
    (workspace / "qwen_lsp" / "__main__.py").write_text(f"open({str(marks / 'qwen_lsp.__main__')!r}, 'w').close()\n")


def fake_bundle(tmp: Path) -> Path:
    """The bundled launcher beside a libs/ that holds this checkout's package (as scripts/bundle.py lays it out)."""
    bundled = tmp / "bundled"
    (bundled / "libs" / "common").mkdir(parents=True)
    (bundled / "libs" / f"cp{sys.version_info[0]}{sys.version_info[1]}").mkdir()
    (bundled / "launch.py").write_text(LAUNCHER.read_text())
    (bundled / "libs" / "common" / "qwen_lsp").symlink_to(ROOT / "qwen_lsp")
    target = subprocess.run([sys.executable, "-c", "import runpy; print(runpy.run_path(%r)['host_target']())" % str(bundled / "launch.py")],
                            capture_output=True, text=True, check=True).stdout.strip()
    (bundled / "libs" / "target.json").write_text(json.dumps({"target": target, "pythons": [f"{sys.version_info[0]}.{sys.version_info[1]}"]}))
    return bundled / "launch.py"


STARTS = {
    "qwen-lsp script (Neovim recipe)": lambda launcher: [str(SCRIPT), "serve", "--stdio"],
    "python -P -m qwen_lsp (the extension)": lambda launcher: [sys.executable, "-P", "-m", "qwen_lsp", "serve", "--stdio"],
    "python -I -m qwen_lsp": lambda launcher: [sys.executable, "-I", "-m", "qwen_lsp", "serve", "--stdio"],
    "bundled launcher": lambda launcher: [sys.executable, str(launcher), "serve", "--stdio"],
}


@pytest.mark.parametrize("how", sorted(STARTS))
def test_no_start_imports_a_module_planted_in_the_workspace(tmp_path: Path, imported_modules: list[str], how: str) -> None:
    workspace, marks, home = tmp_path / "ws", tmp_path / "marks", tmp_path / "home"
    for d in (workspace, marks, home):
        d.mkdir()
    plant(workspace, imported_modules, marks)
    command = STARTS[how](fake_bundle(tmp_path) if how == "bundled launcher" else None)
    serve_once(command, workspace, home)
    assert sorted(p.name for p in marks.iterdir()) == [], f"imported from the workspace ({how})"


def test_python_m_without_flags_imports_nothing_planted_but_the_package_itself(tmp_path: Path, imported_modules: list[str]) -> None:
    """``python -m qwen_lsp`` with the workspace as cwd: the entry drops it from the path before any import;
    only a planted ``qwen_lsp`` package is out of its reach (found before our code runs), which is why launchers pass ``-P``."""
    workspace, marks, home = tmp_path / "ws", tmp_path / "marks", tmp_path / "home"
    for d in (workspace, marks, home):
        d.mkdir()
    plant(workspace, imported_modules, marks)
    (workspace / "qwen_lsp" / "__init__.py").unlink()
    (workspace / "qwen_lsp" / "__main__.py").unlink()
    (workspace / "qwen_lsp").rmdir()
    serve_once([sys.executable, "-m", "qwen_lsp", "serve", "--stdio"], workspace, home)
    assert sorted(p.name for p in marks.iterdir()) == []
