"""The command line, run as a user would: a subprocess in a scratch HOME and repository."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.scripted_openai import HttpError, Reply, ScriptedOpenAI

from qwen_lsp.files.paths import sanitize_cwd


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / "pkg" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    (r / "QWEN.md").write_text("Repository rules.\n")
    return r


def run(args: list[str], cwd: Path, home: Path, base_url: str | None, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    e["HOME"] = str(home)
    if base_url:
        e.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="x", OPENAI_MODEL="m")
    e.update(env)
    return subprocess.run(
        [sys.executable, "-m", "qwen_lsp", *args], cwd=cwd, env=e, input=stdin, capture_output=True, text=True, timeout=60
    )


def test_chat_prints_the_reply_and_records_the_session(repo: Path, home: Path, scripted: ScriptedOpenAI):
    scripted.enqueue(Reply(chunks=["Hello", " there"]))
    cwd = repo / "pkg" / "deep"
    out = run(["chat", "hi"], cwd, home, scripted.base_url)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Hello there\n"
    chats = home / ".qwen" / "projects" / sanitize_cwd(cwd.resolve()) / "chats"
    files = list(chats.glob("*.jsonl"))
    assert len(files) == 1
    records = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert [r["type"] for r in records] == ["user", "assistant"]
    assert records[0]["message"]["parts"][-1] == {"text": "hi"}
    assert records[1]["message"]["parts"] == [{"text": "Hello there"}]
    assert records[1]["parentUuid"] == records[0]["uuid"] and records[0]["parentUuid"] is None
    assert all(r["cwd"] == str(cwd.resolve()) and r["sessionId"] == files[0].stem for r in records)
    body = scripted.chat_requests()[-1].body
    assert "Repository rules." in body["messages"][0]["content"] and body["model"] == "m"
    offered = {t["function"]["name"] for t in body["tools"]}
    assert {"edit", "write_file", "save_memory"} <= offered  # approvalMode "default": edits offered (every call asks); the model's memory tool
    assert "run_shell_command" in offered  # on by default, as Qwen Code 0.24.4 (docs/shell.md)
    for tool in ("todo_write", "ask_user_question"):
        assert tool not in offered and f"'{tool}'" not in body["messages"][0]["content"]
    assert "save_memory" in offered  # the model's way to remember (docs/memory.md)


ONE_SHOT_UNTIL_REQUEST = """
import sys
from urllib.parse import urlsplit

port, out = urlsplit(sys.argv[1]).port, sys.argv[2]

def at_the_request(event, args):
    if event == "socket.connect" and isinstance(args[1], tuple) and args[1][1] == port:
        with open(out, "x") as f:  # "x": only the first connection to the model is recorded
            f.write("\\n".join(sorted(sys.modules)))

