"""Check recorded shell verdicts end to end against the real ``qwen`` CLI (0.24.4).

For each case the real CLI runs headless (``qwen -p … --auth-type openai``,
``--approval-mode default`` unless the case says otherwise) in a fresh scratch
git repository, with HOME at a scratch directory and OPENAI_BASE_URL at the
project's scripted server (tests/support/scripted_openai.py).  The scripted
model's first answer calls ``run_shell_command`` with the case's command; the
next answer ends the turn.  Whether the command ran is observed, not inferred:
a marker file the command would create, and the tool result the CLI sends back
to the model in its next request.

The results go into the ``end_to_end_checked`` list of the header of
tests/data/shell_verdicts_qwen_0.24.4.json (written by
scripts/record_shell_verdicts.mjs, which keeps the list when it re-records).

``--auto-classifier OUT`` instead runs one ``--approval-mode auto`` case whose
command is not read-only and saves the CLI's classifier side request (its JSON
body, HOME and scratch paths replaced by placeholders) to OUT.

Needs the CLI installed; QWEN_CLI_DIR names its npm prefix (default /opt/qwen-cli).
Run: ``.venv/bin/python scripts/e2e_shell_verdicts.py [--only N ...]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.quiet_home import NO_BACKGROUND, write_quiet_settings  # noqa: E402
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec  # noqa: E402

CLI_DIR = Path(os.environ.get("QWEN_CLI_DIR", "/opt/qwen-cli"))
QWEN = CLI_DIR / "node_modules" / ".bin" / "qwen"
DATA = ROOT / "tests" / "data" / "shell_verdicts_qwen_0.24.4.json"
CALL_ID = "call_e2e_shell"
MARKER = "X"


@dataclass
class Case:
    command: str
    marker: str | None = MARKER  # a file the command creates when (all of) it runs
    expect_output: str | None = None  # text the command prints when it runs
    git_config: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    mode: str = "default"
    preface: list[str] = field(default_factory=list)  # commands the model runs first (each with a line of text)
    control: bool = False  # a control: the marker must stay absent (the CLI's own git calls do not create it)


CASES = [
    Case("git status", marker=None, expect_output="On branch main"),
    Case("ls -la", marker=None, expect_output="README.md"),
    Case("grep -rn TODO src", marker=None, expect_output="src/main.py:1:"),
    Case("touch X"),
    Case("cat README.md#;touch X"),
    Case("ls#||touch X"),
    Case("cat README.md | tee out.txt", marker="out.txt", expect_output="TODO"),
    Case("bash -c 'ls' ; touch X", expect_output="README.md"),
    Case("sh -c ls > out.txt", marker="out.txt"),
    Case("cat <<EOF && touch X\nhi\nEOF", expect_output="hi"),
    Case("cat <<EOF | sh\ntouch X\nEOF"),
    Case("cat <<EOF > out.txt\nhi\nEOF", marker="out.txt"),
    Case("git grep -iOsh TODO", files={"0run.txt": "touch X # TODO\n"}),
    Case("git diff", git_config={"core.fsmonitor": "touch X #"}),
    Case("git diff", git_config={"diff.tc.textconv": "sh -c 'touch X; cat \"$0\"'"}, files={".gitattributes": "*.md diff=tc\n"}),
    Case("GIT_EXTERNAL_DIFF='touch X' bash -c 'git diff'"),
    Case("git status", git_config={"core.fsmonitor": "touch X #"}),
    Case("git diff", git_config={"diff.external": "touch X"}),
    Case("pwd", git_config={"core.fsmonitor": "touch X #"}, control=True),
    Case("pwd", git_config={"diff.tc.textconv": "sh -c 'touch X; cat \"$0\"'"}, files={".gitattributes": "*.md diff=tc\n"}, control=True),
]

METHOD = (
    "scripts/e2e_shell_verdicts.py ran the real qwen CLI per case, headless, with --approval-mode default (stream-json in and out: "
    "`qwen --input-format stream-json --output-format stream-json --auth-type openai --approval-mode default`), HOME at a scratch "
    "directory (memory.enableManagedAutoMemory false), OPENAI_BASE_URL at tests/support/scripted_openai.py, OPENAI_API_KEY=dummy, "
    "OPENAI_MODEL=qwen3-coder-plus, cwd a fresh scratch git repository. The scripted model calls run_shell_command with the command. "
    "asked = the CLI sent a can_use_tool control_request (answered with deny); ran = the marker file the command creates exists, or "
    "its expected output reached the model in the tool result. Plain `qwen -p` text mode was not usable for this: in a headless "
    "non-stream-json session with default (or auto) approval the CLI adds run_shell_command to the deny list unless it is explicitly "
    "allowed (loadCliConfig, denyUnlessAllowed), so the model is not even offered the shell tool."
)

BASE_FILES = {
    "README.md": "# demo\nTODO: nothing\n",
    "src/main.py": "print('TODO')\n",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, env=git_env())


def git_env() -> dict[str, str]:
    return {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def make_repo(path: Path, case: Case) -> None:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for rel, body in {**BASE_FILES, **case.files}.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(body)
    git(path, "add", "-A")
    git(path, "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "-m", "init")
    for key, value in case.git_config.items():
        git(path, "config", key, value)
    (path / "README.md").write_text("# demo\nTODO: changed\n")  # a change for git diff to show


def tool_result(requests: list[Any]) -> str | None:
    for request in reversed(requests):
        for message in request.body.get("messages", []):
            if message.get("role") == "tool" and message.get("tool_call_id") == CALL_ID:
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content)
    return None


def is_main_request(body: dict[str, Any]) -> bool:
    """The conversation's own request (the CLI's main system prompt); side queries (classifier, memory) have others."""
    messages = body.get("messages") or [{}]
    first = messages[0].get("content")
    text = first if isinstance(first, str) else json.dumps(first)
    return messages[0].get("role") == "system" and text.startswith("You are Qwen Code")


def settings_home(home: Path) -> None:
    """Quiet settings plus the CLI's own switch for the managed memory extraction agent (memory.enableManagedAutoMemory)."""
    write_quiet_settings(home, {"memory": {**NO_BACKGROUND["memory"], "enableManagedAutoMemory": False}})


