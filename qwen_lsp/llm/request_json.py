"""Request bodies as JSON bytes, without re-encoding the long texts every request repeats.

Each request of a chat carries the whole history again, and encoding it
(``ensure_ascii=False``) grew with it: ~3–7 ms per request at an 80k-token
history. The long strings in it — the system prompt, every earlier prompt and
tool result — are the very same ``str`` objects from one request to the next
(the history's Contents are never changed in place, and the messages built
from them reference their texts), so a :class:`RequestEncoder` keeps the
encoded form of each long string by identity and only encodes what is new.

The output is byte for byte ``json.dumps(body, ensure_ascii=False,
separators=(",", ":"))``: same key order, same escapes.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

LONG = 1024
"""Strings at least this long are remembered; shorter ones cost less to encode than to look up."""
CACHE_ENTRIES = 2048
CACHE_CHARS = 8 << 20
"""Bounds of the remembered encodings (by count and by characters held, the texts themselves included)."""
SHORT = 64
SHORT_ENTRIES = 4096
"""Strings of at most :data:`SHORT` characters (keys, roles, ids, names) remembered by value, at most this many
(a few hundred KB); all are forgotten when full. Strings between the two sizes are encoded each time."""
KEEP_REQUESTS = 8
"""A string no request among the last this many used is dropped: a compacted history's texts are not kept
alive by the cache (several chats of one workspace share the encoder, so not only the very last request counts)."""

DEPTH = 5
"""body → messages → message → content parts → part: deeper values (tool schemas) are encoded whole."""

_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
class FrozenJSON(list[Any]):
    """A JSON array that is never changed once built (the tools' declarations): encoded once, kept with it.

    Every request of every turn carries the same ``tools`` array, and its
    schemas lie below the depth the encoder walks, so each request encoded
    them whole again (~0.2 ms for ten tools). The methods that would change
    the array raise, so the JSON it keeps cannot go stale; the declarations
    inside are constant by the ``Tool`` contract.
    """

    _json: bytes | None = None

    def encoded(self) -> bytes:
        """``json.dumps(self, ensure_ascii=False, separators=(",", ":"))`` as UTF-8, computed once."""
        if self._json is None:
            self._json = _ENCODE(self).encode()
        return self._json

    def __reduce__(self) -> tuple[type[FrozenJSON], tuple[list[Any]]]:
        """Copied and pickled through the constructor (the default way appends, which raises)."""
        return (FrozenJSON, (list(self),))

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a FrozenJSON array is read-only")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only


class RequestEncoder:
    """Encodes request bodies, remembering the JSON of long strings by identity; see the module docstring.

    Not thread-safe: one per client, used from its event loop.
    """

    def __init__(self) -> None:
        self._strings: OrderedDict[int, tuple[str, bytes, int]] = OrderedDict()
        """id → (text, its JSON, the request that last used it), least recently used first."""
        self._chars = 0
        self._request = 0
        self._shorts: dict[str, bytes] = {}

    def encode(self, body: dict[str, Any]) -> bytes:
        self._request += 1
        out: list[bytes] = []
        self._write(body, 0, out)
        oldest = self._request - KEEP_REQUESTS
        while self._strings and next(iter(self._strings.values()))[2] <= oldest:
            self._forget(next(iter(self._strings)))
        return b"".join(out)

    def _write(self, value: Any, depth: int, out: list[bytes]) -> None:
        """Append ``value``'s JSON (UTF-8) to ``out``: plain dicts and lists are walked down to :data:`DEPTH`
        (a message part's text); below, or for any other type, the standard encoder does the whole value."""
        kind = type(value)
        if kind is str:
            size = len(value)
            out.append(self._string(value) if size >= LONG else self._short(value) if size <= SHORT else _ENCODE(value).encode())
        elif kind is FrozenJSON:
            out.append(value.encoded())
        elif depth < DEPTH and kind is dict and value and all(type(k) is str for k in value):
            sep = b"{"
            for key, item in value.items():
                out.append(sep + self._short(key) + b":")
                self._write(item, depth + 1, out)
                sep = b","
            out.append(b"}")
        elif depth < DEPTH and kind is list and value:
            sep = b"["
            for item in value:
                out.append(sep)
                self._write(item, depth + 1, out)
                sep = b","
            out.append(b"]")
        else:
            out.append(_ENCODE(value).encode())

    def _short(self, text: str) -> bytes:
        """The JSON of a short string (a key, a role, an id), remembered by value: every request repeats the
        same few hundred of them, and a lookup costs a fraction of encoding one. Keys go through here whatever
        their length (a request's keys are few and fixed)."""
        encoded = self._shorts.get(text)
        if encoded is None:
            if len(self._shorts) >= SHORT_ENTRIES:
                self._shorts.clear()
            encoded = self._shorts[text] = _ENCODE(text).encode()
        return encoded

    def _string(self, text: str) -> bytes:
        entry = self._strings.get(id(text))
        if entry is not None and entry[0] is text:
            self._strings[id(text)] = (text, entry[1], self._request)
            self._strings.move_to_end(id(text))
            return entry[1]
        encoded = _ENCODE(text).encode()
        if entry is not None:  # the id was reused by another string: the old entry is dead
            self._forget(id(text))
        self._strings[id(text)] = (text, encoded, self._request)
        self._chars += len(text) + len(encoded)
        while len(self._strings) > CACHE_ENTRIES or self._chars > CACHE_CHARS:
            self._forget(next(iter(self._strings)))
        return encoded

    def _forget(self, key: int) -> None:
        text, encoded, _used = self._strings.pop(key)
        self._chars -= len(text) + len(encoded)
