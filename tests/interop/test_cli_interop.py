"""qwen-lsp beside the real Qwen Code CLI 0.24.4, on one scratch HOME and one repository, against the scripted endpoint.

Each test runs both tools on the same settings and files and compares what reaches the
model (the scripted server records every request) or what lands on disk. The CLI is
``@qwen-code/qwen-code@0.24.4`` from the npm registry (``scripts/install_qwen_cli.sh``,
through the ``qwen_cli`` fixture); under CI a CLI that cannot be installed fails these
tests instead of skipping them. ``docs/interop.md`` lists what each test proves.

Background model requests (memory extraction, suggestions) are switched off with the
keys both tools read, so each tool's requests are exactly its turn's, unless a test is
about them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.acp_client import AcpSession
from support.qwen_cli import QUIET_CLI_SETTINGS, cli_env
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, server_env
from security.permission_client import permission_client

pytestmark = pytest.mark.timeout(300)

NO_BACKGROUND = {"memory": {"enableManagedAutoMemory": False}, "ui": {"enableFollowupSuggestions": False}}
SAMPLING_KEYS = ("model", "temperature", "top_p", "top_k", "max_tokens", "presence_penalty", "frequency_penalty")
LISTING_HEAD = "Showing up to 20 items:"


def deep_merge(*parts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".qwen").mkdir(parents=True)
    return h


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "repo"
    (ws / ".git").mkdir(parents=True)
    (ws / "main.py").write_text("print('hi')\n")
    return ws.resolve()


def user_settings(home: Path, *parts: dict[str, Any]) -> None:
    (home / ".qwen" / "settings.json").write_text(json.dumps(deep_merge(QUIET_CLI_SETTINGS, *parts)))


def run_cli(qwen: str, repo: Path, home: Path, scripted: ScriptedOpenAI, prompt: str = "hi", *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [qwen, "-p", prompt, "--auth-type", "openai", *args], cwd=repo, env=cli_env(home, scripted.base_url, **env),
        capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    return done


def run_ours(repo: Path, home: Path, scripted: ScriptedOpenAI, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "qwen_lsp", *args], cwd=repo, env=cli_env(home, scripted.base_url, **env),
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    return done


def first_request(scripted: ScriptedOpenAI, since: int) -> dict[str, Any]:
    body: dict[str, Any] = scripted.chat_requests()[since].body
    return body


def sampling(body: dict[str, Any]) -> dict[str, Any]:
    return {k: body.get(k) for k in SAMPLING_KEYS}


# ------------------------------------------------------------------ settings: model precedence and sampling


@pytest.mark.parametrize(
    "name, user, project, env, expected_model",
    [
        pytest.param(*row, id=row[0])
        for row in (
        ("settings file beats OPENAI_MODEL", {"model": {"name": "settings-model"}}, None, {"OPENAI_MODEL": "env-model"}, "settings-model"),
        ("project file beats user file and env", {"model": {"name": "user-model"}}, {"model": {"name": "project-model"}}, {"OPENAI_MODEL": "env-model"}, "project-model"),
        ("OPENAI_MODEL when no file names one", {}, None, {"OPENAI_MODEL": "env-model"}, "env-model"),
        ("QWEN_MODEL after OPENAI_MODEL", {}, None, {"QWEN_MODEL": "qwen3-coder-plus"}, "qwen3-coder-plus"),
        (
            "samplingParams are sent, max_tokens caps the turn",
            {"model": {"name": "qwen3-coder-plus", "generationConfig": {"samplingParams": {"temperature": 0.3, "top_p": 0.9, "max_tokens": 1234}}}},
            None,
            {"OPENAI_MODEL": "env-model"},
            "qwen3-coder-plus",
        ),
        ("a project's samplingParams", {}, {"model": {"generationConfig": {"samplingParams": {"temperature": 0.1, "top_k": 20}}}}, {"OPENAI_MODEL": "glm-4.7"}, "glm-4.7"),
        )
    ],
)
def test_model_and_sampling_parameters_are_the_clis(name, user, project, env, expected_model, qwen_cli, home, repo, scripted):
    """Same settings, same request: the model (a settings file's model.name wins over OPENAI_MODEL), the sampling
    parameters, and the max_tokens the CLI sends on every turn (the model's output limit, or samplingParams.max_tokens)."""
    user_settings(home, NO_BACKGROUND, user)
    if project is not None:
        (repo / ".qwen").mkdir()
        (repo / ".qwen" / "settings.json").write_text(json.dumps(project))
    run_cli(qwen_cli, repo, home, scripted, **env)
    cli = sampling(first_request(scripted, 0))
    mark = len(scripted.chat_requests())
    run_ours(repo, home, scripted, "chat", "hi", **env)
    ours = sampling(first_request(scripted, mark))
    assert cli["model"] == expected_model
    assert ours == cli
    assert isinstance(cli["max_tokens"], int)


def test_doctor_names_the_layer_that_set_the_model_the_cli_uses(qwen_cli, home, repo, scripted):
    user_settings(home, NO_BACKGROUND, {"model": {"name": "user-model", "generationConfig": {"samplingParams": {"temperature": 0.4}}}})
    (repo / ".qwen").mkdir()
    project_file = repo / ".qwen" / "settings.json"
    project_file.write_text(json.dumps({"model": {"name": "project-model"}}))
    run_cli(qwen_cli, repo, home, scripted, OPENAI_MODEL="env-model")
    used = first_request(scripted, 0)
    doctor = subprocess.run(
        [sys.executable, "-m", "qwen_lsp", "doctor"], cwd=repo, env=cli_env(home, scripted.base_url, OPENAI_MODEL="env-model"),
        capture_output=True, text=True, timeout=60,
    ).stdout
    assert f"model.name = {used['model']!r}  (project: {project_file})" in doctor
    user_file = home / ".qwen" / "settings.json"
    assert f"model.generationConfig.samplingParams.temperature = {used['temperature']!r}  (user: {user_file})" in doctor
    assert "model.baseUrl = " in doctor and "(environment: OPENAI_BASE_URL)" in doctor


# ------------------------------------------------------------------ denial ends the turn


def denied_edit(repo: Path) -> Reply:
    return Reply(
        chunks=["I will write it."],
        tool_calls=[
            ToolCallSpec("write_file", {"file_path": str(repo / "new.txt"), "content": "hello\n"}, id="w1"),
            ToolCallSpec("read_file", {"file_path": str(repo / "main.py")}, id="r1"),
        ],
    )


def tool_texts(body: dict[str, Any]) -> list[str]:
    out = []
    for message in body["messages"]:
        if message["role"] == "tool":
            content = message["content"]
            out.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return out


async def test_a_denied_edit_ends_the_turn_as_the_cli_does(qwen_cli, home, repo, scripted):
    """The user says no to a write: neither tool asks the model again in that turn (one request), the call after
    it answers with 0.24.4's skip message, and the next prompt carries both answers. The CLI is driven as an
    editor drives it (ACP, the permission answered ``reject_once``), qwen-lsp over LSP (``qwen/permission`` deny)."""
    user_settings(home, NO_BACKGROUND, {"tools": {"approvalMode": "default"}})
    scripted.enqueue(denied_edit(repo), Reply(chunks=["Fine."]))
    acp = AcpSession(qwen_cli, repo, cli_env(home, scripted.base_url, OPENAI_MODEL="scripted-model"))
    try:
        acp.prompt("please write new.txt")
        cli_turn = len(scripted.chat_requests())
        acp.prompt("and now?")
    finally:
        acp.close()
    assert len(acp.asked) == 1
    cli_requests = [r.body for r in scripted.chat_requests()]
    mark = len(cli_requests)

    scripted.enqueue(denied_edit(repo), Reply(chunks=["Fine."]))
    env = server_env(home, scripted.base_url)
    async with permission_client(env, repo, None, [{"decision": "deny"}]) as client:
        first = as_dict(await chat(client, "please write new.txt"))
        ours_turn = len(scripted.chat_requests()) - mark
        await chat(client, "and now?", sessionId=first["sessionId"])
        asked = client.log.asked
    ours_requests = [r.body for r in scripted.chat_requests()[mark:]]

    assert len(asked) == 1 and not (repo / "new.txt").exists()
    assert cli_turn == ours_turn == 1
    assert len(cli_requests) == len(ours_requests) == 2
    cli_tools, ours_tools = tool_texts(cli_requests[1]), tool_texts(ours_requests[1])
    assert len(cli_tools) == len(ours_tools) == 2
    assert ours_tools[1] == cli_tools[1] == "Skipped because a permission request was cancelled before the user answered; user input is required before continuing."


# ------------------------------------------------------------------ the folder listing


LISTING_TREE = {
    ".gitignore": "build/\n*.log\n!keep.log\nout\nsecret.txt\n",
    ".qwenignore": "private/\nnotes.md\n",
    ".git/info/exclude": "local.env\n",
    "sub/.gitignore": "x.tmp\n",
    "a.log": "", "keep.log": "", "secret.txt": "", "notes.md": "", "local.env": "",
    "build/b.py": "", "out/o.py": "", "sub/x.tmp": "", "sub/y.py": "", "sub/deep/x.tmp": "", "private/p.txt": "",
}


def listing(body: dict[str, Any]) -> str:
    text = json.dumps(body["messages"])
    start = text.index(LISTING_HEAD)
    return str(json.loads('"' + text[start:].split("</system-reminder>", 1)[0] + '"'))


def test_the_folder_listing_is_the_clis(qwen_cli, home, repo, scripted):
    """Gitignored, excluded and .qwenignored files are left out, ignored folders shown as ``name/...``: the same
    lines as the CLI's startup listing."""
    for rel, text in LISTING_TREE.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    user_settings(home, NO_BACKGROUND)
    run_cli(qwen_cli, repo, home, scripted, OPENAI_MODEL="scripted-model")
    cli = listing(first_request(scripted, 0))
    mark = len(scripted.chat_requests())
    run_ours(repo, home, scripted, "chat", "hi", OPENAI_MODEL="scripted-model")
    ours = listing(first_request(scripted, mark))
    assert ours == cli
    for hidden in ("a.log", "secret.txt", "notes.md", "local.env", "x.tmp"):
        assert hidden not in ours


# ------------------------------------------------------------------ sessions and memory across the two tools


def test_the_cli_resumes_a_chat_qwen_lsp_recorded(qwen_cli, home, repo, scripted):
    user_settings(home, NO_BACKGROUND)
    scripted.enqueue(Reply(chunks=["The answer is 42."]))
    ours = run_ours(repo, home, scripted, "chat", "what is the answer?", OPENAI_MODEL="scripted-model")
    session = next(line for line in ours.stderr.splitlines() if line.startswith("[session ")).removeprefix("[session ").split("]", 1)[0]
    mark = len(scripted.chat_requests())
    run_cli(qwen_cli, repo, home, scripted, "and the question?", "--resume", session, OPENAI_MODEL="scripted-model")
    sent = json.dumps(first_request(scripted, mark)["messages"])
    assert "what is the answer?" in sent and "The answer is 42." in sent and "and the question?" in sent


def test_a_memory_qwen_lsp_saved_is_in_the_clis_prompt(qwen_cli, home, repo, scripted):
    user_settings(home, {"ui": {"enableFollowupSuggestions": False}})
    saved = run_ours(repo, home, scripted, "memory", "remember", "the integration tests never mock the database", OPENAI_MODEL="scripted-model")
    path = Path(saved.stdout.strip().rsplit(": ", 1)[1])
    run_cli(qwen_cli, repo, home, scripted, "how do we test?", OPENAI_MODEL="scripted-model")
    sent = json.dumps(first_request(scripted, 0)["messages"])
    assert path.name in sent  # the MEMORY.md line the CLI builds its memory block from


# ------------------------------------------------------------------ the settings table in docs/interop.md

SCHEMA_KEYS_JS = """
const fs = require('fs'), path = require('path');
const dir = process.argv[1];
const file = fs.readdirSync(dir).filter((f) => f.endsWith('.js')).map((f) => path.join(dir, f))
  .find((f) => fs.readFileSync(f, 'utf8').includes('function getSettingsSchema()'));
import(file).then((m) => {
  const out = [];
  const walk = (o, p) => { for (const k in o) { const d = o[k];
    if (d.properties && d.type === 'object' && !d.additionalProperties) walk(d.properties, p + k + '.'); else out.push(p + k); } };
  walk(m.getSettingsSchema(), '');
  console.log(JSON.stringify(out));
});
"""


def test_every_setting_of_the_cli_is_in_the_table(qwen_cli):
    """``docs/interop.md`` names every key of the installed CLI's settings schema, each with what qwen-lsp does."""
    chunks = Path(qwen_cli).resolve().parent / "chunks"  # .bin/qwen links to the package's cli-entry.js
    done = subprocess.run(["node", "-e", SCHEMA_KEYS_JS, str(chunks)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    keys = json.loads(done.stdout)
    assert "model.name" in keys and len(keys) > 100
    doc = (Path(__file__).resolve().parents[2] / "docs" / "interop.md").read_text(encoding="utf-8")
    table = doc.split("## Every setting the CLI reads", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    assert set(keys) - rows == set()
    assert "model.generationConfig.samplingParams" in rows
