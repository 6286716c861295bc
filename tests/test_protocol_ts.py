"""The extension's TypeScript wire types are the ones ``protocol.py`` generates, so the two sides cannot drift.

``scripts/protocol_ts.py`` writes them from pydantic's JSON Schema; this test
regenerates them in memory and compares with the committed files. A model
change that the TypeScript side does not follow fails here; after
regenerating, ``npm test`` (``tsc``) fails wherever the extension used the
old shape.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from qwen_lsp import protocol

ROOT = Path(__file__).resolve().parent.parent


def generator():
    spec = importlib.util.spec_from_file_location("protocol_ts", ROOT / "scripts" / "protocol_ts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_typescript_matches_protocol_py():
    for path, text in generator().outputs().items():
        rel = path.relative_to(ROOT)
        assert path.read_text() == text, f"{rel} is stale: run `.venv/bin/python scripts/protocol_ts.py` and fix what `npm run typecheck` then reports"


def test_every_field_of_every_model_is_in_the_typescript():
    text = generator().types_ts()
    for model in generator().models():
        body = re.search(rf"export interface {model.__name__} {{\n(.*?)^}}", text, flags=re.S | re.M)
        assert body is not None, model.__name__
        for name, field in model.model_fields.items():
            assert re.search(rf"^  {field.alias or name}\??: ", body.group(1), flags=re.M), f"{model.__name__}.{field.alias or name}"


def test_literals_become_unions_not_strings():
    """``MemoryItem.scope`` is ``MemoryScope`` on both sides (it once drifted to ``MemoryScope | string``)."""
    text = generator().types_ts()
    assert "export type MemoryScope = 'user' | 'project' | 'team';" in text
    item = re.search(r"export interface MemoryItem {\n(.*?)^}", text, flags=re.S | re.M)
    assert item is not None
    assert "  scope: MemoryScope;\n" in item.group(1) and "  age: string;\n" in item.group(1)


def test_every_method_of_the_table_has_a_typed_constant():
    rpc = generator().rpc_ts()
    for request in protocol.CLIENT_REQUESTS:
        assert f"new RequestType<P.{request.params.__name__}, P.{request.result.__name__}, void>('{request.method}')" in rpc
    for notification in (*protocol.SERVER_NOTIFICATIONS, *protocol.CLIENT_NOTIFICATIONS):
        assert f"new NotificationType<P.{notification.params.__name__}>('{notification.method}')" in rpc
    assert "('qwen/permission')" in rpc


def test_the_server_serves_exactly_the_table():
    """The generated constants are only true if the server registers every method and command of the table."""
    from qwen_lsp.server.handlers import create_server

    features = create_server().protocol.fm
    qwen_methods = {m for m in features.features if m.startswith("qwen/")}
    assert qwen_methods == {r.method for r in protocol.CLIENT_REQUESTS} | {n.method for n in protocol.CLIENT_NOTIFICATIONS}
    assert set(features.commands) == {c.name for c in protocol.COMMANDS}
