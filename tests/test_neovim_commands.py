"""The README's Neovim recipe, run in a headless Neovim against the real server and the scripted model.

The Lua block after ``<!-- neovim-commands -->`` in README.md is taken as it is; a harness starts
the server as an LSP client (Neovim 0.7's ``vim.lsp.start_client``, which 0.11 still has), runs
``:Qwen`` lines one after another, answers "Yes" where a command asks, and writes every message
the recipe shows to a file. Skipped without ``nvim`` except under ``CI=true`` (``.ci/run``
installs it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import server_env

README = Path(__file__).resolve().parent.parent / "README.md"
SUMMARY = "<analysis>draft</analysis><state_snapshot>the user said hello twice</state_snapshot>"

HARNESS = r"""
local out = {}
local function record(msg) table.insert(out, msg) end
vim.notify = function(msg, level) record({ level = level or vim.log.levels.INFO, text = msg }) end
vim.fn.confirm = function(question) record({ asked = question }) return 1 end
local id = vim.lsp.start_client({ name = "qwen_lsp", cmd = vim.fn.json_decode(vim.env.QWEN_CMD), root_dir = vim.env.QWEN_WS })
vim.wait(30000, function() local c = vim.lsp.get_client_by_id(id) return c ~= nil and c.server_capabilities ~= nil end, 20)
local lines = vim.fn.json_decode(vim.env.QWEN_LINES)
for _, line in ipairs(lines) do
  local before = #out
  vim.cmd("Qwen " .. line)
  vim.wait(30000, function()
    local last = out[#out]
    return #out > before and last.asked == nil
  end, 20)
end
local completed = vim.fn.getcompletion("Qwen /comp", "cmdline")
record({ completion = completed })
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.QWEN_OUT)
vim.cmd("qa!")
"""


def recipe() -> str:
    text = README.read_text()
    block = re.search(r"<!-- neovim-commands -->\n```lua\n(.*?)```", text, re.S)
    assert block, "README.md lost its Neovim commands recipe"
    return block.group(1)


def test_the_readme_recipe_runs_the_commands_in_neovim(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    nvim = shutil.which("nvim")
    if nvim is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nvim is missing: .ci/run installs Debian's neovim")
        pytest.skip("nvim is not installed")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "QWEN.md").write_text("# kept\n")
    init = tmp_path / "init.lua"
    init.write_text(recipe() + HARNESS)
    scripted.enqueue(
        Reply(chunks=["hello back"], usage={"prompt_tokens": 4_000, "completion_tokens": 5, "total_tokens": 4_005}),
        Reply(chunks=["again"], usage={"prompt_tokens": 4_100, "completion_tokens": 5, "total_tokens": 4_105}),
        Reply(chunks=[SUMMARY], usage={"prompt_tokens": 4_000, "completion_tokens": 30, "total_tokens": 4_030}),
        Reply(chunks=["Remembered."]),
        Reply(chunks=["QWEN.md analysed."]),
    )
    lines = ["hello", "hello again", "/compress", "/model other-model", "/remember we deploy on Fridays", "/init", "/nosuch", "/clear"]
    out = tmp_path / "out.json"
    env = {
        **server_env(home, scripted.base_url),
        "QWEN_CMD": json.dumps([sys.executable, "-m", "qwen_lsp", "serve", "--stdio"]),
        "QWEN_WS": str(ws),
        "QWEN_LINES": json.dumps(lines),
        "QWEN_OUT": str(out),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
    }
    subprocess.run([nvim, "--headless", "-u", str(init), "-i", "NONE"], cwd=ws, env=env, timeout=180, check=True, capture_output=True)
    shown = json.loads(out.read_text())
    texts = [m.get("text") for m in shown if "text" in m]
    assert texts[0] == "hello back" and texts[1] == "again"
    assert texts[2].startswith("Chat history compressed from ")
    assert texts[3] == "Model switched to other-model for this session."
    assert texts[4] == "Remembering: we deploy on Fridays\nRemembered."
    assert {"asked": "A QWEN.md file already exists in this directory. Do you want to regenerate it?"} in shown
    assert texts[5] == "Empty QWEN.md created. Now analyzing the project to populate it.\nQWEN.md analysed."
    assert texts[6].startswith("Unknown command: /nosuch") and [m["level"] for m in shown if m.get("text") == texts[6]] == [4]
    assert texts[7] == "Starting a new session."
    assert shown[-1] == {"completion": ["/compress"]}
    requests = scripted.chat_requests()
    assert requests[-1].body["model"] == "other-model"
    assert "hello again" in json.dumps(requests[1].body["messages"])  # the second line went to the same chat
