"""The compaction core's pure parts: the analysis strip, placeholders, microcompaction, the post-compact shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qwen_lsp.compaction.breaker import CircuitBreaker
from qwen_lsp.compaction.media import count_tool_response_images, sanitize_mime, slim_compaction_input
from qwen_lsp.compaction.microcompact import CLEARED_TOOL_OUTPUT, MicrocompactSettings, microcompact_history
from qwen_lsp.compaction.post_compact import compose_post_compact_history, inside_workspace
from qwen_lsp.compaction.summary import RESUME_TRAILER, SUMMARY_ACK, post_process_summary, strip_analysis_block
from qwen_lsp.llm.content import Content


@pytest.mark.parametrize(
    ("raw", "stripped"),
    [
        ("<analysis>a</analysis>\n\n<state_snapshot>S</state_snapshot>", "<state_snapshot>S</state_snapshot>"),
        ("x<analysis>1</analysis> y<analysis>2</analysis>\tz", "xyz"),
        ("<state_snapshot>S</state_snapshot>\n<analysis>ran out of tok", "<state_snapshot>S</state_snapshot>"),
        ("<analysis>only a draft</analysis>", ""),
        ("<analysis>never closed <analysis> nested", ""),
        ("<ANALYSIS>kept</ANALYSIS> S", "<ANALYSIS>kept</ANALYSIS> S"),
        ('<analysis type="x">kept</analysis> S', '<analysis type="x">kept</analysis> S'),
        ("<analysis>a</analysis>\u00a0\u2028 S", "S"),
        ("  S  ", "S"),
    ],
)
def test_the_analysis_block_is_stripped_in_two_passes(raw: str, stripped: str) -> None:
    assert strip_analysis_block(raw) == stripped


def test_the_summary_gets_the_trailer_and_a_sentinel_when_empty() -> None:
    assert post_process_summary("<analysis>x</analysis>S") == f"S\n\n{RESUME_TRAILER}"
    assert post_process_summary("<analysis>x") == f"[Summary unavailable]\n\n{RESUME_TRAILER}"


def test_a_long_unclosed_draft_strips_in_linear_time() -> None:
    raw = "<analysis>" * 50_000 + "</analysis" * 50_000
    assert strip_analysis_block(raw) == ""


def test_mime_types_cannot_break_the_placeholder() -> None:
    assert sanitize_mime("image/\r\n\tpng]") == "image/ png"
    assert sanitize_mime("[" * 10 + "x" * 300) == "x" * 128


def screenshot(n: int, name: str = "screenshot") -> list[Any]:
    image = {"inlineData": {"mimeType": "image/png", "data": f"IMG{n}"}}
    return [
        {"role": "model", "parts": [{"functionCall": {"id": f"s{n}", "name": name, "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": f"s{n}", "name": name, "response": {"output": "shot"}, "parts": [image]}}]},
    ]


def test_only_images_returned_by_tools_count_for_the_image_trigger() -> None:
    pasted: Any = {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "P"}}, {"text": "look"}]}
    history: list[Any] = [pasted, *screenshot(1), *screenshot(2)]
    assert count_tool_response_images(history) == 2
    slim = slim_compaction_input(history)
    assert slim[0]["parts"][0] == {"text": "[image: image/png]"}
    assert slim[2]["parts"][0]["functionResponse"]["response"] == {"output": "shot\n[image: image/png]"}
    assert slim[1] is history[1] and "parts" in history[2]["parts"][0]["functionResponse"]  # originals untouched


def read_round(n: int, output: str, *, name: str = "read_file", call_id: str | None = None) -> list[Any]:
    cid = f"r{n}" if call_id is None else call_id
    return [
        {"role": "model", "parts": [{"functionCall": {"id": cid, "name": name, "args": {"file_path": f"/w/f{n}.py"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}]},
    ]


def outputs(history: list[Content]) -> list[Any]:
    return [p["functionResponse"]["response"].get("output") for c in history for p in c["parts"] if "functionResponse" in p]


def test_force_keeps_n_per_category_not_in_total() -> None:
    pasted: Any = [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/jpeg", "data": f"P{n}"}}]} for n in range(3)]
    history: list[Any] = [
        *pasted,
        *read_round(1, "one" * 100),
        *read_round(2, "two" * 100),
        *screenshot(3),
        *screenshot(4),
        *read_round(5, "five" * 100),
    ]
    done = microcompact_history(history, None, MicrocompactSettings(num_to_keep=1), force=True, env={})
    assert done is not None
    new, meta = done
    assert outputs(new) == [CLEARED_TOOL_OUTPUT, CLEARED_TOOL_OUTPUT, "shot", "shot", "five" * 100]
    assert [c["parts"][0] for c in new[:3]] == [{"text": "[Old inline media cleared: image/jpeg]"}] * 2 + [pasted[2]["parts"][0]]
    nested = [p["functionResponse"].get("parts") for c in new for p in c["parts"] if p.get("functionResponse", {}).get("name") == "screenshot"]
    assert nested[0] is None and nested[1] is not None  # one screenshot kept, the older one's image dropped, its text kept
    assert (meta.tools_cleared, meta.media_cleared, meta.tools_kept) == (2, 3, 1)
    assert meta.evicted_read_paths == ["/w/f1.py", "/w/f2.py"] and meta.unresolved_evicted_reads == 0
    assert new[3] is history[3]  # untouched contents are the same objects
    assert history[4]["parts"][0]["functionResponse"]["response"]["output"] == "one" * 100  # the input is not mutated


def test_errors_and_empty_results_are_never_cleared_and_take_no_keep_slot() -> None:
    history: list[Any] = [*read_round(1, "old" * 50), *read_round(2, ""), *read_round(3, "new" * 50)]
    history[3]["parts"][0]["functionResponse"]["response"] = {"error": "denied"}
    done = microcompact_history(history, None, MicrocompactSettings(num_to_keep=1), force=True, env={})
    assert done is not None
    assert outputs(done[0]) == [CLEARED_TOOL_OUTPUT, None, "new" * 50]


def test_old_skill_results_are_cleared_as_qwen_code_0_24_4_does() -> None:
    history: list[Any] = [*read_round(1, "SKILL BODY " * 50, name="skill"), *read_round(2, "new" * 50), *read_round(3, "x" * 50, name="list_directory")]
    done = microcompact_history(history, None, MicrocompactSettings(num_to_keep=1), force=True, env={})
    assert done is not None
    assert outputs(done[0]) == [CLEARED_TOOL_OUTPUT, "new" * 50, "x" * 50]  # list_directory is not compactable in 0.24.4


def test_the_env_keep_beats_the_setting() -> None:
    history: list[Any] = [*read_round(1, "a" * 100), *read_round(2, "b" * 100), *read_round(3, "c" * 100)]
    done = microcompact_history(history, None, MicrocompactSettings(num_to_keep=1), force=True, env={"QWEN_MC_KEEP_RECENT": " 2 "})
    assert done is not None and outputs(done[0]) == [CLEARED_TOOL_OUTPUT, "b" * 100, "c" * 100]
    assert MicrocompactSettings(num_to_keep=0).keep({"QWEN_MC_KEEP_RECENT": "x"}) == 1


def test_idle_fires_at_the_threshold_and_never_without_a_last_answer() -> None:
    history: list[Any] = [*read_round(1, "a" * 100), *read_round(2, "b" * 100)]
    settings = MicrocompactSettings(threshold_minutes=60, num_to_keep=1, total_chars_threshold=-1)
    assert microcompact_history(history, None, settings, now=10_000.0, env={}) is None
    assert microcompact_history(history, 10_000.0 - 3599, settings, now=10_000.0, env={}) is None
    done = microcompact_history(history, 10_000.0 - 3600, settings, now=10_000.0, env={})
    assert done is not None and done[1].trigger == "idle"
    assert microcompact_history(history, 0.0, MicrocompactSettings(threshold_minutes=-1), now=10_000.0, env={}) is None


def test_size_clears_oldest_down_to_half_the_threshold_tools_only() -> None:
    history: list[Any] = []
    for n in range(6):
        history += read_round(n, "x" * 100)
    history.append({"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "P"}}]})
    settings = MicrocompactSettings(threshold_minutes=60, num_to_keep=1, total_chars_threshold=450)
    done = microcompact_history(history, None, settings, env={})
    assert done is not None and done[1].trigger == "size"
    assert outputs(done[0]) == [CLEARED_TOOL_OUTPUT] * 4 + ["x" * 100] * 2  # 600 → 200 ≤ 225
    assert done[0][-1] is history[-1]  # media untouched by the size trigger
    assert microcompact_history(history, None, MicrocompactSettings(total_chars_threshold=600), env={}) is None
    assert MicrocompactSettings(threshold_minutes=-1).size_threshold() == -1


def test_a_cleared_read_without_a_call_id_asks_for_a_full_cache_wipe() -> None:
    history: list[Any] = [*read_round(1, "a" * 100, call_id=""), *read_round(2, "b" * 100)]
    done = microcompact_history(history, None, MicrocompactSettings(num_to_keep=1), force=True, env={})
    assert done is not None and done[1].unresolved_evicted_reads == 1 and done[1].evicted_read_paths == []


def test_the_breaker_opens_after_three_failures_until_a_success() -> None:
    breaker = CircuitBreaker()
    for _ in range(3):
        assert breaker.allows(force=False)
        breaker.failed()
    assert breaker.open and not breaker.allows(force=False) and breaker.allows(force=True)
    breaker.succeeded()
    assert breaker.allows(force=False)


def test_post_compact_roles_alternate_with_and_without_attachments(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = '```'\n")
    call: Any = {"role": "model", "parts": [{"text": "reading"}, {"functionCall": {"id": "c", "name": "grep_search", "args": {}}}]}
    plain: list[Any] = [{"role": "user", "parts": [{"text": "hi"}]}, call]
    bare = compose_post_compact_history(plain, "S", root=tmp_path).history
    assert [c["role"] for c in bare] == ["user", "model"]
    assert bare[1]["parts"] == [{"text": SUMMARY_ACK}, call["parts"][1]]

    with_file: list[Any] = [*read_round(1, "x"), call]
    with_file[0]["parts"][0]["functionCall"]["args"]["file_path"] = str(tmp_path / "a.py")
    done = compose_post_compact_history(with_file, "S", root=tmp_path, plan_mode=True)
    assert [c["role"] for c in done.history] == ["user", "model", "user", "model"]
    plan, embedded = (p["text"] for p in done.history[2]["parts"])
    assert plan.startswith("<plan-mode-active>") and "\n````\nx = '```'\n\n````" in embedded
    assert done.history[3] is call and done.restoration_chars == len(plan) + len(embedded)


def test_restoration_skips_files_outside_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret").write_text("token")
    (ws / "link").symlink_to(tmp_path / "secret")
    assert not inside_workspace(str(ws / "link"), ws) and not inside_workspace(str(tmp_path / "ws2" / "x"), ws)
    history: list[Any] = [*read_round(1, "x"), {"role": "model", "parts": [{"text": "ok"}]}]
    history[0]["parts"][0]["functionCall"]["args"]["file_path"] = str(ws / "link")
    assert len(compose_post_compact_history(history, "S", root=ws).history) == 2


def test_manual_compression_cuts_an_orphan_call_and_auto_keeps_the_pending_turn() -> None:
    from qwen_lsp.compaction.compress import split_pending

    call: Any = {"role": "model", "parts": [{"functionCall": {"id": "c", "name": "glob", "args": {}}}]}
    answer: Any = {"role": "user", "parts": [{"functionResponse": {"id": "c", "name": "glob", "response": {"output": "a.py"}}}]}
    start: list[Any] = [{"role": "user", "parts": [{"text": "q"}]}, {"role": "model", "parts": [{"text": "a"}]}]
    assert split_pending([*start, call], manual=True) == (start, None)
    assert split_pending([*start, call, answer], manual=False) == ([*start, call], answer)
    assert split_pending(start, manual=False) == (start, None)
    prompt: Any = {"role": "user", "parts": [{"text": "next"}]}
    assert split_pending([*start, call, prompt], manual=False) == (start, prompt)  # an orphan call never precedes a prompt
