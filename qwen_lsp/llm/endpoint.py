"""The chat client for the settings in effect, rebuilt only when they change.

Settings apply on the next turn without a restart (design §5), but a new
HTTP client per turn would drop pooled connections; so the client is kept
while the endpoint, key, model and timeouts stay the same. The replaced
client is handed back for the caller to close once its in-flight streams
are done.
"""

from __future__ import annotations

from typing import Any

from ..config import Settings
from ..errors import EngineError
from .client import ChatClient, Timeouts

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


class ModelEndpoint:
    def __init__(self) -> None:
        self.current: ChatClient | None = None
        self._key: tuple[Any, ...] | None = None

    def client(self, settings: Settings) -> tuple[ChatClient, ChatClient | None]:
        """``(client, replaced)``; raises :class:`EngineError` (kind ``config``) when no model is configured."""
        m = settings.model
        api_key = settings.api_key()
        base_url = m.base_url or (DEFAULT_OPENAI_BASE_URL if api_key else None)
        if not base_url or not m.name:
            missing = " and ".join(x for x, v in (("a base URL", base_url), ("a model name", m.name)) if not v)
            raise EngineError(
                f"No model is configured ({missing} missing). Set OPENAI_BASE_URL, OPENAI_API_KEY and "
                "OPENAI_MODEL, or qwen.model.baseUrl / qwen.model.name in the editor settings.",
                kind="config",
            )
        key = (base_url, api_key, m.name, m.timeouts)
        replaced = None
        if self.current is None or key != self._key:
            replaced = self.current
            self.current = ChatClient(
                base_url,
                api_key,
                m.name,
                timeouts=Timeouts(connect=m.timeouts.connect, first_byte=m.timeouts.first_byte, stall=m.timeouts.stall),
            )
            self._key = key
        return self.current, replaced

    async def aclose(self) -> None:
        if self.current is not None:
            await self.current.aclose()
            self.current = None
