"""The chat client for the settings in effect, rebuilt only when they change.

Settings apply on the next turn without a restart (README.md, "Editor settings"), but a new
HTTP client per turn would drop pooled connections; so the client is kept
while the endpoint, key, model, timeouts and sampling parameters stay the same. The replaced
client is handed back for the caller to close once its in-flight streams
are done. Which base URL and model apply (and what is missing) is decided
by :func:`qwen_lsp.settings.endpoint.resolve_endpoint`, which ``doctor`` shows too.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ..settings.config import LoadedSettings
from ..settings.endpoint import resolve_endpoint
from ..errors import EngineError
from .client import ChatClient, Timeouts
from .sampling import Sampling, output_ceiling
from .errors import LLMError

log = logging.getLogger(__name__)


class ModelEndpoint:
    def __init__(self) -> None:
        self.current: ChatClient | None = None
        self._key: tuple[Any, ...] | None = None
        self._matched: LoadedSettings | None = None
        """The last settings object found to map to :attr:`current`: a workspace keeps one until it reloads, and
        settings are immutable, so asking again with it needs no endpoint resolved (a turn asks at least twice)."""
        self._lock = threading.Lock()
        """Callers build on worker threads, several at once (a turn and its recall's side query):
        without it both would build a client and the loser's, already in use, would be closed."""

    def client(self, loaded: LoadedSettings) -> tuple[ChatClient, ChatClient | None]:
        """``(client, replaced)``; raises :class:`EngineError` (kind ``config``) naming what is missing or wrong."""
        with self._lock:
            return self._client(loaded)

    def unchanged(self, loaded: LoadedSettings) -> ChatClient | None:
        """The current client when ``loaded`` still maps to it, else None; never builds, so callers on the
        event loop skip the worker thread :meth:`client` needs only when a client must be built.

        Never waits either: while another caller builds (holding the lock through the CA bundle's load
        and httpx's first imports), it answers None and the caller takes the worker-thread path, where
        waiting is harmless. Waiting here held the event loop for the whole build: a new chat's turn
        and its memory recall ask for the client at once.
        """
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self.current is None or (loaded is not self._matched and _key(loaded) != self._key):
                return None
            self._matched = loaded
            return self.current
        finally:
            self._lock.release()

    def _client(self, loaded: LoadedSettings) -> tuple[ChatClient, ChatClient | None]:
        endpoint = resolve_endpoint(loaded)
        missing = endpoint.missing()
        if missing or not endpoint.base_url or not endpoint.model:
            raise EngineError(missing or "No model is configured.", kind="config")
        key = _key(loaded)
        timeouts = loaded.settings.model.timeouts
        replaced = None
        if self.current is None or key != self._key:
            try:
                client = ChatClient(
                    endpoint.base_url,
                    endpoint.api_key,
                    endpoint.model,
                    timeouts=Timeouts(connect=timeouts.connect, first_byte=timeouts.first_byte, stall=timeouts.stall),
                    sampling=sampling_of(loaded),
                )
            except LLMError as exc:  # a base URL that is not http(s): a settings problem, before any request
                raise EngineError(exc.message, kind=exc.kind) from exc
            if endpoint.uses_default_base_url:
                log.warning("no base URL is set (OPENAI_BASE_URL or model.baseUrl): using the public default %s", endpoint.base_url)
            replaced, self.current, self._key = self.current, client, key
        self._matched = loaded
        return self.current, replaced

    async def aclose(self) -> None:
        if self.current is not None:
            await self.current.aclose()
            self.current = self._matched = None


def _key(loaded: LoadedSettings) -> tuple[Any, ...]:
    """What a client is built from: a change in any of these needs a new one."""
    endpoint = resolve_endpoint(loaded)
    return (endpoint.base_url, endpoint.api_key, endpoint.model, loaded.settings.model.timeouts, sampling_of(loaded))


def sampling_of(loaded: LoadedSettings) -> Sampling:
    """The sampling fields and default ``max_tokens`` every request of this client carries (``llm/sampling.py``)."""
    model = loaded.settings.model
    params = model.generation_config.sampling_params
    ceiling = output_ceiling(model.name, None, params.max_tokens)
    return Sampling(params=params.body(), max_tokens=params.max_tokens, ceiling=ceiling)
