"""A pytest-lsp client for attacks that need approvals: it answers ``qwen/permission`` from a script and records edits.

The real server runs as a subprocess with the environment the test builds;
every question it asks and every ``workspace/applyEdit`` it sends is logged
and never applied, so "nothing written" is checked on disk and in the log.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from lsprotocol import types

from lsp_harness import as_dict, start_client


class Answers:
    """Scripted answers (``deny`` once they run out) and a log of what was asked and applied."""

    def __init__(self, answers: list[str | dict[str, str]]) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []
        self.applied: list[types.WorkspaceEdit] = []


@contextlib.asynccontextmanager
async def permission_client(
    env: dict[str, str], ws: Path, options: dict[str, Any] | None, answers: list[str | dict[str, str]] | None = None
) -> AsyncIterator[Any]:
    """``answers`` in order, then "deny". A ``"deny"`` carries a reason, so the turn goes on and every later call
    of the script is asked too (a plain deny ends the turn, as in Qwen Code 0.24.4: ``Approval.denial_extra``);
    a dict is sent as it is (``{"decision": "deny"}`` for a plain one)."""
    client, rec = await start_client(env)
    log = Answers(answers or [])

    @client.feature("qwen/permission")
    def permission(params: Any) -> dict[str, str]:
        log.asked.append(as_dict(params))
        answer = log.answers.pop(0) if log.answers else "deny"
        if isinstance(answer, dict):
            return answer
        return {"decision": answer, "reason": "not this one"} if answer == "deny" else {"decision": answer}

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        log.applied.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    caps = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            configuration=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True, resource_operations=[types.ResourceOperationKind.Create]),
        ),
        experimental={"qwen": {"permissionRequests": True}},
    )
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name=ws.name)],
                initialization_options=options,
            )
        )
        client.rec = rec
        client.log = log
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()

