"""Test strength of the parsers, measured by mutation testing (mutmut 3) on a copy of the repository.

A mutant is the module with one small change (``<`` for ``<=``, a string
altered, a ``continue`` for a ``break``); the focused tests *kill* it when
at least one of them fails. The share of meaningful mutants killed says how
much of the module's behaviour the tests pin down — line coverage cannot:
a line can run under a test that never looks at its result.

``python -m bench.mutation [--quick] [target ...]`` copies the tracked files
of this checkout to a temporary directory (the work tree is never touched),
and for each target runs mutmut restricted to that one module with only its
focused test files, on ``--max-children 2`` (a shared two-core machine).
Each target prints one line::

    {"name": "mutation.globs", "value": 93.1, "unit": "% killed",
     "killed": 175, "total": 188, "excluded": 7, "survivors": [...], ...}

``total`` counts the meaningful mutants: everything mutmut made in the
target's functions (``functions`` narrows a module to the part under test)
minus the equivalent mutants listed with a reason in
``bench/mutation_equivalents.json``. An exclusion is checked against the
mutant's current diff, so a listed mutant that no longer exists, or whose
diff changed after an edit of the module, is reported as ``stale`` and not
excluded. Timeouts count as killed (the test run noticed), as in mutmut.
``baseline`` is null: the figure is an absolute share, target ≥ 90 %.

mutmut is not a project dependency. Install it in a scratch venv that also
has the project's dependencies but not the project itself, and point
``MUTMUT`` at it::

    python3 -m venv /tmp/mutvenv
    /tmp/mutvenv/bin/pip install mutmut -e '.[dev]' && /tmp/mutvenv/bin/pip uninstall -y qwen-lsp
    MUTMUT=/tmp/mutvenv/bin/mutmut .venv/bin/python -m bench.mutation

Without mutmut the script says how to install it and exits 2. ``--quick``
checks the set-up only (targets, test files, exclusions parse) and prints
one line; it needs no mutmut, so the benchmark smoke test can run it.
Full run: about 10 minutes on two cores.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.harness import emit, log

REPO = Path(__file__).resolve().parent.parent
EQUIVALENTS_FILE = Path(__file__).with_name("mutation_equivalents.json")


@dataclass(frozen=True)
class Target:
    name: str
    module: str
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()
    """Mutants counted only in these functions (empty: the whole module)."""


TARGETS = (
    Target(
        "globs",
        "qwen_lsp/matching/globs.py",
        ("tests/test_skills_activation.py", "tests/security/test_matching.py", "tests/test_skills_core.py",
         "tests/reliability/test_globs_spec.py", "tests/reliability/test_properties_globs.py"),
    ),
    Target(
        "imports",
        "qwen_lsp/context/imports.py",
        ("tests/test_context_imports.py", "tests/reliability/test_imports_spec.py",
         "tests/reliability/test_properties_imports.py"),
    ),
    Target(
        "secrets",
        "qwen_lsp/memory/secrets.py",
        ("tests/memory/test_secrets.py", "tests/memory/test_qwen_code_vectors.py",
         "tests/reliability/test_secrets_spec.py", "tests/reliability/test_properties_secrets.py"),
    ),
    Target(
        "yaml_frontmatter",
        "qwen_lsp/text/yaml_frontmatter.py",
        ("tests/test_skills_core.py", "tests/security/test_trust_and_parsing.py",
         "tests/reliability/test_frontmatter_spec.py", "tests/reliability/test_properties_frontmatter.py"),
    ),
    Target(
        "skill_frontmatter",
        "qwen_lsp/skills/parse.py",
        ("tests/test_skills_core.py", "tests/security/test_trust_and_parsing.py",
         "tests/reliability/test_frontmatter_spec.py", "tests/reliability/test_properties_frontmatter.py"),
        ("normalize_content", "split_frontmatter", "parse_skill", "_yaml_message"),
    ),
    Target(
        "index_sanitize",
        "qwen_lsp/memory/index.py",
        ("tests/memory/test_index.py", "tests/memory/test_qwen_code_vectors.py",
         "tests/reliability/test_index_spec.py", "tests/reliability/test_properties_index.py"),
        ("sanitize_field", "truncate_field"),
    ),
)

_NOT_KILLED = (0, 2, 5, 33, 34, None)
"""mutmut exit codes: 0 survived, 5/33 no test ran, 2 interrupted, 34 skipped, None not run; failures and timeouts kill."""
_SPINNER = tuple("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
_MUTANT_FUNCTION = re.compile(r"\.x_?(?:ǁ\w+ǁ)?(\w+?)__mutmut_\d+$")


def mutmut_command() -> str | None:
    explicit = os.environ.get("MUTMUT")
    if explicit:
        return explicit if Path(explicit).exists() else None
    return shutil.which("mutmut")


def load_equivalents() -> dict[str, dict[str, dict[str, str]]]:
    """``{target: {mutant: {"diff": the mutated line, stripped, "reason": why no test can kill it}}}``."""
    data = json.loads(EQUIVALENTS_FILE.read_text(encoding="utf-8"))
    return {name: dict(entries) for name, entries in data.items() if not name.startswith("_")}


def copy_repo(dest: Path) -> None:
    """The tracked files of this checkout (what would be committed), without the VS Code extension."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        if rel.startswith("vscode-extension/"):
            continue
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def configure(workdir: Path, target: Target) -> None:
    tests = [t for t in target.tests if (workdir / t).exists()]
    config = (
        "\n[tool.mutmut]\n"
        'source_paths = ["qwen_lsp"]\n'
        f"only_mutate = {json.dumps([target.module])}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"]\n'
    )
    with (workdir / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write(config)


def mutant_diff(mutmut: str, workdir: Path, mutant: str) -> str:
    shown = subprocess.run([mutmut, "show", mutant], cwd=workdir, capture_output=True, text=True, check=False).stdout
    return "\n".join(line for line in shown.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def _added_lines(diff: str) -> list[str]:
    return [line[1:].strip() for line in diff.splitlines() if line.startswith("+")]


def run_target(mutmut: str, target: Target, equivalents: dict[str, dict[str, str]]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix=f"mutation-{target.name}-") as tmp:
        workdir = Path(tmp)
        copy_repo(workdir)
        configure(workdir, target)
        subprocess.run(["git", "init", "-q", "."], cwd=workdir, check=False)
        log(f"mutation: {target.name}: mutmut run on {target.module}")
        # Tests that start `python -m qwen_lsp` must find the mutated copy, which is not installed.
        # The directory must exist before mutmut starts: an entry missing at start-up is cached as
        # "nothing here" by the import system, and mutmut then skips adding the same path itself.
        (workdir / "mutants").mkdir()
        env = {**os.environ, "PYTHONPATH": str(workdir / "mutants")}
        done = subprocess.run([mutmut, "run", "--max-children", "2"], cwd=workdir, env=env, check=False,
                              capture_output=True, text=True)
        meta_file = workdir / "mutants" / f"{target.module}.meta"
        codes: dict[str, int | None] = (
            json.loads(meta_file.read_text(encoding="utf-8"))["exit_code_by_key"] if meta_file.exists() else {}
        )
        if done.returncode != 0 or not codes or all(v is None for v in codes.values()):
            lines = (done.stdout + done.stderr).replace("\r", "\n").splitlines()
            tail = "\n".join(line for line in lines if line.strip() and not line.startswith(_SPINNER))[-3000:]
            raise RuntimeError(f"mutmut did not run the tests for {target.name} (exit {done.returncode}):\n{tail}")
        if target.functions:
            codes = {k: v for k, v in codes.items() if _function_of(k) in target.functions}
        excluded: list[str] = []
        stale: list[str] = []
        for mutant, entry in equivalents.items():
            if mutant in codes and entry["diff"] in _added_lines(mutant_diff(mutmut, workdir, mutant)):
                excluded.append(mutant)
                codes.pop(mutant)
            else:
                stale.append(mutant)
        killed = [k for k, v in codes.items() if v not in _NOT_KILLED]
        survivors = sorted(k for k, v in codes.items() if v in _NOT_KILLED)
        return {
            "killed": len(killed),
            "total": len(codes),
            "excluded": len(excluded),
            "stale_exclusions": stale,
            "survivors": [{"mutant": s, "diff": mutant_diff(mutmut, workdir, s)} for s in survivors],
        }


def _function_of(mutant: str) -> str:
    match = _MUTANT_FUNCTION.search(mutant)
    return match.group(1) if match else ""


def check_setup(equivalents: dict[str, dict[str, dict[str, str]]]) -> list[str]:
    """Problems with the targets: missing modules or test files, exclusions for unknown targets or without a reason."""
    names = {t.name for t in TARGETS}
    problems = [f"no module {t.module}" for t in TARGETS if not (REPO / t.module).is_file()]
    problems += [f"{t.name}: no test file {f}" for t in TARGETS for f in t.tests if not (REPO / f).is_file()]
    problems += [f"exclusions for unknown target {n}" for n in equivalents if n not in names]
    problems += [
        f"{n}: {m} needs a diff and a reason"
        for n, entries in equivalents.items()
        for m, e in entries.items()
        if not (e.get("diff") and e.get("reason"))
    ]
    return problems


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    wanted = [a for a in argv if not a.startswith("--")]
    equivalents = load_equivalents()
    if quick:
        problems = check_setup(equivalents)
        for problem in problems:
            log(f"mutation: {problem}")
        excluded = sum(len(e) for e in equivalents.values())
        emit("mutation.setup", len(TARGETS), "targets", None, problems=problems, excluded=excluded)
        return 1 if problems else 0
    mutmut = mutmut_command()
    if mutmut is None:
        print(
            "bench.mutation: mutmut is not installed. Install it in a scratch venv (not a project dependency):\n"
            "  python3 -m venv /tmp/mutvenv && /tmp/mutvenv/bin/pip install mutmut -e '.[dev]' "
            "&& /tmp/mutvenv/bin/pip uninstall -y qwen-lsp\n"
            "then run: MUTMUT=/tmp/mutvenv/bin/mutmut python -m bench.mutation",
            file=sys.stderr,
        )
        return 2
    unknown = set(wanted) - {t.name for t in TARGETS}
    if unknown:
        print(f"bench.mutation: unknown target(s) {sorted(unknown)}; known: {[t.name for t in TARGETS]}", file=sys.stderr)
        return 2
    status = 0
    for target in TARGETS:
        if wanted and target.name not in wanted:
            continue
        try:
            result = run_target(mutmut, target, equivalents.get(target.name, {}))
        except RuntimeError as exc:
            log(f"mutation: {exc}")
            status = 1
            continue
        total = int(result["total"])  # type: ignore[call-overload]
        share = 100.0 * int(result["killed"]) / total if total else 0.0  # type: ignore[call-overload]
        emit(f"mutation.{target.name}", round(share, 1), "% killed", None, module=target.module, **result)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
