"""Error wording: every message names the endpoint and says what to fix."""

from __future__ import annotations

import pytest

from qwen_lsp.llm.client import RETRY_AFTER_CAP, ChatClient
from qwen_lsp.llm.errors import SERVER_MESSAGE_LIMIT, http_error, server_message, stall_error

BASE = "http://localhost:8000/v1"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"error": {"message": "Invalid model", "type": "x"}}', "Invalid model"),
        ('{"error": "plain error field"}', "plain error field"),
        ('{"detail": "Not Found"}', "Not Found"),
        ("<html>Bad Gateway</html>", "<html>Bad Gateway</html>"),
        (b"", ""),
    ],
)
def test_server_message_shapes(body: str | bytes, expected: str) -> None:
    assert server_message(body) == expected


def test_server_message_is_truncated() -> None:
    said = server_message('{"error": {"message": "%s"}}' % ("y" * 2000))
    assert len(said) == SERVER_MESSAGE_LIMIT
    assert said.endswith("…")


@pytest.mark.parametrize(
    ("status", "kind"),
    [(401, "auth"), (403, "auth"), (404, "not_found"), (429, "rate_limit"), (500, "server"), (502, "server"), (400, "bad_request"), (422, "bad_request")],
)
def test_status_kinds_name_the_endpoint(status: int, kind: str) -> None:
    error = http_error(status, '{"error": {"message": "why"}}', base_url=BASE, model="qwen3")
    assert (error.kind, error.status) == (kind, status)
    assert BASE in error.message and "why" in error.message
    assert str(error) == error.message


def test_stall_wording() -> None:
    assert stall_error(BASE, 60).message.startswith("The model stopped sending data for 60 s (stall timeout).")


async def test_backoff_grows_and_retry_after_is_capped() -> None:
    async with ChatClient(BASE, None, "m", retry_base=0.5) as chat:
        assert 0.5 <= chat._backoff(0, None) <= 1.0
        assert 2.0 <= chat._backoff(2, None) <= 2.5
        assert chat._backoff(0, "2") == 2.0
        assert chat._backoff(0, "120") == RETRY_AFTER_CAP
        assert chat._backoff(0, "Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