class Session:
    """The CLI in headless stream-json mode: our stdin lines in, its JSON lines out."""

    def __init__(self, cwd: Path, env: dict[str, str], mode: str) -> None:
        argv = [str(QWEN), "--input-format", "stream-json", "--output-format", "stream-json", "--auth-type", "openai", "--approval-mode", mode]
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.stderr: list[str] = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()  # type: ignore[arg-type]

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def close(self) -> int:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def converse(session: Session, prompt: str, deadline: float = 180.0) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Initialize, send ``prompt``, deny every permission request; the permission requests and the result message."""
    session.send({"type": "control_request", "request_id": "init-1", "request": {"subtype": "initialize"}})
    session.send({"type": "user", "session_id": "e2e", "message": {"role": "user", "content": prompt}, "parent_tool_use_id": None})
    asked: list[dict[str, Any]] = []
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            line = session.lines.get(timeout=max(0.1, end - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("type") == "control_request":
            request = message.get("request", {})
            if request.get("subtype") == "can_use_tool":
                asked.append(request)
                response: dict[str, Any] = {"behavior": "deny", "message": "denied by scripts/e2e_shell_verdicts.py"}
            else:
                response = {}
            session.send({"type": "control_response", "response": {"subtype": "success", "request_id": message.get("request_id"), "response": response}})
        elif message.get("type") == "result":
            return asked, message
    return asked, None


def side_answer(body: dict[str, Any]) -> Reply:
    """A side query (the auto-mode classifier) gets a block verdict through the tool it offers, filled from that tool's schema."""
    tools = body.get("tools") or []
    if not tools:
        return Reply(chunks=['{"shouldBlock": true, "reason": "scripted block"}'])
    function = tools[0]["function"]
    fill = {"boolean": True, "string": "scripted: adds a package the user did not name"}
    properties = function.get("parameters", {}).get("properties", {})
    arguments = {name: fill.get(spec.get("type"), None) for name, spec in properties.items()}
    return Reply(chunks=[], tool_calls=[ToolCallSpec(function["name"], arguments, id="call_side")])


