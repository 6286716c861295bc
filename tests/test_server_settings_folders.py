"""Settings per workspace folder, end to end: a change in one folder leaves the other as set.

The client answers ``workspace/configuration`` per ``scopeUri`` (as VS Code
does for resource-scoped settings); the model name each folder's chat sends
shows which settings that folder's engine holds.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from support.scripted_openai import ScriptedOpenAI

from lsp_harness import chat, server_env, start_client


def folder(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)
    return root


async def model_sent(client, scripted: ScriptedOpenAI, root: Path) -> str:
    await chat(client, "hi", workspaceUri=root.as_uri())
    return scripted.chat_requests()[-1].body["model"]


async def test_a_change_in_one_folder_leaves_the_other_as_set(home: Path, tmp_path: Path, scripted: ScriptedOpenAI):
    one, two = folder(tmp_path, "one"), folder(tmp_path, "two")
    client, _ = await start_client(server_env(home, None))
    try:
        client.set_configuration({"model": {"name": "model-one"}}, section="qwen", scope_uri=one.as_uri())
        client.set_configuration({"model": {"name": "model-two"}}, section="qwen", scope_uri=two.as_uri())
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=True)),
                workspace_folders=[types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in (one, two)],
                initialization_options={"model": {"baseUrl": scripted.base_url, "apiKey": "k"}},
            )
        )
        assert await model_sent(client, scripted, one) == "model-one"
        assert await model_sent(client, scripted, two) == "model-two"

        # What the VS Code extension sends: a change signal without values; each folder is pulled again.
        client.set_configuration({"model": {"name": "model-one-changed"}}, section="qwen", scope_uri=one.as_uri())
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        assert await model_sent(client, scripted, one) == "model-one-changed"
        assert await model_sent(client, scripted, two) == "model-two"

        # An unscoped push (window-level values) no longer replaces what each folder's pull answered.
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"qwen": {"model": {"name": "window-model"}}}))
        assert await model_sent(client, scripted, one) == "model-one-changed"
        assert await model_sent(client, scripted, two) == "model-two"

        # A folder whose pull sets nothing for a key gets the pushed value.
        client.set_configuration({}, section="qwen", scope_uri=two.as_uri())
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"qwen": {"model": {"name": "window-model"}}}))
        assert await model_sent(client, scripted, two) == "window-model"
        assert await model_sent(client, scripted, one) == "model-one-changed"
    finally:
        await client.shutdown_session()
        await client.stop()
