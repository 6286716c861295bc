"""Package metadata a user's pip and an auditor read: SPDX licence, licence file, classifiers, dependencies."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_license_is_an_spdx_expression_with_its_file():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    meta = project["project"]
    assert meta["license"] == "Apache-2.0"  # a string, not the deprecated TOML table
    for name in meta["license-files"]:
        text = (ROOT / name).read_text()
        assert "Apache License" in text and "Version 2.0" in text and "END OF TERMS AND CONDITIONS" in text
    # SPDX strings need setuptools >= 77; older ones would reject or warn about the metadata.
    assert "setuptools>=77" in project["build-system"]["requires"]
    assert not any(c.startswith("License ::") for c in meta["classifiers"])  # PEP 639: no licence classifiers beside SPDX
    assert meta["urls"] and "Programming Language :: Python :: 3.11" in meta["classifiers"]


def _imported_top_level_modules() -> dict[str, list[str]]:
    """Each top-level module imported anywhere in ``qwen_lsp/`` (functions included) → the files importing it."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "qwen_lsp").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], []).append(str(path.relative_to(ROOT)))
    return found


def _requirement_name(spec: str) -> str:
    return canonical(re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0])


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_third_party_module_is_a_declared_dependency():
    """A transitive dependency that happens to be installed (``bracex`` via wcmatch, ``cattrs`` via pygls) is not a promise."""
    declared = {_requirement_name(spec) for spec in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    providers = packages_distributions()
    undeclared = {}
    for module, files in _imported_top_level_modules().items():
        if module in sys.stdlib_module_names or module == "qwen_lsp":
            continue
        dists = {canonical(d) for d in providers.get(module, [])}
        assert dists, f"{module} (imported by {files[0]}) is not installed: declare it and reinstall"
        if not dists & declared:
            undeclared[module] = sorted(dists)
    assert undeclared == {}


POSIX_ONLY = {"fcntl", "termios", "pwd", "grp", "resource", "tty", "pty", "posix"}
WINDOWS_ONLY = {"msvcrt", "winreg", "_winapi", "winsound"}


def _guarded_by_platform(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while (node := parents.get(node)) is not None:  # type: ignore[assignment]
        if isinstance(node, ast.If) and "sys.platform" in ast.unparse(node.test):
            return True
    return False


def test_platform_only_modules_are_imported_behind_a_platform_check():
    """The package imports on Windows and POSIX alike (its classifiers say OS Independent)."""
    unguarded = []
    for path in sorted((ROOT / "qwen_lsp").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            else:
                continue
            if set(names) & (POSIX_ONLY | WINDOWS_ONLY) and not _guarded_by_platform(node, parents):
                unguarded.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {', '.join(names)}")
    assert unguarded == []
    assert "Operating System :: OS Independent" in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["classifiers"]
