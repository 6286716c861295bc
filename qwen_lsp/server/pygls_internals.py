"""Every use of a pygls internal, in one place, each for something pygls 2.1 offers no public API for.

Nothing else in the package touches an underscored pygls name: it subclasses
:class:`InternalsProtocol` and calls the functions here.
``tests/test_pygls_internals.py`` checks each internal still exists and
behaves as relied on, so a pygls upgrade that changes one fails there
rather than in an editor.
"""

from __future__ import annotations

import threading
from typing import Any

from lsprotocol.types import ResponseError
from pygls.protocol import LanguageServerProtocol
from pygls.server import JsonRPCServer


class InternalsProtocol(LanguageServerProtocol):
    """The protocol with public names for the internals the server needs."""

    def send_response(self, msg_id: Any, *, result: Any | None = None, error: ResponseError | None = None) -> None:
        """Answer a request outside a handler (refused, unparseable): pygls only answers from its dispatch."""
        self._send_response(msg_id, result, error)

    @property
    def shutdown_requested(self) -> bool:
        """Whether ``shutdown`` was received: pygls records it but does not expose it."""
        return self._shutdown

    def forget_request(self, msg_id: Any) -> None:
        """Drop the pending answer to a server→client request that a cancel withdrew; a late answer is then logged and dropped."""
        self._request_futures.pop(msg_id, None)

    @property
    def owner(self) -> Any:
        """The server this protocol serves (pygls keeps it as ``_server``), for handlers defined on the protocol."""
        return self._server

    def client_error(self, error: ResponseError) -> ResponseError:
        """Rewrite every error answer before it is sent (subclasses override); pygls has no hook for it."""
        return error

    def _send_response(self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None) -> None:
        super()._send_response(msg_id, result, None if error is None else self.client_error(error))


def install_stop_event(server: JsonRPCServer, event: threading.Event) -> None:
    """Make ``server.shutdown()`` (pygls's ``exit`` handling) set ``event``, as pygls's own readers do."""
    server._stop_event = event
