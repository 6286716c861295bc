"""The main chat's ``edit`` and ``write_file``: computed against what the user sees, approved, then applied.

Same names, parameters, declarations and messages as the memory forks'
tools (``agent/tools/edit.py``, ``write_file.py``), but the steps differ:

1. the path is resolved inside the workspace, symlinks followed
   (``resolve_in_workspace``); anything outside is a tool error — except
   the managed memory folders (``ctx.managed_writes``), where the memory
   block tells the model to save: such a write is asked for like any
   other, then goes through the memory store instead of the editor;
2. the current text comes from ``ctx.applier`` — in the editor the open
   buffer with its unsaved changes, else the file;
3. the change is shown as a unified diff and approved through
   ``ctx.approve`` (``agent/approvals.py``); a denial reaches the model as
   Qwen Code's "User did not allow tool call" error;
   Before that, content for ``.qwen/team-memory/`` is scanned for secrets
   (``memory/team_guard.py``) and refused, unasked, when it holds one, with
   Qwen Code 0.24.4's message (its ``edit`` adds a note when the secret was
   already in the file and not in ``new_string``) — in the managed memory
   folders too, where the store would refuse it only after asking;
4. ``ctx.applier`` applies it (``workspace/applyEdit`` in the editor, an
   atomic write in the CLI), and the chat's read cache forgets the path.

Every path resolved is reported to ``ctx.touched``, so conditional skills
and rules activate as they do for files the model reads.
"""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from ..approvals import Approval, ToolPermission
from ...files.protected import protected_reason
from ..tool import ManagedWrites, ToolContext, ToolResult
from .base import ToolInputError, copy_declaration, describe_validation_error
from .edit import EditArgs, EditTool, edit_message, edited_text
from .workspace import relative_display, resolve_in_workspace
from .write_file import WriteFileArgs, WriteFileTool, write_message
from .writing import check_size
from ...memory.errors import SecretRefused
from ...memory.secrets import scan_for_secrets
from ...memory.team_guard import refuse_team_secrets
from ..applier import ApplyError, read_disk_text

PRE_EXISTING_NOTE = (
    " Note: the secret already exists in the current file content, so removing it from your edit alone is not "
    "enough \u2014 delete the committed secret from the file."
)
"""What Qwen Code 0.24.4's ``edit`` adds when the file held the secret before and ``new_string`` does not."""

def unified_diff(rel: str, before: str | None, after: str) -> str:
    """``before`` → ``after`` as a unified diff (``/dev/null`` for a new file); blocking for large texts.

    Never cut: an approval must not show less than it approves (the editor opens it whole, see
    docs/vscode-panel.md). Its size is bounded by what a write may be (``MAX_WRITE_CHARS``,
    ``MAX_EDIT_FILE_BYTES`` in ``agent/tools/writing.py``).
    """
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile="/dev/null" if before is None else f"a/{rel}",
        tofile=f"b/{rel}",
    )
    out: list[str] = []
    for line in lines:
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


