"""Fills vscode-extension/bundled/libs with the server for one VS Code target, the way Microsoft's
Python tool extensions (vscode-python-tools-extension-template: black-formatter, isort, pylint)
ship theirs: the packages go inside the .vsix and run with the user's own Python.

Layout (read by bundled/launch.py):
  libs/common/   qwen_lsp from this checkout and every pure-Python dependency (py3-none-any wheels)
  libs/cp3NN/    the native dependencies for CPython 3.N on the target (pydantic-core, tiktoken,
                 regex, google-re2, pyyaml, watchdog, ...), one folder per CPython minor version

Wheels come from the package index with `pip download --only-binary=:all: --platform ...
--python-version ... --implementation cp` (no compiler, no sdist) and are unpacked as they are;
tests, __pycache__ and *.dist-info (except licence files) are left out to keep the .vsix small.
The unpacked dependencies are cached per target, CPython version and dependency list under
~/.cache/qwen-lsp-bundle, so a second build needs no network. qwen_lsp itself is always copied
fresh from the checkout, so the bundled server is the one built from the same commit.

Usage: python3 scripts/bundle.py <target>   (target: linux-x64, linux-arm64, darwin-arm64, win32-x64)
Needs Python 3.11+ with pip on the building machine; the target's Python is never run here.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

EXT = Path(__file__).resolve().parents[1]
REPO = EXT.parent
LIBS = EXT / "bundled" / "libs"
CACHE = Path(os.environ.get("QWEN_BUNDLE_CACHE", Path.home() / ".cache" / "qwen-lsp-bundle"))

# The CPython versions the .vsix carries native wheels for; the launcher names them when none fits.
PYTHONS = ("3.11", "3.12", "3.13")

# VS Code target -> wheel platform tags pip may pick (oldest glibc/macOS first is not needed: pip
# takes the best wheel whose tag is in the list).
PLATFORMS = {
    "linux-x64": ["manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64"],
    "linux-arm64": ["manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64"],
    "darwin-arm64": ["macosx_11_0_arm64", "macosx_12_0_arm64", "macosx_13_0_arm64", "macosx_14_0_arm64", "macosx_11_0_universal2", "macosx_12_0_universal2"],
    "win32-x64": ["win_amd64"],
}

LICENCE_PREFIXES = ("license", "licence", "copying", "notice", "authors")


def requirements() -> list[str]:
    """The server's runtime dependencies, exactly as pyproject.toml declares them."""
    with open(REPO / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def keep(name: str) -> bool:
    """False for what a running server never reads: tests, byte code, build metadata."""
    parts = name.split("/")
    if any(p == "__pycache__" or p.endswith(".pyc") for p in parts):
        return False
    if any(p in ("tests", "test", "testing") for p in parts[1:-1]) and not parts[0].endswith(".dist-info"):
        return False
    if parts[0].endswith(".dist-info"):
        # The licence files stay (they must travel with the code); METADATA keeps
        # importlib.metadata.version() working for the packages that ask for their own version.
        last = parts[-1].lower()
        return last == "metadata" or last.startswith(LICENCE_PREFIXES) or (len(parts) > 2 and parts[1] == "licenses")
    return True


def unpack(wheel: Path, dest: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.is_dir() or not keep(info.filename):
                continue
            target = dest / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            with z.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)


def download(target: str, version: str, dest: Path) -> None:
    """Every dependency wheel for one CPython version on one platform, binary only."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--only-binary=:all:",
           "--implementation", "cp", "--python-version", version, "-d", str(dest)]
    for plat in PLATFORMS[target]:
        cmd += ["--platform", plat]
    subprocess.run([*cmd, *requirements()], check=True)


def dependencies(target: str) -> Path:
    """The unpacked dependencies for `target` (common/ and cp3NN/), from the cache when there."""
    key = hashlib.sha256(json.dumps([target, PYTHONS, PLATFORMS[target], requirements(), 2]).encode()).hexdigest()[:16]
    done = CACHE / f"{target}-{key}"
    if (done / ".complete").exists():
        return done
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{target}-", dir=CACHE))
    try:
        for version in PYTHONS:
            wheels = tmp / "wheels" / version
            download(target, version, wheels)
            for wheel in sorted(wheels.glob("*.whl")):
                pure = wheel.name.endswith("-none-any.whl")
                unpack(wheel, tmp / ("common" if pure else "cp" + version.replace(".", "")))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(tmp / "wheels")
    (tmp / ".complete").write_text(target + "\n")
    shutil.rmtree(done, ignore_errors=True)
    tmp.rename(done)
    return done


def copy_server(dest: Path) -> None:
    """qwen_lsp from this checkout (with its bundled skills), without byte code."""
    shutil.copytree(REPO / "qwen_lsp", dest / "qwen_lsp", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(REPO / "LICENSE", dest / "qwen_lsp" / "LICENSE")


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] not in PLATFORMS:
        sys.exit(f"usage: bundle.py <target>; target is one of {', '.join(PLATFORMS)}")
    target = sys.argv[1]
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        sys.exit(f"bundle.py: {sys.executable} has no pip, which downloads the wheels; run it with a Python that has (PYTHON=... npm run package), or add it: {sys.executable} -m ensurepip")
    deps = dependencies(target)
    shutil.rmtree(LIBS, ignore_errors=True)
    shutil.copytree(deps, LIBS, ignore=shutil.ignore_patterns(".complete"))
    copy_server(LIBS / "common")
    (LIBS / "target.json").write_text(json.dumps({"target": target, "pythons": list(PYTHONS)}) + "\n")
    size = sum(f.stat().st_size for f in LIBS.rglob("*") if f.is_file())
    print(f"bundled/libs for {target}: {size / 1e6:.1f} MB unpacked", file=sys.stderr)


if __name__ == "__main__":
    main()
