"""How long heuristic recall takes per query over 2,000 memories (target ≤ 50 ms).

Setup: 2,000 memory documents (deterministic: English prose from a
developer vocabulary, one in ten Chinese, titles ~5 words, descriptions
~15 words, bodies 200–2,000 characters so the 1,200-character scoring cut
matters), across the four types and two scopes.

Measurements (``python -m bench.recall_heuristic``):

* ``recall_heuristic.query_p50_ms`` / ``query_p99_ms`` — ``recall(query,
  docs, select=None)``: tokenize, score every document, rank, render the
  block; 300 queries of 2–8 words (hits and misses mixed). Target: p99 ≤ 50 ms.
* ``recall_heuristic.long_query_p99_ms`` — the same with 200-word queries,
  which hit the 64-token cap (the worst case per document).
* ``recall_heuristic.cold_query_ms`` — the first query after the per-document
  normalisation cache was cleared (NFKC of every field).

Baseline (same run): the plainest possible search of the same query words
— ``word in (title + description + body).lower()`` for every document, no
normalisation, weights, ranking or rendering. ``ratio`` is the price of the
upstream scorer (``recall.ts`` v2) over that.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path

from bench.harness import emit, log, percentile
from qwen_lsp.memory import heuristic
from qwen_lsp.memory.model import TOPICS, MemoryDoc
from qwen_lsp.memory.recall import recall

SEED = 11
NOW = 1_780_000_000.0
WORDS = (
    "deploy release migration database postgres redis cache index query latency dashboard oncall incident "
    "runbook ticket review commit branch merge test fixture mock integration unit flaky pipeline build docker "
    "compose kubernetes helm config secret vault token credential logging metrics tracing alert grafana sentry "
    "frontend backend react component style tailwind api endpoint schema graphql rest client server timeout "
    "retry queue worker cron schedule billing payment invoice refund checkout order customer user preference "
    "feedback project reference owner team lint format type annotation mypy python typescript golang rust "
    "benchmark performance memory profile upload storage bucket region replica shard partition backup restore"
).split()
ZH = "数据库迁移发布流程测试用例缓存索引查询延迟告警值班事故手册评审提交分支合并构建配置密钥日志指标前端后端组件接口"


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def zh_text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(ZH) for _ in range(n))


def make_docs(count: int, rng: random.Random) -> list[MemoryDoc]:
    docs = []
    for i in range(count):
        chinese = i % 10 == 0
        title = zh_text(rng, 6) if chinese else sentence(rng, 5)
        description = zh_text(rng, 20) if chinese else sentence(rng, 15)
        body_len = rng.randint(200, 2000)
        body = (zh_text(rng, body_len // 2) if chinese else sentence(rng, body_len // 7))[:body_len]
        topic = TOPICS[i % len(TOPICS)]
        rel = f"{topic}/m{i}.md"
        scope = "project" if i % 3 else "user"
        docs.append(MemoryDoc(scope, topic, Path(f"/mem/{scope}") / rel, rel, title, description, body, NOW - rng.random() * 90 * 86_400))
    return docs


def make_query(rng: random.Random, words: int) -> str:
    if rng.random() < 0.2:  # a miss: words no memory contains
        return " ".join(f"zq{rng.randint(0, 10**6)}x" for _ in range(words))
    if rng.random() < 0.1:
        return zh_text(rng, words * 2)
    return sentence(rng, words)


def baseline_search(query: str, docs: list[MemoryDoc]) -> int:
    words = [w for w in query.lower().split() if len(w) >= 3]
    return sum(1 for d in docs if any(w in f"{d.title} {d.description} {d.body}".lower() for w in words))


def time_ms(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - start) * 1000


async def measure(docs: list[MemoryDoc], queries: list[str]) -> tuple[list[float], list[float]]:
    """Per query: ``recall`` on one running loop, then the baseline — interleaved, so machine load hits both alike."""
    ours, base = [], []
    for query in queries:
        start = time.perf_counter()
        await recall(query, docs, select=None, now=NOW)
        ours.append((time.perf_counter() - start) * 1000)
        base.append(time_ms(baseline_search, query, docs))
    return ours, base


def main() -> None:
    quick = "--quick" in sys.argv
    count, queries = (200, 20) if quick else (2000, 300)
    rng = random.Random(SEED)
    docs = make_docs(count, rng)
    short = [make_query(rng, rng.randint(2, 8)) for _ in range(queries)]
    long = [make_query(rng, 200) for _ in range(max(10, queries // 10))]

    heuristic._fields.cache_clear()
    cold, _ = asyncio.run(measure(docs, short[:1]))
    log(f"cold query over {count} memories: {cold[0]:.1f} ms")
    times, base = asyncio.run(measure(docs, short))
    long_times, base_long = asyncio.run(measure(docs, long))
    b50, b99 = percentile(base, 50), percentile(base, 99)
    emit("recall_heuristic.query_p50_ms", percentile(times, 50), "ms", b50, memories=count, queries=len(times))
    emit("recall_heuristic.query_p99_ms", percentile(times, 99), "ms", b99, memories=count, target_ms=50)
    emit("recall_heuristic.long_query_p99_ms", percentile(long_times, 99), "ms", percentile(base_long, 99),
         memories=count, queries=len(long_times), tokens=heuristic.MAX_QUERY_TOKENS)
    emit("recall_heuristic.cold_query_ms", cold[0], "ms", b50, memories=count)


if __name__ == "__main__":
    main()
