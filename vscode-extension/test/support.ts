// Test helpers: the real Python server and the scripted OpenAI server as subprocesses.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import type { MessageConnection } from 'vscode-jsonrpc/node';

/** The extension folder and the repository root (tests run from out/<dir>/). */
export const EXT_ROOT = path.resolve(__dirname, '..', '..');
export const REPO_ROOT = path.resolve(EXT_ROOT, '..');

/** The Python with qwen_lsp installed: $QWEN_LSP_PYTHON, else the repo's .venv, else python3. */
export function python(): string {
  if (process.env.QWEN_LSP_PYTHON) return process.env.QWEN_LSP_PYTHON;
  const venv = path.join(REPO_ROOT, '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export interface Scripted {
  baseUrl: string;
  proc: ChildProcess;
  stop(): void;
}

/** tests/support/scripted_openai.py as a script: every request answers `reply`, word by word. */
export async function startScripted(reply: string, chunkDelay = 0): Promise<Scripted> {
  const proc = spawn(python(), [path.join(REPO_ROOT, 'tests', 'support', 'scripted_openai.py'), '--reply', reply, '--chunk-delay', String(chunkDelay)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout! });
    rl.once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`scripted_openai exited ${code}`)));
  });
  return { baseUrl: line.trim(), proc, stop: () => proc.kill() };
}

/**
 * A scripted model that edits (tests/support/scripted_openai.py, driven inline): offered `edit`,
 * it calls it on `target` with the first of `edits` whose `when` is in the last user message (no
 * `when` matches any), call ids e0, e1, … in that order; after a tool result it answers "Done.";
 * not offered `edit` it answers in text. With `log`, every request body is appended there.
 */
export async function startEditingModel(target: string, edits: { old: string; new: string; when?: string }[], log?: string): Promise<Scripted> {
  const proc = spawn(python(), ['-c', EDITING_MODEL, target, JSON.stringify(edits), log ?? '', REPO_ROOT], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`scripted editing model exited ${code}`)));
  });
  return { baseUrl: line.trim(), proc, stop: () => proc.kill() };
}

const EDITING_MODEL = `
import json, sys, threading
sys.path.insert(0, sys.argv[4])
from tests.support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec
target, edits, log = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] or None
def text_of(message):
    content = message.get("content")
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [])
def reply(body):
    messages = body.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return Reply(chunks=["Done."])
    if "edit" not in [t["function"]["name"] for t in body.get("tools") or []]:
        return Reply(chunks=["I cannot edit files here."])
    last = text_of([m for m in messages if m.get("role") == "user"][-1])
    i = next(i for i, e in enumerate(edits) if e.get("when", "") in last)
    e = edits[i]
    return Reply(chunks=["Editing."], tool_calls=[ToolCallSpec("edit", {"file_path": target, "old_string": e["old"], "new_string": e["new"]}, id=f"e{i}")])
server = ScriptedOpenAI(0, default=reply, log_path=log)
server.start()
print(server.base_url, flush=True)
threading.Event().wait()
`;

export interface Server {
  conn: MessageConnection;
  proc: ChildProcess;
  /** The server's initialize answer (capabilities, e.g. executeCommandProvider.commands). */
  initializeResult: any;
  notifications: { method: string; params: any }[];
  /** Called for every notification (vscode-jsonrpc allows one handler per method, so tests share this one). */
  listeners: ((method: string, params: any) => void)[];
  stop(): Promise<void>;
}

/** Another way to start the server than the repository's `python -m qwen_lsp` (e.g. a .vsix's bundled one), with exactly `env`. */
export interface Launch {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** The working directory (default: the workspace, as a shell user starting `qwen-lsp` there would). */
  cwd?: string;
}

/**
 * `python -m qwen_lsp serve --stdio` (or `launch`) in `workspace`, initialised like the extension does it;
 * `capabilities` adds client capabilities (e.g. `window.workDoneProgress`, which vscode-languageclient declares).
 */
export async function startServer(
  workspace: string,
  baseUrl: string,
  initializationOptions: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = {},
  launch?: Launch,
): Promise<Server> {
  const home = tempDir('qwen-home-');
  const env = { ...(launch?.env ?? process.env), HOME: home, OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'test-key', OPENAI_MODEL: 'scripted-model' };
  const proc = spawn(launch?.command ?? python(), launch?.args ?? ['-m', 'qwen_lsp', 'serve', '--stdio'], { cwd: launch?.cwd ?? workspace, env, stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stderr!.on('data', () => undefined); // the server logs to stderr; keep the pipe drained
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const notifications: Server['notifications'] = [];
  const listeners: Server['listeners'] = [];
  conn.onNotification((method, params) => {
    notifications.push({ method, params });
    for (const l of listeners) l(method, params);
  });
  conn.onRequest('workspace/configuration', () => [initializationOptions]);
  conn.onRequest(() => null);
  conn.listen();
  const uri = `file://${workspace}`;
  const initializeResult = await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: uri,
    workspaceFolders: [{ uri, name: path.basename(workspace) }],
    capabilities: { workspace: { configuration: true }, ...capabilities },
    initializationOptions,
  });
  await conn.sendNotification('initialized', {});
  return {
    conn,
    proc,
    initializeResult,
    notifications,
    listeners,
    async stop() {
      try {
        await Promise.race([conn.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 5000))]);
        await conn.sendNotification('exit');
      } catch {
        // already gone
      }
      conn.dispose();
      setTimeout(() => proc.kill(), 2000).unref();
    },
  };
}

export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Awaited: an async probe's promise is always truthy, so without it such a wait could never fail.
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
