"""Which endpoint a turn talks to, and what is missing when none is configured.

Shared by the engine (to build the client, or to refuse with a message that
names every missing setting) and by ``doctor`` (to show the base URL that is
really used, including the public default the engine falls back to when
only an API key is set — a silent default surprised users).
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import LoadedSettings, Settings

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
"""Used when an API key is set but no base URL: the OpenAI SDK's own default, as Qwen Code."""


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None
    base_url_source: str
    """The settings layer that set the base URL, or ``"default"``."""
    model: str | None
    api_key: str | None

    @property
    def uses_default_base_url(self) -> bool:
        return self.base_url_source == "default" and self.base_url is not None

    def missing(self) -> str | None:
        """Why no turn can run, naming every missing setting; None when the endpoint is complete."""
        if self.base_url and self.model:
            return None
        needed: list[str] = []
        if not self.model:
            needed.append("the model name (OPENAI_MODEL, or model.name in settings)")
        if not self.base_url:
            needed.append("the base URL (OPENAI_BASE_URL, or model.baseUrl in settings)")
        message = f"No model is configured: {' and '.join(needed)} {'is' if len(needed) == 1 else 'are'} missing."
        if self.uses_default_base_url:
            message += (
                f" No base URL is set either, so the public default {self.base_url} would be used; "
                "set OPENAI_BASE_URL or model.baseUrl for any other endpoint."
            )
        if not self.api_key:
            message += " Set OPENAI_API_KEY (or model.apiKey) too if the endpoint needs a key."
        return message


def configured_model(settings: Settings) -> str | None:
    """The model a turn would use, or None when :meth:`Endpoint.missing` would refuse it (no name, or no base URL
    and no key for the default one)."""
    model = settings.model
    return model.name if model.name and (model.base_url or settings.api_key()) else None


def resolve_endpoint(loaded: LoadedSettings) -> Endpoint:
    model = loaded.settings.model
    api_key = loaded.settings.api_key()
    base_url: str | None
    if model.base_url:
        base_url, source = model.base_url, loaded.sources.get("model.baseUrl", "settings")
    else:
        base_url, source = (DEFAULT_OPENAI_BASE_URL if api_key else None), "default"
    return Endpoint(base_url=base_url, base_url_source=source, model=model.name, api_key=api_key)
