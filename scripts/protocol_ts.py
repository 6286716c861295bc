"""Generate the VS Code extension's wire types from ``qwen_lsp/protocol.py`` (pydantic's JSON Schema → TypeScript).

Writes two committed files:

* ``vscode-extension/src/shared/protocol.generated.ts`` — an interface per
  model and a type per ``Literal`` alias (types only, so the webview can
  import it too);
* ``vscode-extension/src/rpc.generated.ts`` — a typed ``RequestType`` /
  ``NotificationType`` per ``qwen/*`` method of the method table, so the
  extension never sends a method string.

Run after changing ``protocol.py``::

    .venv/bin/python scripts/protocol_ts.py

``tests/test_protocol_ts.py`` regenerates both in memory and fails when the
committed files differ, and ``npm test`` type-checks the extension against
them, so a model change the TypeScript side does not follow fails a test.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from qwen_lsp import protocol

ROOT = Path(__file__).resolve().parent.parent
TYPES_FILE = ROOT / "vscode-extension" / "src" / "shared" / "protocol.generated.ts"
RPC_FILE = ROOT / "vscode-extension" / "src" / "rpc.generated.ts"
HEADER = "// Generated from qwen_lsp/protocol.py by scripts/protocol_ts.py: do not edit; run `.venv/bin/python scripts/protocol_ts.py`.\n"


def models() -> list[type[BaseModel]]:
    """Every wire model of ``protocol.py``, in definition order."""
    bases = (protocol.WireParams, protocol.WireResult)
    return [v for v in vars(protocol).values() if isinstance(v, type) and issubclass(v, bases) and v not in bases and v.__module__ == protocol.__name__]


def aliases() -> dict[str, tuple[Any, ...]]:
    """The module's ``Literal`` aliases (``MemoryScope`` …) and their values."""
    return {name: typing.get_args(v) for name, v in vars(protocol).items() if not name.startswith("_") and typing.get_origin(v) is typing.Literal}


def attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each field of ``model`` and its bases, keyed by the field's wire name.

    Read here from the source rather than by pydantic's ``use_attribute_docstrings``
    at import: that walks every loaded module per model class and cost every
    server and CLI start ~0.1 s for text only these generated files show.
    """
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if cls.__module__ != protocol.__name__:
            continue
        body = ast.parse(inspect.getsource(cls)).body[0]
        assert isinstance(body, ast.ClassDef)
        for node, after in zip(body.body, body.body[1:]):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                docs[node.target.id] = inspect.cleandoc(after.value.value)
    fields = model.model_fields
    return {(fields[name].alias or name): text for name, text in docs.items() if name in fields}


def literal(value: Any) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'" if isinstance(value, str) else json.dumps(value)


def doc(text: str | None, indent: str) -> str:
    if not text:
        return ""
    lines = text.strip().replace("``", "`").replace("*/", "*\\/").splitlines()
    if len(lines) == 1:
        return f"{indent}/** {lines[0]} */\n"
    return f"{indent}/**\n" + "".join(f"{indent} * {line}".rstrip() + "\n" for line in lines) + f"{indent} */\n"


class Emitter:
    def __init__(self) -> None:
        self.aliases = aliases()
        self.by_values = {tuple(v): k for k, v in self.aliases.items()}

    def type_of(self, schema: dict[str, Any], *, drop_null: bool) -> str:
        if "$ref" in schema:
            return schema["$ref"].rsplit("/", 1)[1]
        if "anyOf" in schema:
            parts = [p for p in schema["anyOf"] if not (drop_null and p.get("type") == "null")]
            return " | ".join(self.type_of(p, drop_null=drop_null) for p in parts)
        if "enum" in schema:
            values = tuple(schema["enum"])
            return self.by_values.get(values) or " | ".join(literal(v) for v in values)
        if "const" in schema:
            return literal(schema["const"])
        kind = schema.get("type")
        if kind == "string":
            return "string"
        if kind in ("integer", "number"):
            return "number"
        if kind == "boolean":
            return "boolean"
        if kind == "null":
            return "null"
        if kind == "array":
            item = self.type_of(schema.get("items", {}), drop_null=drop_null)
            return f"({item})[]" if " " in item else f"{item}[]"
        if kind == "object" and "properties" not in schema:
            extra = schema.get("additionalProperties", True)
            return "Record<string, unknown>" if extra is True or extra == {} else f"Record<string, {self.type_of(extra, drop_null=drop_null)}>"
        if not schema:
            return "unknown"
        raise ValueError(f"no TypeScript for JSON Schema {schema!r}")

    def interface(self, name: str, schema: dict[str, Any], docs: dict[str, str], *, sent_by_server: bool) -> str:
        """A server-sent model leaves unset optionals out (``exclude_none``): ``x?: T``, never ``null``.

        ``docs`` (:func:`attribute_docs`) documents a field without a ``Field(description=...)``.
        """
        required = set(schema.get("required", []))
        body = ""
        for prop, sub in schema.get("properties", {}).items():
            optional = prop not in required
            body += doc(sub.get("description") or docs.get(prop), "  ")
            body += f"  {prop}{'?' if optional else ''}: {self.type_of(sub, drop_null=sent_by_server and optional)};\n"
        return doc(schema.get("description"), "") + f"export interface {name} {{\n{body}}}\n"


def types_ts() -> str:
    all_models = models()
    _, schema = models_json_schema(
        [(m, "validation" if issubclass(m, protocol.WireParams) else "serialization") for m in all_models],
        by_alias=True,
        ref_template="#/$defs/{model}",
    )
    defs = schema["$defs"]
    emit = Emitter()
    out = [HEADER]
    for name, values in emit.aliases.items():
        out.append(f"export type {name} = {' | '.join(literal(v) for v in values)};\n")
    for model in all_models:
        out.append("\n" + emit.interface(model.__name__, defs[model.__name__], attribute_docs(model), sent_by_server=issubclass(model, protocol.WireResult)))
    return "".join(out)


def camel(method: str) -> str:
    """``qwen/sessions/list`` → ``sessionsList``."""
    head, *rest = method.removeprefix("qwen/").split("/")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def rpc_ts() -> str:
    names = {m.__name__ for m in models()}

    def name(model: type[BaseModel]) -> str:
        assert model.__name__ in names, f"{model.__name__} is not a wire model of protocol.py"
        return f"P.{model.__name__}"

    out = [HEADER, "import { NotificationType, RequestType } from 'vscode-jsonrpc';\n", "import type * as P from './shared/protocol.generated';\n"]
    out.append("\n/** The `qwen/*` requests a client sends. */\nexport const requests = {\n")
    for r in protocol.CLIENT_REQUESTS:
        out.append(f"  {camel(r.method)}: new RequestType<{name(r.params)}, {name(r.result)}, void>({literal(r.method)}),\n")
    out.append("} as const;\n\n/** The `qwen/*` notifications the server sends. */\nexport const notifications = {\n")
    for n in protocol.SERVER_NOTIFICATIONS:
        out.append(f"  {camel(n.method)}: new NotificationType<{name(n.params)}>({literal(n.method)}),\n")
    out.append("} as const;\n\n/** The `qwen/*` notifications a client sends. */\nexport const clientNotifications = {\n")
    for n in protocol.CLIENT_NOTIFICATIONS:
        out.append(f"  {camel(n.method)}: new NotificationType<{name(n.params)}>({literal(n.method)}),\n")
    p = protocol.PERMISSION
    out.append("} as const;\n\n/** The `qwen/*` request the server sends: a write or command waiting for the user. */\n")
    out.append(f"export const permissionRequest = new RequestType<{name(p.params)}, {name(p.result)}, void>({literal(p.method)});\n")
    out.append("\n/** The server's commands, each a `workspace/executeCommand` typed with its argument and result. */\nexport const commands = {\n")
    for c in protocol.COMMANDS:
        params = f"{{ command: {literal(c.name)}; arguments: [{name(c.argument)}] }}"
        out.append(f"  {c.name.removeprefix('qwen.')}: new RequestType<{params}, {name(c.result)}, void>('workspace/executeCommand'),\n")
    out.append("} as const;\n")
    out.append("\n/** Sends one request of the tables above: the language client's `sendRequest`, or a test's recorder. */\n")
    out.append("export type Send = <P, R>(type: RequestType<P, R, void>, params: P) => Promise<R>;\n")
    return "".join(out)


def outputs() -> dict[Path, str]:
    return {TYPES_FILE: types_ts(), RPC_FILE: rpc_ts()}


def main() -> int:
    for path, text in outputs().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