sys.addaudithook(at_the_request)
from qwen_lsp.cli import main
sys.exit(main(["chat", "hi"]))
"""
"""``qwen-lsp chat hi`` with the names of the modules loaded when it connects to the model written to a file."""

NOT_BEFORE_THE_FIRST_REQUEST = ("watchdog", "wcmatch", "bracex", "re2", "qwen_lsp.files.watching", "qwen_lsp.memory.forget_select")
"""What a one-shot chat loads only when first used: a watch, a glob or ignore match, a regex search, ``memory forget``."""


def test_a_one_shot_chat_loads_no_watcher_or_pattern_matcher_before_its_request(repo: Path, home: Path, scripted: ScriptedOpenAI):
    """Its start is what the user waits for (``bench/chat_to_request.py``); these packages cost it ~40 ms and serve later turns."""
    scripted.enqueue(Reply(chunks=["ok"]))
    modules_file = home / "modules.txt"
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    e.update(HOME=str(home), OPENAI_BASE_URL=scripted.base_url, OPENAI_API_KEY="x", OPENAI_MODEL="m")
    out = subprocess.run([sys.executable, "-c", ONE_SHOT_UNTIL_REQUEST, scripted.base_url, str(modules_file)],
                         cwd=repo, env=e, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == "ok\n", out.stderr
    loaded = set(modules_file.read_text().split())
    assert {"httpx", "qwen_lsp.engine", "qwen_lsp.agent.tools.glob"} <= loaded  # recorded at the request, with the tools declared
    assert not {m for m in loaded if m.split(".")[0] in NOT_BEFORE_THE_FIRST_REQUEST or m in NOT_BEFORE_THE_FIRST_REQUEST}


def test_chat_reads_the_prompt_from_stdin_and_continues_a_session(repo: Path, home: Path, scripted: ScriptedOpenAI):
    first = run(["chat"], repo, home, scripted.base_url, stdin="from stdin\n")
    assert first.returncode == 0, first.stderr
    session = first.stderr.strip().splitlines()[-1].removeprefix("[session ").removesuffix("]")
    second = run(["chat", "--session", session, "next"], repo, home, scripted.base_url)
    assert second.returncode == 0, second.stderr
    msgs = scripted.chat_requests()[-1].body["messages"]
    assert [m["role"] for m in msgs[1:]] == ["user", "assistant", "user"]
    shown = run(["sessions", "show", session], repo, home, None)
    assert "from stdin" in shown.stdout and "next" in shown.stdout
    listed = run(["sessions", "list"], repo, home, None)
    assert session in listed.stdout


def test_chat_failures_are_one_line_and_non_zero(repo: Path, home: Path, scripted: ScriptedOpenAI):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    out = run(["chat", "hi"], repo, home, dead)
    assert out.returncode != 0
    error, kept = out.stderr.strip().splitlines()  # the error, then where the prompt was kept
    assert "Nothing is listening" in error and "Traceback" not in out.stderr
    assert kept.startswith("[session ") and "qwen-lsp chat --session" in kept
    scripted.enqueue(HttpError(401, "bad key"))
    out = run(["chat", "hi"], repo, home, scripted.base_url)
    assert out.returncode != 0 and "rejected" in out.stderr
    out = run(["chat", "hi"], repo, home, None)
    assert out.returncode != 0 and "OPENAI_BASE_URL" in out.stderr


def test_context_json_totals_and_lists_files(repo: Path, home: Path):
    out = run(["context", "--json"], repo / "pkg" / "deep", home, None)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["totalTokens"] == sum(s["tokens"] for s in report["sections"])
    assert any(s.get("source") == "../../QWEN.md" for s in report["sections"])
    text = run(["context"], repo, home, None)
    assert text.returncode == 0 and "total" in text.stdout


def test_skills_list_shows_bundled_and_errors(repo: Path, home: Path):
    bad = repo / ".qwen" / "skills" / "bad"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("no frontmatter here\n")
    out = run(["skills", "list"], repo, home, None)
    assert out.returncode == 0, out.stderr
    assert "code-review" in out.stdout and "missing YAML frontmatter" in out.stdout
    data = json.loads(run(["skills", "list", "--json"], repo, home, None).stdout)
    assert any(s["name"] == "write-tests" and s["level"] == "bundled" for s in data["skills"])


def test_doctor_reports_sources_and_reachability(repo: Path, home: Path, scripted: ScriptedOpenAI):
    out = run(["doctor"], repo, home, scripted.base_url)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "model.name = 'm'  (environment: OPENAI_MODEL)" in out.stdout
    assert "reachable" in out.stdout and "tokenizer:" in out.stdout
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    out = run(["doctor"], repo, home, dead)
    assert out.returncode == 1 and "UNREACHABLE" in out.stdout


def test_doctor_shows_which_file_set_a_qwen_code_key_and_the_window_it_gives(repo: Path, home: Path, scripted: ScriptedOpenAI):
    """The CLI's key names in ~/.qwen/settings.json: doctor names the file for the key and for the alias it sets."""
    user_file = home / ".qwen" / "settings.json"
    user_file.write_text(json.dumps({"memory": {"enableAutoSkill": True}, "model": {"generationConfig": {"contextWindowSize": 300000}}}))
    out = run(["doctor"], repo, home, scripted.base_url, OPENAI_MODEL="qwen3-coder-plus")
    assert f"memory.enableAutoSkill = True  (user: {user_file})" in out.stdout
    assert f"skills.review.enabled = True  (user: {user_file})" in out.stdout
    assert f"context window: 300000 (user: {user_file}); compresses at 255000, warns at 235000, hard limit 277000" in out.stdout
    user_file.write_text("{}")
    out = run(["doctor"], repo, home, scripted.base_url, OPENAI_MODEL="qwen3-coder-plus")
    assert "context window: 1000000 (Qwen Code 0.24.4's table for qwen3-coder-plus); compresses at 850000" in out.stdout


