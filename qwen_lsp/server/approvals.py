"""The editor side of approvals and edits: asking the user, and applying through ``workspace/applyEdit``.

Asking (docs/protocol.md): a client that declares
``capabilities.experimental.qwen.permissionRequests: true`` gets a
``qwen/permission`` request (its UI can show the diff); any other client
that declares ``window.showMessage`` gets ``window/showMessageRequest``
with the actions "Allow", "Allow always", "Deny" (dismissing it is a
denial). A client with neither cannot be asked: :func:`asker_for` returns
None and the engine offers ``plan``'s read-only tools instead.

A cancelled turn withdraws an open question: ``$/cancelRequest`` goes to
the client and the pending answer is dropped (``forget_request``, one of
the pygls internals kept in ``server/pygls_internals.py``).

Applying: see :class:`EditorApplier`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pydantic import ValidationError
from pygls.capabilities import get_capability
from pygls.workspace import TextDocument

from ..agent.approvals import Answer, Approval, Asker, PermissionRequest
from ..agent.applier import ApplyError, Snapshot, read_disk_text
from ..protocol import PERMISSION
from ..text.visible import visible
from .pygls_internals import InternalsProtocol
from .uris import uri_to_path

if TYPE_CHECKING:
    # pygls' base class, not the app's subclass: the app builds these, so naming it would be a circle.
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

ACTIONS: tuple[tuple[str, Answer], ...] = (("Allow", "allow"), ("Allow always", "allowAlways"), ("Deny", "deny"))
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _declares_permission_requests(ls: LanguageServer) -> bool:
    experimental = getattr(ls.client_capabilities, "experimental", None)
    qwen = experimental.get("qwen") if isinstance(experimental, dict) else None
    return isinstance(qwen, dict) and qwen.get("permissionRequests") is True


def asker_for(ls: LanguageServer) -> Asker | None:
    """How this client is asked, from its declared capabilities; None when it cannot be."""
    if _declares_permission_requests(ls):
        return lambda request: _ask_permission(ls, request)
    if get_capability(ls.client_capabilities, "window.show_message", None) is not None:
        return lambda request: _ask_show_message(ls, request)
    return None


async def _request(ls: LanguageServer, method: str, params: Any) -> Any:
    """A server→client request that a cancel withdraws (``$/cancelRequest``)."""
    msg_id = str(uuid.uuid4())
    future = ls.protocol.send_request_async(method, params, msg_id=msg_id)
    try:
        return await future
    except asyncio.CancelledError:
        cast(InternalsProtocol, ls.protocol).forget_request(msg_id)  # the app's protocol class
        ls.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        raise


async def _ask_permission(ls: LanguageServer, request: PermissionRequest) -> Approval:
    try:
        result = await _request(ls, PERMISSION.method, request.params().wire())
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the client failed to answer: nobody approved
        log.warning("%s failed: %s", PERMISSION.method, exc)
        return Approval("deny")
    try:
        answer = PERMISSION.result.model_validate(result)
    except ValidationError as exc:  # an answer that is not {decision, reason?}: nobody approved
        log.warning("%s: the client's answer is not %s, so it counts as a denial: %s", PERMISSION.method, PERMISSION.result.__name__, exc)
        return Approval("deny")
    if answer.decision == "deny":
        return Approval("deny", answer.reason or "", by_user=True)
    return Approval(answer.decision)


async def _ask_show_message(ls: LanguageServer, request: PermissionRequest) -> Approval:
    command = request.shown_command()
    detail = f"\n{command}" if command else ""
    if request.always_covers:
        detail += f"\n“Allow always” covers: {visible(request.always_covers)}"
    params = types.ShowMessageRequestParams(
        type=types.MessageType.Warning,
        message=f"Qwen wants to {request.shown_title()}.{detail}",
        actions=[types.MessageActionItem(title=title) for title, _ in ACTIONS],
    )
    try:
        chosen = await _request(ls, types.WINDOW_SHOW_MESSAGE_REQUEST, params)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.warning("window/showMessageRequest failed: %s", exc)
        return Approval("deny")
    title = getattr(chosen, "title", None) if chosen is not None else None
    # Dismissing the message is the user's answer too: a "no", as Esc is in Qwen Code's prompt.
    return Approval(next((answer for label, answer in ACTIONS if label == title), "deny"), by_user=True)


class EditorApplier:
    """Main-chat writes through the editor; the server never writes a workspace file itself.

    * An open document: the change is computed against its buffer (unsaved
      changes included) and sent as a ``TextDocumentEdit`` carrying the
      buffer's version, so the editor refuses it if the user typed since.
    * An existing file that is not open: a ``TextDocumentEdit`` with version
      null, replacing the text as on disk.
    * A new file: a ``CreateFile`` operation, then the text inserted.

    The client's ``applied`` decides the outcome; ``false`` is a tool error
    carrying its ``failureReason``.
    """

    def __init__(self, ls: LanguageServer) -> None:
        self._ls = ls

    def _open_document(self, path: Path) -> TextDocument | None:
        """The open document for ``path`` however the editor spelled its URI (symlinks, escapes).

        Also called from worker threads (``read_file``): ``list()`` takes a
        snapshot of the documents, and a document's ``source`` is one string.
        """
        for doc in list(self._ls.workspace.text_documents.values()):
            if uri_to_path(doc.uri) == path:
                return doc
        return None

    def buffer_text(self, path: Path) -> str | None:
        doc = self._open_document(path)
        return None if doc is None else doc.source

    async def read(self, path: Path) -> Snapshot:
        doc = self._open_document(path)
        if doc is not None:
            return Snapshot(doc.source, doc.version, doc.uri)
        return Snapshot(await asyncio.to_thread(read_disk_text, path))

    async def write(self, path: Path, before: Snapshot, text: str) -> str:
        caps = self._ls.client_capabilities
        if not get_capability(caps, "workspace.apply_edit", False):
            raise ApplyError("This editor does not accept edits from the server (no workspace/applyEdit), so nothing was changed.")
        document_changes = get_capability(caps, "workspace.workspace_edit.document_changes", False)
        uri = before.uri or path.as_uri()
        if before.text is None:
            resource_ops = get_capability(caps, "workspace.workspace_edit.resource_operations", None) or []
            if not document_changes or types.ResourceOperationKind.Create not in resource_ops:
                raise ApplyError(f"This editor cannot create files through the server, so {path} was not created.")
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False)),
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                        edits=[types.TextEdit(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)), new_text=text)],
                    ),
                ]
            )
        else:
            change = types.TextEdit(range=self._whole(before.text), new_text=text)
            if document_changes:
                edit = types.WorkspaceEdit(
                    document_changes=[
                        types.TextDocumentEdit(
                            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=before.version),
                            edits=[change],
                        )
                    ]
                )
            else:
                edit = types.WorkspaceEdit(changes={uri: [change]})
        label = "Qwen: " + path.name
        result = await _request(self._ls, types.WORKSPACE_APPLY_EDIT, types.ApplyWorkspaceEditParams(edit=edit, label=label))
        applied = getattr(result, "applied", False)
        if not applied:
            reason = getattr(result, "failure_reason", None)
            stale = " The file changed while waiting; read it again before retrying." if before.version is not None else ""
            raise ApplyError(f"The editor did not apply the change to {path}{': ' + reason if reason else ''}.{stale}")
        return "in the editor (open buffer, not saved yet)" if before.version is not None else "in the editor"

    def _whole(self, text: str) -> types.Range:
        """The range covering all of ``text``, in the position encoding agreed with the client."""
        lines = _LINE_BREAK.split(text)
        end = types.Position(line=len(lines) - 1, character=self._ls.workspace.position_codec.client_num_units(lines[-1]))
        return types.Range(start=types.Position(0, 0), end=end)