class _ApprovedWrite:
    """What both tools share; subclasses say how the new text is computed."""

    name: ClassVar[str]
    verb: ClassVar[str]
    args_model: ClassVar[type[BaseModel]]
    DECLARATION: ClassVar[dict[str, Any]]

    def declaration(self) -> dict[str, Any]:
        result: dict[str, Any] = copy_declaration(self.DECLARATION)
        return result

    def change(self, path: Path, current: str | None, params: Any) -> tuple[str, str]:
        """``(new text, success message)``; ``ToolInputError`` when the call cannot apply."""
        raise NotImplementedError

    def secret_note(self, current: str | None, params: Any) -> str:
        """Added to the team-memory refusal; nothing unless a subclass says otherwise."""
        return ""

    def _refusal_text(self, path: Path, current: str | None, new_text: str, params: Any) -> str | None:
        """Blocking (scans the texts): the refusal when ``new_text`` for a team-memory ``path`` holds a secret."""
        try:
            refuse_team_secrets(path, new_text)
        except SecretRefused as exc:
            return exc.message + self.secret_note(current, params)
        return None

    async def _secret_refusal(self, path: Path, current: str | None, new_text: str, params: Any) -> ToolResult | None:
        """Qwen Code's refusal; nothing is asked or written: the model must remove the secret first."""
        message = await asyncio.to_thread(self._refusal_text, path, current, new_text, params)
        return None if message is None else ToolResult(output=message, is_error=True, display=f"Refused: {message}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        params: Any
        try:
            params = self.args_model.model_validate(args if args is not None else {})
        except ValidationError as exc:
            return ToolResult(output=describe_validation_error(self.name, exc), is_error=True)
        if ctx.applier is None:
            return ToolResult(output=f"{self.name} is not available here.", is_error=True)
        try:
            path = await asyncio.to_thread(resolve_in_workspace, params.file_path, ctx)
        except ToolInputError as exc:
            return ToolResult(output=str(exc), is_error=True)
        managed = _managed_root(path, ctx)
        if managed is not None:
            return await self._run_managed(path, params, ctx, managed)
        ctx.touched(path)
        try:
            before = await ctx.applier.read(path)
            new_text, message = self.change(path, before.text, params)
        except (ToolInputError, ApplyError) as exc:
            return ToolResult(output=str(exc), is_error=True)
        refused = await self._secret_refusal(path, before.text, new_text, params)
        if refused is not None:
            return refused
        rel = relative_display(path, ctx)
        diff = await asyncio.to_thread(unified_diff, rel, before.text, new_text)
        request = ToolPermission(tool=self.name, title=f"{self.verb} {rel}", path=str(path), diff=diff, protected=protected_reason(rel), shown_path=rel)
        approval = await ctx.approve(ctx.call_id, request) if ctx.approve is not None else Approval("deny")
        decision = approval.decision
        if decision == "deny":
            return ToolResult(output=approval.refusal(), is_error=True, display=f"Declined: {self.verb.lower()} {rel}", extra=approval.denial_extra())
        try:
            where = await ctx.applier.write(path, before, new_text)
        except ApplyError as exc:
            return ToolResult(output=str(exc), is_error=True, extra={"decision": decision})
        if ctx.read_cache is not None:
            ctx.read_cache.forget([path])
        return ToolResult(output=message, display=f"{message} ({where})", extra={"written": str(path), "decision": decision})

    async def _run_managed(self, path: Path, params: Any, ctx: ToolContext, managed: ManagedWrites) -> ToolResult:
        """A write into a managed memory folder: asked like any write, then written through ``managed.write``."""
        try:
            before = await asyncio.to_thread(read_disk_text, path)
            new_text, message = self.change(path, before, params)
        except (ToolInputError, ApplyError) as exc:
            return ToolResult(output=str(exc), is_error=True)
        refused = await self._secret_refusal(path, before, new_text, params)
        if refused is not None:
            return refused
        diff = await asyncio.to_thread(unified_diff, str(path), before, new_text)
        request = ToolPermission(tool=self.name, title=f"{self.verb} {path}", path=str(path), diff=diff)
        approval = await ctx.approve(ctx.call_id, request) if ctx.approve is not None else Approval("deny")
        if approval.decision == "deny":
            return ToolResult(output=approval.refusal(), is_error=True, display=f"Declined: {self.verb.lower()} {path}", extra=approval.denial_extra())
        try:
            await managed.write(path, new_text)
        except (ValueError, OSError) as exc:
            return ToolResult(output=f"Error writing to file {path}: {exc}", is_error=True, extra={"decision": approval.decision})
        if ctx.read_cache is not None:
            ctx.read_cache.forget([path])
        return ToolResult(output=message, display=f"{message} (memory)", extra={"written": str(path), "decision": approval.decision})


def _managed_root(path: Path, ctx: ToolContext) -> ManagedWrites | None:
    """``ctx.managed_writes`` when ``path`` (resolved) lies in one of its roots — the team folder too,
    though it sits in the workspace, so its writes meet the store's secret guard."""
    managed = ctx.managed_writes
    if managed is None:
        return None
    return managed if any(path.is_relative_to(root) for root in managed.roots) else None


class ApprovedEditTool(_ApprovedWrite):
    name = "edit"
    verb = "Edit"
    args_model = EditArgs
    DECLARATION = EditTool.DECLARATION

    def change(self, path: Path, current: str | None, params: EditArgs) -> tuple[str, str]:
        new_text, count = edited_text(path, current, params)
        return new_text, edit_message(path, count)

    def secret_note(self, current: str | None, params: EditArgs) -> str:
        """0.24.4 scans ``new_string`` first (plain message), then the whole new text (the note if the file held it)."""
        if current is not None and not scan_for_secrets(params.new_string) and scan_for_secrets(current):
            return PRE_EXISTING_NOTE
        return ""


class ApprovedWriteFileTool(_ApprovedWrite):
    name = "write_file"
    verb = "Write"
    args_model = WriteFileArgs
    DECLARATION = WriteFileTool.DECLARATION

    def change(self, path: Path, current: str | None, params: WriteFileArgs) -> tuple[str, str]:
        check_size(params.content, self.name)
        return params.content, write_message(path, current is not None)