# ------------------------------------------------------------------ what a new user meets


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def session_of(stderr: str) -> str:
    line = next(line for line in stderr.splitlines() if line.startswith("[session "))
    return line.removeprefix("[session ").split("]", 1)[0]


def test_twenty_failed_chats_leave_the_session_list_as_it_was(repo: Path, home: Path, scripted: ScriptedOpenAI):
    scripted.enqueue(Reply(chunks=["ok"]))
    assert run(["chat", "a real question"], repo, home, scripted.base_url).returncode == 0
    before = run(["sessions", "list"], repo, home, None).stdout
    # Twenty tries in one process (the CLI's own entry point), against a port nobody listens on.
    script = "import sys; from qwen_lsp.cli import main; sys.exit(max(main(['chat', 'hi']) for _ in range(20)))"
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    e.update(HOME=str(home), OPENAI_BASE_URL=dead_url(), OPENAI_API_KEY="x", OPENAI_MODEL="m")
    failed = subprocess.run([sys.executable, "-c", script], cwd=repo, env=e, capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1 and failed.stderr.count("Nothing is listening") == 20
    assert run(["sessions", "list"], repo, home, None).stdout == before
    chats = home / ".qwen" / "projects" / sanitize_cwd(repo.resolve()) / "chats"
    assert len(list(chats.glob("*.jsonl"))) == 21  # every prompt is still on disk


def test_a_failed_chat_names_its_session_and_a_retry_continues_it(repo: Path, home: Path, scripted: ScriptedOpenAI):
    scripted.enqueue(HttpError(500, "overloaded"), HttpError(500, "overloaded"), HttpError(500, "overloaded"), HttpError(500, "overloaded"))
    failed = run(["chat", "first try"], repo, home, scripted.base_url)
    assert failed.returncode == 1 and "HTTP 500" in failed.stderr
    sid = session_of(failed.stderr)
    assert f"qwen-lsp chat --session {sid}" in failed.stderr
    assert run(["sessions", "list"], repo, home, None).stdout.startswith("No sessions yet")
    scripted.enqueue(Reply(chunks=["answered"]))
    retried = run(["chat", "--session", sid, "second try"], repo, home, scripted.base_url)
    assert retried.returncode == 0, retried.stderr
    sent = scripted.chat_requests()[-1].body["messages"]
    assert "first try" in json.dumps(sent) and "second try" in json.dumps(sent)
    assert sid in run(["sessions", "list"], repo, home, None).stdout


def test_a_chat_refused_for_configuration_records_nothing_and_names_no_session(repo: Path, home: Path):
    out = run(["chat", "hi"], repo, home, None)
    assert out.returncode == 1 and "[session" not in out.stderr and "qwen-lsp doctor" in out.stderr


def test_sessions_delete_and_an_empty_list_says_so(repo: Path, home: Path, scripted: ScriptedOpenAI):
    assert run(["sessions", "list"], repo, home, None).stdout.startswith("No sessions yet")
    chat = run(["chat", "hi"], repo, home, scripted.base_url)
    sid = session_of(chat.stderr)
    deleted = run(["sessions", "delete", sid], repo, home, None)
    assert deleted.returncode == 0 and sid in deleted.stdout
    assert run(["sessions", "list"], repo, home, None).stdout.startswith("No sessions yet")
    again = run(["sessions", "delete", sid], repo, home, None)
    assert again.returncode == 1 and "qwen-lsp sessions list" in again.stderr
    missing = run(["sessions", "show", "no-such-session"], repo, home, None)
    assert missing.returncode == 1 and "qwen-lsp sessions list" in missing.stderr
    assert "qwen/sessions" not in missing.stderr and "sessionId" not in missing.stderr  # CLI words, not LSP ones
    bad = run(["sessions", "show", "../x"], repo, home, None)
    assert bad.returncode == 1 and "is not a session id" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("base", ["localhost:8000/v1", "not a url", "file:///tmp/models"])
def test_a_base_url_that_is_not_http_is_a_configuration_error(repo: Path, home: Path, base: str):
    out = run(["chat", "hi"], repo, home, None, OPENAI_BASE_URL=base, OPENAI_MODEL="m")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "model.baseUrl / OPENAI_BASE_URL" in out.stderr and "retrying" not in out.stderr
    assert "stream ended unexpectedly" not in out.stderr and "[session" not in out.stderr


def test_an_unresolvable_host_says_it_could_not_be_resolved(repo: Path, home: Path):
    out = run(["chat", "hi"], repo, home, None, OPENAI_BASE_URL="http://no-such-host.invalid/v1", OPENAI_MODEL="m")
    assert out.returncode == 1 and "could not be resolved" in out.stderr and "Nothing is listening" not in out.stderr


def test_only_an_api_key_names_everything_missing_and_the_default_url(repo: Path, home: Path):
    out = run(["chat", "hi"], repo, home, None, OPENAI_API_KEY="sk-x")
    assert out.returncode == 1
    assert "OPENAI_MODEL" in out.stderr and "https://api.openai.com/v1" in out.stderr and "OPENAI_BASE_URL" in out.stderr
    doctor = run(["doctor"], repo, home, None, OPENAI_API_KEY="sk-x", OPENAI_MODEL="m")
    assert "model.baseUrl = 'https://api.openai.com/v1'  (default, because only an API key is set)" in doctor.stdout
    assert "sk-x" not in doctor.stdout


def test_doctor_lists_every_key_of_the_readme_settings_table(repo: Path, home: Path):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = readme.split("## Editor settings", 1)[1].split("\n## ", 1)[0]
    keys: set[str] = set()
    for row in table.splitlines():
        if row.startswith("| `"):
            cell = row.split("|")[1]
            names = [n.strip() for n in cell.replace("`", "").replace("/", ",").split(",") if n.strip()]
            prefix = ""
            for name in names:  # `model.timeouts.connect` / `firstByte` / `stall`
                if "." in name:
                    prefix = name.rsplit(".", 1)[0] + "."
                    keys.add(name)
                else:
                    keys.add(name if name in ("folderTrust",) else prefix + name)
    assert {"model.timeouts.firstByte", "context.ruleExcludes", "general.outputLanguage", "folderTrust"} <= keys
    out = run(["doctor"], repo, home, None, OPENAI_MODEL="m")
    listed = {line.split(" = ", 1)[0].strip() for line in out.stdout.splitlines() if " = " in line}
    assert keys <= listed, keys - listed
    assert "model.name = 'm'  (environment: OPENAI_MODEL)" in out.stdout and "model.timeouts.firstByte = 120.0  (default)" in out.stdout


def test_an_invalid_editor_style_value_is_reported_and_the_layer_below_used(repo: Path, home: Path):
    (home / ".qwen").mkdir(exist_ok=True)
    (home / ".qwen" / "settings.json").write_text('{"model": {"name": "good"}}')
    (repo / ".qwen").mkdir()
    (repo / ".qwen" / "settings.json").write_text('{"model": {"name": ["x"]}}')
    out = run(["doctor"], repo, home, None)
    assert "model.name = 'good'" in out.stdout
    assert "model.name" in out.stderr + out.stdout and "layer below" in out.stderr + out.stdout


def test_help_says_bare_qwen_lsp_runs_the_stdio_server(repo: Path, home: Path):
    out = run(["--help"], repo, home, None)
    assert "Without a command" in out.stdout and "stdin/stdout" in out.stdout
    assert "print the report as JSON" in run(["context", "--help"], repo, home, None).stdout


def _on_a_terminal(args: list[str], cwd: Path, home: Path, feed: bytes | None) -> tuple[int | None, str]:
    """Run with stdin on a pseudo-terminal; returns (exit code or None when still waiting, stderr)."""
    import pty

    master, slave = pty.openpty()
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    e["HOME"] = str(home)
    proc = subprocess.Popen([sys.executable, "-m", "qwen_lsp", *args], cwd=cwd, env=e, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        first = proc.stderr.readline().decode()
        if feed is not None:
            os.write(master, feed)
            proc.wait(timeout=60)
            return proc.returncode, first + proc.stderr.read().decode()
        return proc.poll(), first
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def test_waiting_on_a_terminal_says_what_it_waits_for(repo: Path, home: Path):
    code, err = _on_a_terminal([], repo, home, None)
    assert code is None and "waiting for an editor" in err  # bare qwen-lsp: the stdio server, with a hint
    code, err = _on_a_terminal(["chat"], repo, home, b"\x04")
    assert err.startswith("qwen-lsp: type the prompt, then Ctrl-D") and code == 2


def test_serve_tcp_says_where_it_listens(repo: Path, home: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    e["HOME"] = str(home)
    proc = subprocess.Popen([sys.executable, "-m", "qwen_lsp", "serve", "--tcp", f"127.0.0.1:{port}"], cwd=repo, env=e, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert f"listening on 127.0.0.1:{port}" in proc.stderr.readline().decode()
    finally:
        proc.kill()
        proc.wait()


def test_skill_errors_are_printed_once(repo: Path, home: Path):
    bad = repo / ".qwen" / "skills" / "bad"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("no frontmatter here\n")
    out = run(["skills", "list"], repo, home, None)
    assert (out.stdout + out.stderr).count("missing YAML frontmatter") == 1


def test_context_shows_file_problems(repo: Path, home: Path):
    (repo / "QWEN.md").write_bytes(b"Rules \xff here.\n@./pkg\n")  # an import of a folder fails
    out = run(["context"], repo, home, None)
    assert out.returncode == 0, out.stderr
    assert "not built yet" not in out.stdout
    problems = [line for line in out.stdout.splitlines() if line.startswith("problem:")]
    assert any("UTF-8" in p for p in problems) and any("import './pkg' failed" in p for p in problems), out.stdout
    assert "UTF-8" not in out.stderr  # shown once, in the report


@pytest.mark.parametrize(
    ("line", "code", "asks_model", "said"),
    [
        ("/context", 0, False, "Context: "),
        ("/compress", 0, False, "Nothing to compress"),
        ("/model", 0, False, "Current model: m"),
        ("/help", 1, False, 'The command "/help" is not supported in this mode.'),
        ("/memory", 1, False, 'The command "/memory" is not supported in this mode.'),
        ("/plan exit", 1, False, 'The command "/plan" is not supported in this mode.'),
        ("/init", 1, False, "A QWEN.md file already exists in this directory."),  # it asks first; nobody can answer
        ("/no-such-command please", 0, True, "MODEL SAID"),
        ("/usr/lib is missing", 0, True, "MODEL SAID"),
    ],
)
def test_a_slash_command_as_the_prompt_runs_as_qwen_p_runs_it(
    repo: Path, home: Path, scripted: ScriptedOpenAI, line: str, code: int, asks_model: bool, said: str
) -> None:
    """Qwen Code 0.24.4's ``qwen -p "/…"`` (checked side by side): /init, /clear, /compress, /context, /export and
    /model run; the others are "not supported in this mode" (exit 1); an unknown one, or a path, goes to the model."""
    scripted.default = Reply(chunks=["MODEL SAID"])
    out = run(["chat", line], repo, home, scripted.base_url)
    assert out.returncode == code, out.stderr
    assert said in (out.stdout if code == 0 else out.stderr)
    assert bool(scripted.chat_requests()) == asks_model
    assert (repo / "QWEN.md").read_text() == "Repository rules.\n"  # /init's question went unanswered: nothing written
    if asks_model:
        assert line in json.dumps(scripted.chat_requests()[-1].body["messages"][-1], ensure_ascii=False)
