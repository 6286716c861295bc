"""The arrows of the architecture, checked on the source: server → engine → features → agent → cores, never back.

The graph is every import in ``qwen_lsp/``: module level, inside functions
and under ``TYPE_CHECKING`` alike (a type-only arrow still ties two modules
together for the next maintainer). Two rules:

- no cycle: the strongly connected components of the graph are all single
  modules;
- no upward arrow: cores (context, memory, skills, compaction, sessions,
  llm, matching, text, settings, files, shell) never import pygls,
  the server, the engine, the workspace, the CLI, the agent or a feature;
  the agent never imports a feature or anything above it; a feature never
  imports the server, the engine, the workspace or the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "qwen_lsp"
CORES = ("context", "memory", "skills", "compaction", "sessions", "llm", "matching", "text", "settings", "files", "shell")
ABOVE_FEATURES = ("qwen_lsp.server", "qwen_lsp.commands", "qwen_lsp.engine", "qwen_lsp.workspace", "qwen_lsp.cli", "pygls", "lsprotocol")
ABOVE_AGENT = (*ABOVE_FEATURES, "qwen_lsp.features")
ABOVE_CORES = (*ABOVE_AGENT, "qwen_lsp.agent")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved against its package)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            # ``from pkg import mod`` is an arrow to ``pkg.mod``, not to ``pkg``'s ``__init__``.
            submodules = {f"{target}.{alias.name}" for alias in node.names} & MODULES.keys()
            found.update(submodules or {target})
    return found


def project_edges(path: Path) -> set[str]:
    """The project modules ``path`` imports."""
    out = set()
    for name in imports(path):
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != module_name(path):
            out.add(name)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle() -> None:
    graph = {name: project_edges(path) for name, path in MODULES.items()}
    assert cycles(graph) == []


def _offending(packages: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{path.relative_to(PACKAGE.parent)}: {name}"
        for package in packages
        for path in sorted(package.rglob("*.py"))
        for name in imports(path)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    )


@pytest.mark.parametrize("core", CORES)
def test_cores_import_nothing_above_them(core: str) -> None:
    assert _offending([PACKAGE / core], ABOVE_CORES) == []


def test_the_agent_imports_no_feature() -> None:
    assert _offending([PACKAGE / "agent"], ABOVE_AGENT) == []


def test_features_import_no_adapter_or_engine() -> None:
    assert _offending([PACKAGE / "features"], ABOVE_FEATURES) == []


def test_every_package_is_classified() -> None:
    """A new top-level package must be placed in a layer here, or the checks above would not see it."""
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == {*CORES, "agent", "features", "commands", "server"}


def test_commands_import_no_adapter() -> None:
    """The slash commands sit between the adapters and the workspace: any client runs them, none is imported."""
    assert _offending([PACKAGE / "commands"], ("qwen_lsp.server", "qwen_lsp.cli", "pygls", "lsprotocol")) == []


def test_the_checker_sees_cycles_and_relative_imports() -> None:
    """Guards the guard: a known relative import is recognised, and a planted cycle is found."""
    assert "qwen_lsp.agent.fork" in imports(PACKAGE / "features" / "memory" / "fork.py")
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_each_feature_lives_in_the_folder_named_after_it() -> None:
    """``features/<name>`` (a package or a module) holds the feature called ``<name>``, and nothing else defines one."""
    import importlib

    from qwen_lsp.agent.hooks import Feature

    for name in MODULES:
        if not name.endswith("__main__"):  # running it would start the CLI
            importlib.import_module(name)
    found = {}
    pending = list(Feature.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("qwen_lsp."):
            found[cls.name] = cls.__module__
    assert set(found) == {"memory", "compaction", "skill_review", "followups", "edits", "editor_context"}
    for name, module in found.items():
        assert module.split(".")[:3] == ["qwen_lsp", "features", name], (name, module)


# ------------------------------------------------------------------ the import-linter contract (pyproject.toml)

import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tomllib  # noqa: E402

ROOT = PACKAGE.parent
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**__import__("os").environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_layer_contract_holds() -> None:
    out = _lint(ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout


def test_the_contract_fails_on_an_upward_import(tmp_path: Path) -> None:
    """A core importing the server, or one feature another: import-linter says which contract and which line."""
    shutil.copytree(PACKAGE, tmp_path / "qwen_lsp", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (tmp_path / "qwen_lsp" / "text" / "__init__.py").open("a") as f:
        f.write("\nimport qwen_lsp.server.app  # an upward arrow\n")
    with (tmp_path / "qwen_lsp" / "features" / "memory" / "__init__.py").open("a") as f:
        f.write("\nimport qwen_lsp.features.edits.offer  # a feature that knows another\n")
    out = _lint(tmp_path)
    assert out.returncode != 0
    assert "qwen_lsp.text is not allowed to import qwen_lsp.server" in out.stdout
    assert "qwen_lsp.features.memory is not allowed to import qwen_lsp.features.edits" in out.stdout


def test_every_top_level_module_has_a_place_in_the_layers() -> None:
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    placed = {name.strip() for layer in contract["layers"] for name in layer.replace("|", ":").split(":")}
    top = {f"qwen_lsp.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    top |= {f"qwen_lsp.{p.name}" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert top <= placed, sorted(top - placed)


def test_every_feature_package_is_in_the_independence_contract() -> None:
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][1]
    packages = {f"qwen_lsp.features.{p.name}" for p in (PACKAGE / "features").iterdir() if (p / "__init__.py").exists()}
    assert contract["type"] == "independence" and set(contract["modules"]) == packages


MAX_FUNCTION_LINES = 80


def test_no_function_is_longer_than_a_screen() -> None:
    """Long functions are split by what each part does; a nested function counts within its parent."""
    import ast

    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []
