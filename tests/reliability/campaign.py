"""The kill -9 campaign: a real server killed at random points of its work, and what must hold afterwards.

Shared by ``test_kill_campaign.py`` (50 kills, part of every test run) and
``bench/kill_campaign.py`` (a larger run that prints the counters as JSON).

Each round starts ``qwen-lsp serve --stdio`` on one scratch project, first
checks what the previous kill left (every session touched so far resumes;
the memory index lists exactly the memory files once the start-up rebuild
ran), then starts one piece of work and sends SIGKILL after a random delay
(fixed seed): a streamed turn, a turn whose tool call edits a file
(approval mode ``auto-edit`` or ``yolo``), a memory extraction, a dream, or
a ``qwen/compress``. The model is the scripted server, answering slowly so
the kill lands inside the work. After every kill, from outside:

* every complete line of every session file is a readable record (a torn
  last line is allowed: the reader skips it);
* every memory file parses (no half-written file: writes are atomic);
* a dream lock left by the killed process does not block the next dream
  (the next dream round must see its dream start);

and at the end one last server resumes every session and sends one more
turn in each, whose request must pair every tool call with its response.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from support.scripted_openai import Reply, Response, ScriptedOpenAI, ToolCallSpec

from lsp_harness import server_env
from qwen_lsp.memory.scan import parse_memory
from qwen_lsp.memory.store import MemoryStore
from qwen_lsp.files.paths import sanitize_cwd
from qwen_lsp.sessions.reader import read_records, record_from_line
from reliability.lsp_process import ServerGone, ServerProcess

SCENARIOS = ("turn", "edit", "extract", "dream", "compress")
_LINK = re.compile(r"^- \[[^\]]*\]\(([^)]*)\)", re.MULTILINE)
EXTRACT_MARK = "background memory extractor"
DREAM_MARK = "memory dream"
SUMMARY = "<state_snapshot>\n<overall_goal>keep the campaign going</overall_goal>\n</state_snapshot>"


def index_targets(index_text: str) -> list[str]:
    """The files a ``MEMORY.md`` links to, as relative paths."""
    return [unquote(m.group(1)) for m in _LINK.finditer(index_text)]


@dataclass
class Counters:
    kills: int = 0
    by_scenario: dict[str, int] = field(default_factory=dict)
    records_checked: int = 0
    unreadable_records: int = 0
    torn_tails: int = 0
    """Torn last lines seen after a kill (allowed: the reader skips them)."""
    memory_files_checked: int = 0
    half_written_memories: int = 0
    index_mismatches: int = 0
    """Indexes that still did not list exactly the memory files after the next start's rebuild."""
    stale_locks: int = 0
    """Dream rounds whose dream never started although only a dead process's lock was in the way."""
    locks_left_by_kills: int = 0
    """Dream rounds whose kill left ``consolidation.lock`` behind (the next dream round must get past it)."""
    sessions_resumed: int = 0
    unresumable_sessions: int = 0
    unsendable_sessions: int = 0
    """Resumed sessions whose next request left a tool call without its response."""
    work_done: dict[str, int] = field(default_factory=dict)
    """What the killed servers got done in all (tool results, checkpoints, memory files, dreams started):
    proof that the kills landed inside the work, not around it."""
    failures: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Project:
    """The scratch home, workspace and memory paths the campaign works on."""

    def __init__(self, root: Path, base_url: str) -> None:
        self.home = root / "home"
        self.workspace = root / "ws"
        (self.workspace / ".git").mkdir(parents=True, exist_ok=True)
        (self.workspace / "src").mkdir(exist_ok=True)
        (self.workspace / "src" / "app.py").write_text("def f():\n    return 1\n")
        (self.home / ".qwen").mkdir(parents=True, exist_ok=True)
        (self.home / ".qwen" / "settings.json").write_text('{"memory": {"autoExtract": false, "autoDream": false}}\n')
        self.log = root / "server.log"
        self.env = server_env(self.home, base_url)
        self.store = MemoryStore(self.workspace.resolve(), home=self.home, env={})
        self.chats = self.home / ".qwen" / "projects" / sanitize_cwd(self.workspace.resolve()) / "chats"
        self.memory_root = self.store.root("project")

    def seed_old_sessions(self, count: int = 5) -> None:
        """Earlier sessions on disk, so a dream's "5 sessions since the last one" gate passes."""
        self.chats.mkdir(parents=True, exist_ok=True)
        for i in range(count):
            sid = f"00000000-0000-4000-8000-{i:012d}"
            record = {
                "uuid": f"{sid[:-4]}aaaa", "parentUuid": None, "sessionId": sid, "timestamp": "2026-01-01T00:00:00.000Z",
                "type": "user", "cwd": str(self.workspace.resolve()), "version": "0", "message": {"role": "user", "parts": [{"text": f"old {i}"}]},
            }
            (self.chats / f"{sid}.jsonl").write_text(json.dumps(record) + "\n")

    def session_ids(self) -> list[str]:
        return sorted(p.stem for p in self.chats.glob("*.jsonl")) if self.chats.is_dir() else []

    def dream_lock(self) -> Path:
        return self.store.state_dir() / "consolidation.lock"

    def forget_last_dream(self) -> None:
        """The dream gates allow one dream a day; the campaign wants one per dream round."""
        (self.store.state_dir() / "meta.json").unlink(missing_ok=True)