def run_case(case: Case, scratch: Path) -> tuple[dict[str, Any], list[Any]]:
    home = scratch / "home"
    home.mkdir()
    settings_home(home)
    repo = scratch / "repo"
    make_repo(repo, case)
    called: list[int] = []  # main requests answered so far

    def answer(body: dict[str, Any]) -> Reply:
        if not is_main_request(body):
            return side_answer(body)
        step = len(called)
        called.append(1)
        if step < len(case.preface):
            call = ToolCallSpec("run_shell_command", {"command": case.preface[step], "description": "look around"}, id=f"call_pre_{step}")
            return Reply(chunks=["Let me look at the project first."], tool_calls=[call])
        if step == len(case.preface):
            return Reply(chunks=[], tool_calls=[ToolCallSpec("run_shell_command", {"command": case.command, "description": "check"}, id=CALL_ID)])
        return Reply(chunks=["done"])

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    with ScriptedOpenAI(default=answer) as server:
        env.update(HOME=str(home), OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="dummy", OPENAI_MODEL="qwen3-coder-plus",
                   GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
        session = Session(repo, env, case.mode)
        asked, result = converse(session, "Run the check.")
        exit_code = session.close()
        requests = list(server.chat_requests())
    tool_text = tool_result(requests)
    marker = (repo / case.marker).exists() if case.marker else None
    output_seen = case.expect_output in tool_text if (case.expect_output and tool_text) else None
    ran = bool(marker) or bool(output_seen)
    evidence = []
    if case.marker:
        evidence.append(f"marker file {case.marker!r} " + ("created" if marker else "not created"))
    if case.expect_output:
        evidence.append(f"tool result {'contains' if output_seen else 'lacks'} {case.expect_output!r}")
    record: dict[str, Any] = {
        "command": case.command,
        "approval_mode": case.mode,
        "asked": bool(asked),
        "ran": ran,
        "evidence": "; ".join(evidence),
        "tool_result": redact(tool_text or "", scratch)[:300],
    }
    if case.git_config:
        record["git_config"] = case.git_config
    if case.files:
        record["files"] = case.files
    if result is None or tool_text is None:
        record["problem"] = {"result": result, "exit": exit_code, "stderr_tail": "".join(session.stderr)[-800:]}
    return record, requests


def recorded_verdict(data: dict[str, Any], command: str, git_config: dict[str, str]) -> str | None:
    pool = data["git_config_cases"] if git_config else data["entries"]
    for entry in pool:
        if entry["command"] == command and (not git_config or set(entry.get("git_config", {})) == set(git_config)):
            return entry["cli"]
    return None


def redact(text: str, scratch: Path) -> str:
    text = text.replace(str(scratch / "home"), "$HOME").replace(str(scratch / "repo"), "$PROJECT").replace(str(scratch), "$SCRATCH")
    return text.replace(str(Path.home()), "$REAL_HOME")


def capture_classifier(out: Path) -> None:
    case = Case("npm install left-pad", marker=None, mode="auto", preface=["ls"])
    with tempfile.TemporaryDirectory(prefix="qwen-e2e-") as tmp:
        scratch = Path(tmp).resolve()
        record, requests = run_case(case, scratch)
        side = [r for r in requests if not is_main_request(r.body)]
        if not side:
            raise SystemExit(f"no classifier request seen: {json.dumps(record)}")
        bodies = [json.loads(redact(json.dumps(r.body), scratch)) for r in side]
        headers = [{k: v for k, v in r.headers.items() if k not in ("authorization", "host", "content-length")} for r in side]
    payload = {
        "header": {
            "recorded_by": "running the real qwen CLI 0.24.4 headless (scripts/e2e_shell_verdicts.py --auto-classifier) with --approval-mode auto against tests/support/scripted_openai.py",
            "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "scenario": "stream-json session, --approval-mode auto; the user prompt 'Run the check.'; the scripted model first says 'Let me look at the project first.' and calls run_shell_command {\"command\": \"ls\"} (read-only: runs without a classifier), then calls run_shell_command {\"command\": \"npm install left-pad\"}; each classifier request is answered by calling the tool it offers with shouldBlock true (so stage 2 follows stage 1), and the CLI's resulting permission request is denied",
            "redaction": "the scratch HOME is $HOME, the project directory $PROJECT",
            "outcome": record,
            "request_headers": headers,
        },
        "requests": bodies,
    }
    out.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"{len(bodies)} classifier request(s) -> {out}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", type=int, nargs="*", help="indices into CASES")
    parser.add_argument("--auto-classifier", type=Path, help="capture the auto-mode classifier request into this file instead")
    parser.add_argument("--dry", action="store_true", help="print the results, do not update the data file")
    args = parser.parse_args(argv)
    if args.auto_classifier:
        capture_classifier(args.auto_classifier)
        return
    data = json.loads(DATA.read_text())
    checked = []
    for index, case in enumerate(CASES):
        if args.only is not None and index not in args.only:
            continue
        with tempfile.TemporaryDirectory(prefix="qwen-e2e-") as tmp:
            record, _ = run_case(case, Path(tmp).resolve())
        if case.control:
            record["control"] = "the command does not touch git: the marker must stay absent, showing the CLI's own git calls did not create it"
            record["consistent"] = not record["asked"] and not record["ran"]
        else:
            verdict = recorded_verdict(data, case.command, case.git_config)
            record["recorded_cli_verdict"] = verdict
            record["consistent"] = verdict is not None and (verdict == "allow") == (not record["asked"]) == record["ran"]
        record["checked_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        checked.append(record)
        print(json.dumps(record), flush=True)
    if not args.dry:
        data["header"]["end_to_end_method"] = METHOD
        data["header"]["end_to_end_checked"] = checked
        DATA.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
