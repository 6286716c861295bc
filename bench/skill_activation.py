"""How fast a ``didOpen`` decides which conditional skills activate, and how fast a refresh is.

Setup: a temporary project with 1,000 conditional skills of 3 globs each
(a directory-scoped TypeScript glob, a braced package glob, and an
extension glob shared by ten skills), plus a handful of broad ``**/test_*``
globs that land in the catch-all buckets.

Measurements (``python -m bench.skill_activation``):

* ``skill_activation.decide_p50/p99`` — ``SkillManager.activate_for_paths``
  on one never-seen path, misses and hits mixed (target: p99 ≤ 1 ms).
  Baseline: ``Path.relative_to`` plus one compiled glob-regex match on the
  same path — the cost of checking a single glob.
* ``skill_activation.engine_did_open_p99`` — the whole server-side path of a
  ``didOpen`` below the JSON-RPC layer: ``Engine.document_opened`` (skills
  and 20 conditional rules matched, listener called) on fresh paths; same
  baseline.
* ``skill_activation.refresh_one_change`` — ``refresh()`` after one SKILL.md
  changed; baseline: a cold load (new manager, empty glob cache).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path

import os

from bench.harness import emit, log, median, percentile
from qwen_lsp.workspace import Listeners, Workspace
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.skills import SkillManager
from qwen_lsp.matching.globs import compile_glob

SKILLS = 1000
MISSES = 3000
SEED = 7


def skill_globs(i: int) -> list[str]:
    globs = [f"src/mod{i}/**/*.ts", f"packages/pkg{i}/{{lib,src}}/**", f"**/*.x{i % 100}"]
    if i % 50 == 0:
        globs[2] = f"**/test_*{i}.py"  # broad globs with no literal prefix
    return globs


def write_project(root: Path) -> None:
    for i in range(SKILLS):
        d = root / ".qwen/skills" / f"skill-{i}"
        d.mkdir(parents=True)
        paths = "".join(f"  - '{g}'\n" for g in skill_globs(i))
        (d / "SKILL.md").write_text(
            f"---\nname: skill-{i}\ndescription: Conventions for module {i}\npaths:\n{paths}---\nBody {i}\n",
            encoding="utf-8",
        )


def miss_path(rng: random.Random, k: int) -> str:
    return rng.choice(
        [
            f"app/components/Button{k}.tsx",
            f"src/other{k}/deep/file.ts",
            f"packages/unknown{k}/lib/index.js",
            f"docs/guide{k}.md",
            f"tests/unit/test_thing{k}.py",
        ]
    )


def time_call(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        write_project(root)
        bundled = Path(tmp) / "no-bundled"

        compile_glob.cache_clear()
        cold_start = time.perf_counter()
        manager = SkillManager(root, bundled_dir=bundled)
        manager.refresh()
        cold = time.perf_counter() - cold_start
        log(f"cold load of {len(manager.skills())} skills: {cold * 1000:.1f} ms")

        # Decision latency: fresh paths, misses and hits (each hit activates a distinct skill).
        hit_targets = rng.sample(range(SKILLS), 500)
        samples: list[tuple[str, str]] = [("miss", str(root / miss_path(rng, k))) for k in range(MISSES)]
        samples += [("hit", str(root / f"src/mod{i}/a/b/file{i}.ts")) for i in hit_targets]
        rng.shuffle(samples)
        times = {"hit": [], "miss": []}
        for kind, path in samples:
            times[kind].append(time_call(manager.activate_for_paths, [path]))
        assert len(manager.visible_names()) >= 500, "every hit path should have activated its skill"

        one_glob = compile_glob("src/mod1/**/*.ts")[0].matches

        def baseline_check(path: str) -> None:
            one_glob(Path(path).relative_to(root).as_posix())

        base = [time_call(baseline_check, p) for _, p in samples]
        every = times["hit"] + times["miss"]
        base_p50, base_p99 = percentile(base, 50), percentile(base, 99)
        emit("skill_activation.decide_p50", percentile(every, 50) * 1e6, "us", base_p50 * 1e6, skills=SKILLS,
             globs=SKILLS * 3, samples=len(every))
        emit("skill_activation.decide_p99", percentile(every, 99) * 1e6, "us", base_p99 * 1e6, skills=SKILLS,
             globs=SKILLS * 3, target_us=1000)
        emit("skill_activation.decide_hit_p99", percentile(times["hit"], 99) * 1e6, "us", base_p99 * 1e6,
             samples=len(times["hit"]))
        emit("skill_activation.decide_miss_p99", percentile(times["miss"], 99) * 1e6, "us", base_p99 * 1e6,
             samples=len(times["miss"]))

        # The engine's didOpen path: skills + conditional rules + the listener.
        os.environ["HOME"] = str(Path(tmp) / "home")
        os.environ.pop("QWEN_HOME", None)
        rules = root / ".qwen" / "rules"
        rules.mkdir(parents=True)
        for r in range(20):
            (rules / f"rule{r}.md").write_text(f"---\npaths: ['lib{r}/**/*.go']\n---\nRule {r}\n", encoding="utf-8")
        notified: list[object] = []
        engine = Workspace(root, counter=TokenCounter(), listeners=Listeners(skills_changed=notified.append))
        fresh = [str(root / miss_path(rng, MISSES + k)) for k in range(MISSES)]
        fresh += [str(root / f"src/mod{i}/x/y/open{i}.ts") for i in rng.sample(range(SKILLS), 500)]
        rng.shuffle(fresh)
        opened = asyncio.run(time_did_open(engine, fresh))
        assert notified, "hits should have notified the editor"
        emit("skill_activation.engine_did_open_p99", percentile(opened, 99) * 1e6, "us", base_p99 * 1e6,
             samples=len(opened), target_us=1000)

        # Refresh after one SKILL.md edit, against the cold load.
        runs = []
        for n in range(5):
            target = root / ".qwen/skills/skill-3/SKILL.md"
            target.write_text(
                f"---\nname: skill-3\ndescription: edited {n}\npaths:\n  - 'lib/edit{n}/**'\n---\nBody\n",
                encoding="utf-8",
            )
            runs.append(time_call(manager.refresh))
        emit("skill_activation.refresh_one_change", median(runs) * 1000, "ms", cold * 1000, skills=SKILLS)


async def time_did_open(engine: Workspace, paths: list[str]) -> list[float]:
    """Seconds per ``await engine.document_opened`` (the handler's whole path), rules loaded by the first."""
    await engine.document_opened(Path(paths[0]), "file://" + paths[0])
    times = []
    for p in paths:
        start = time.perf_counter()
        await engine.document_opened(Path(p), "file://" + p)
        times.append(time.perf_counter() - start)
    return times


if __name__ == "__main__":
    main()