# ---------------------------------------------------------------------- the model
def _texts(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(p.get("text", "") for p in content if isinstance(p, dict))
    return out


def model_router(project: Project, rng: random.Random) -> Callable[[dict[str, Any]], Response]:
    """Answers by what the request is: a main turn, an edit turn, an extraction, a dream or a compression."""
    counter = iter(range(1_000_000))

    def slow(words: int) -> list[str]:
        return [f"w{i} " for i in range(words)]

    def answer(body: dict[str, Any]) -> Response:
        texts = _texts(body)
        everything = "\n".join(texts)
        messages = body.get("messages") or []
        last_role = messages[-1].get("role") if messages else None
        if "<state_snapshot>" in everything and EXTRACT_MARK not in everything:
            return Reply(chunks=[SUMMARY[i : i + 8] for i in range(0, len(SUMMARY), 8)], delay=0.01)
        if not body.get("stream"):
            return Reply(chunks=["[]"])  # a side query (recall's selector): answer at once, the heuristic takes over
        if last_role == "tool":
            return Reply(chunks=slow(20), delay=0.01)
        n = next(counter)
        if EXTRACT_MARK in everything:
            path = project.memory_root / "feedback" / f"fact_{n}.md"
            body_text = f"---\nname: Fact {n}\ndescription: campaign fact {n}\ntype: feedback\n---\n" + ("fact line\n" * rng.randint(1, 400))
            return Reply(chunks=["Saving."], tool_calls=[ToolCallSpec("write_file", {"file_path": str(path), "content": body_text})], delay=0.005)
        if DREAM_MARK in everything:
            calls = [
                ToolCallSpec("write_file", {"file_path": str(project.memory_root / "project" / f"merged_{n}_{k}.md"),
                                            "content": f"---\nname: Merged {n} {k}\ndescription: merged {k}\ntype: project\n---\n" + "merged\n" * 300})
                for k in range(3)
            ]
            return Reply(chunks=["Consolidating."], tool_calls=calls, delay=0.005)
        if "QUICK" in (texts[-1] if texts else ""):
            return Reply(chunks=["Noted."])  # a turn that only sets up the work the kill is aimed at
        if "EDIT" in (texts[-1] if texts else ""):
            target = project.workspace / "src" / "app.py"
            return Reply(chunks=["Editing."], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": f"def f():\n    return {n}\n"})])
        return Reply(chunks=slow(150), delay=0.01)  # 1.5 s: past the draft's 1 s, so kills land before and after a piece

    return answer


# ---------------------------------------------------------------------- checks from outside
def check_sessions(project: Project, counters: Counters) -> None:
    for path in sorted(project.chats.glob("*.jsonl")) if project.chats.is_dir() else []:
        data = path.read_bytes()
        lines = data.split(b"\n")
        complete, tail = lines[:-1], lines[-1]
        for number, line in enumerate(complete, 1):
            if not line.strip():
                continue
            counters.records_checked += 1
            if record_from_line(line) is None:
                counters.unreadable_records += 1
                counters.failures.append(f"{path.name}:{number}: unreadable complete record {line[:120]!r}")
        if tail.strip():
            counters.torn_tails += 1
            skipped = read_records(path).skipped
            if not any("torn" in reason for _n, reason in skipped):
                counters.unreadable_records += 1
                counters.failures.append(f"{path.name}: a torn tail the reader did not skip as torn")


def check_memories(project: Project, counters: Counters) -> None:
    for scope in ("project", "user"):
        root = project.store.root(scope)
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.md")):
            if path.name == "MEMORY.md":
                continue
            counters.memory_files_checked += 1
            if parse_memory(path.read_text(encoding="utf-8", errors="replace")) is None:
                counters.half_written_memories += 1
                counters.failures.append(f"{path}: not a whole memory file")


def index_matches(project: Project) -> bool:
    root = project.memory_root
    if not root.is_dir():
        return True
    scanned = {d.relative_path for d in project.store.scan("project")}
    listed = set(index_targets(project.store.index_text("project")))
    return scanned == listed


async def wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


# ---------------------------------------------------------------------- the rounds
class Campaign:
    def __init__(self, root: Path, scripted: ScriptedOpenAI, *, seed: int) -> None:
        self.rng = random.Random(seed)
        root.mkdir(parents=True, exist_ok=True)
        self.project = Project(root, scripted.base_url)
        self.project.seed_old_sessions()
        self.scripted = scripted
        scripted.default = model_router(self.project, self.rng)
        self.counters = Counters()
        self._to_resume: set[str] = set()

    async def start(self, options: dict[str, Any] | None = None) -> ServerProcess:
        return await ServerProcess.start(self.project.env, self.project.workspace, options, log=self.project.log)

    async def run(self, kills: int) -> Counters:
        for round_no in range(kills):
            await self.round(SCENARIOS[round_no % len(SCENARIOS)])
        await self.finish()
        return self.counters

    async def round(self, scenario: str) -> None:
        options: dict[str, Any] = {
            "memory": {"autoExtract": scenario == "extract", "autoDream": scenario == "dream"},
            "tools": {"approvalMode": self.rng.choice(["auto-edit", "yolo"])},
            "model": {"contextWindow": 30_000},
        }
        lock_before = self.project.dream_lock().exists()
        if scenario == "dream":
            self.project.forget_last_dream()
        server = await self.start(options)
        try:
            await self.after_restart(server)
            await getattr(self, f"_{scenario}")(server, lock_before)
        finally:
            await server.kill()
        self.counters.kills += 1
        self.counters.by_scenario[scenario] = self.counters.by_scenario.get(scenario, 0) + 1
        if scenario == "dream" and self.project.dream_lock().exists():
            self.counters.locks_left_by_kills += 1
        check_sessions(self.project, self.counters)
        check_memories(self.project, self.counters)

    async def after_restart(self, server: ServerProcess) -> None:
        """What the last kill left must be whole again once a server is up: sessions resume, the index matches."""
        for sid in sorted(self._to_resume):
            await self.resume(server, sid)
        self._to_resume.clear()
        if not await wait_until(lambda: index_matches(self.project), 15.0):
            self.counters.index_mismatches += 1
            self.counters.failures.append("MEMORY.md did not match the memory files after a restart")

    async def resume(self, server: ServerProcess, sid: str) -> dict[str, Any] | None:
        self.counters.sessions_resumed += 1
        try:
            return await server.request("qwen/sessions/resume", {"sessionId": sid, "recap": False}, timeout=30)  # resumability, not the recap request
        except (RuntimeError, ServerGone, asyncio.TimeoutError) as exc:
            self.counters.unresumable_sessions += 1
            self.counters.failures.append(f"session {sid} does not resume: {exc}")
            return None

    def _chat(self, server: ServerProcess, prompt: str, sid: str | None = None) -> asyncio.Future[Any]:
        params: dict[str, Any] = {"prompt": prompt}
        if sid is not None:
            params["sessionId"] = sid
        return server.send_request("qwen/chat", params)

    def _track(self, server: ServerProcess) -> None:
        self._to_resume.update(p["sessionId"] for m, p in server.notifications if m == "qwen/chatEvent" and isinstance(p, dict) and p.get("sessionId"))

    async def _kill_within(self, server: ServerProcess, window: float, *, after: float = 0.0) -> None:
        await asyncio.sleep(self.rng.uniform(after, window))
        self._track(server)

    async def _turn(self, server: ServerProcess, _lock: bool) -> None:
        self._chat(server, "tell me about the project")
        where = self.rng.random()
        if where < 0.25:
            await self._kill_within(server, 0.5)  # before or as the answer starts
            return
        await wait_until(lambda: bool(server.chat_texts()), 15.0)
        # the answer streams for 1.5 s and its first piece is saved 1 s in: aim half the rest between the two
        if where < 0.6:
            await self._kill_within(server, 1.45, after=1.1)
        else:
            await self._kill_within(server, 1.6)

    async def _edit(self, server: ServerProcess, _lock: bool) -> None:
        self._chat(server, "EDIT src/app.py so f returns something else")
        if self.rng.random() < 0.5:
            # the sharpest point: the call is recorded, its result is not (the edit is with the editor)
            server.hold.add("workspace/applyEdit")
            await wait_until(lambda: "workspace/applyEdit" in server.asked, 15.0)
            await self._kill_within(server, 0.05)
        else:
            await self._kill_within(server, 1.5)

    async def _extract(self, server: ServerProcess, _lock: bool) -> None:
        await self._settle(self._chat(server, "QUICK: remember that we use tabs"))
        self._track(server)
        await self._kill_within(server, 0.4)

    async def _dream(self, server: ServerProcess, lock_before: bool) -> None:
        seen = len(self.scripted.requests)
        await self._settle(self._chat(server, "QUICK: one more thing"))
        self._track(server)
        started = await wait_until(lambda: any(DREAM_MARK in "\n".join(_texts(r.body)) for r in self.scripted.requests[seen:]), 15.0)
        self.counters.work_done["dreams_started"] = self.counters.work_done.get("dreams_started", 0) + started
        if not started and lock_before:
            self.counters.stale_locks += 1
            self.counters.failures.append("a dream lock left by a killed server blocked the next dream")
        await self._kill_within(server, 0.3)

    async def _compress(self, server: ServerProcess, _lock: bool) -> None:
        result = await self._settle(self._chat(server, "QUICK: something to compress later"))
        self._track(server)
        if not isinstance(result, dict):
            return
        server.send_request("qwen/compress", {"sessionId": result["sessionId"]})
        await self._kill_within(server, 0.3)

    @staticmethod
    async def _settle(future: asyncio.Future[Any]) -> Any:
        try:
            return await asyncio.wait_for(future, 30)
        except (RuntimeError, ServerGone, asyncio.TimeoutError):
            return None

    async def finish(self) -> None:
        """One last server: every session resumes and takes one more turn whose request pairs every tool call."""
        server = await self.start({"memory": {"autoExtract": False, "autoDream": False}, "model": {"contextWindow": 30_000}})
        try:
            await self.after_restart(server)
            for sid in self.project.session_ids():
                if await self.resume(server, sid) is None:
                    continue
                seen = len(self.scripted.requests)
                result = await self._settle(self._chat(server, "QUICK: are we still fine?", sid))
                requests = [r for r in self.scripted.requests[seen:] if r.path.endswith("/chat/completions") and r.body.get("stream")]
                if result is None or not requests or not tool_calls_paired(requests[0].body):
                    self.counters.unsendable_sessions += 1
                    self.counters.failures.append(f"session {sid} cannot continue cleanly: {result!r}")
        finally:
            await server.close()
        check_sessions(self.project, self.counters)
        self.count_work()

    def count_work(self) -> None:
        records = [r for sid in self.project.session_ids() for r in read_records(self.project.chats / f"{sid}.jsonl").records]
        done = self.counters.work_done
        done["tool_results"] = sum(r.get("type") == "tool_result" for r in records)
        done["answer_pieces"] = sum(bool(r.get("interrupted")) for r in records)
        done["compression_checkpoints"] = sum(r.get("subtype") == "chat_compression" for r in records)
        done["memory_files"] = len(project_files := list(self.project.memory_root.rglob("*.md"))) - sum(p.name == "MEMORY.md" for p in project_files)


def tool_calls_paired(body: dict[str, Any]) -> bool:
    """Every assistant ``tool_calls`` entry is answered by a ``tool`` message before the next non-tool message."""
    messages = body.get("messages") or []
    for at, message in enumerate(messages):
        ids = {c.get("id") for c in message.get("tool_calls") or []}
        answered = set()
        for later in messages[at + 1 :]:
            if later.get("role") != "tool":
                break
            answered.add(later.get("tool_call_id"))
        if ids - answered:
            return False
    return True


async def run_campaign(root: Path, *, kills: int, seed: int, projects: int = 2) -> Counters:
    """``kills`` rounds split over ``projects`` independent projects run side by side (one starts while another works).

    Project ``i`` uses ``Random(seed + i)``, so a run repeats its kill points.
    """

    async def one_project(index: int, share: int) -> Counters:
        with ScriptedOpenAI() as scripted:
            return await Campaign(root / f"project{index}", scripted, seed=seed + index).run(share)

    shares = [kills // projects + (1 if i < kills % projects else 0) for i in range(projects)]
    results = await asyncio.gather(*(one_project(i, share) for i, share in enumerate(shares) if share))
    return merge(results)


def merge(parts: list[Counters]) -> Counters:
    total = Counters()
    for part in parts:
        for name, value in asdict(part).items():
            if isinstance(value, int):
                setattr(total, name, getattr(total, name) + value)
        for scenario, count in part.by_scenario.items():
            total.by_scenario[scenario] = total.by_scenario.get(scenario, 0) + count
        for kind, count in part.work_done.items():
            total.work_done[kind] = total.work_done.get(kind, 0) + count
        total.failures.extend(part.failures)
    return total
