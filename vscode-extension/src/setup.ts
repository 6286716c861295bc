/**
 * Set-up from the panel: what the welcome shows (server, model, key) and the commands that fix
 * each step without the Settings editor. They write user settings through the configuration API
 * (ConfigurationTarget.Global): in a remote window (code-server, Remote-SSH, WSL, Codespaces) VS Code
 * puts a machine-scoped key such as qwen.server.path or qwen.model.baseUrl in the remote's own
 * settings, the file that window reads, where the Settings editor shows it only on its Remote tab.
 */
import * as vscode from 'vscode';
import { existsSync, statSync } from 'node:fs';
import type { ServerManager } from './server';
import { API_KEY_SECRET } from './server';
import type { SetupState } from './shared/messages';

function userValue(key: string): string | undefined {
  const v = vscode.workspace.getConfiguration('qwen').inspect<string>(key)?.globalValue;
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

/** The welcome's steps as they stand now. */
export async function setupState(server: ServerManager, secrets: vscode.SecretStorage): Promise<SetupState> {
  const cfg = vscode.workspace.getConfiguration('qwen');
  const model = cfg.get<string>('model.name')?.trim() || undefined;
  const baseUrl = userValue('model.baseUrl');
  return {
    server: server.state,
    ...(server.failure ? { serverProblem: { message: server.failure.message, missing: server.failure.missing } } : {}),
    ...(model ? { model } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    apiKey: !!(await secrets.get(API_KEY_SECRET)),
  };
}

/** An http(s) URL, or why not (the input box shows it under the field). */
export function baseUrlProblem(value: string): string | undefined {
  const v = value.trim();
  if (!v) return 'The endpoint\'s base URL, e.g. https://dashscope.aliyuncs.com/compatible-mode/v1';
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:' ? undefined : 'An http:// or https:// URL';
  } catch {
    return 'Not a URL: it starts with http:// or https://';
  }
}

/**
 * "Set up model": the base URL, then the model name, each prefilled with what is set; Escape
 * leaves the rest unchanged. Returns true when something was written.
 */
export async function configureModel(): Promise<boolean> {
  const cfg = vscode.workspace.getConfiguration('qwen');
  const baseUrl = await vscode.window.showInputBox({
    title: 'Qwen: set up model (1/2) — base URL',
    prompt: 'The OpenAI-compatible endpoint, usually ending in /v1 (qwen.model.baseUrl). The API key is set with "Set API key".',
    value: userValue('model.baseUrl') ?? '',
    ignoreFocusOut: true,
    validateInput: baseUrlProblem,
  });
  if (baseUrl === undefined) return false;
  await cfg.update('model.baseUrl', baseUrl.trim(), vscode.ConfigurationTarget.Global);
  const name = await vscode.window.showInputBox({
    title: 'Qwen: set up model (2/2) — model name',
    prompt: 'The model id the endpoint expects, e.g. qwen3-coder-plus (qwen.model.name).',
    value: cfg.get<string>('model.name') ?? '',
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'The model id, e.g. qwen3-coder-plus'),
  });
  if (name !== undefined) await cfg.update('model.name', name.trim(), vscode.ConfigurationTarget.Global);
  return true;
}

/** "Set server path": a qwen-lsp executable or a Python with qwen_lsp; empty clears it (the bundled server). */
export async function setServerPath(): Promise<void> {
  const value = await vscode.window.showInputBox({
    title: 'Qwen: server path',
    prompt: 'Path to a qwen-lsp executable, or to a Python interpreter that has qwen_lsp installed (qwen.server.path). Empty: the server bundled with the extension.',
    value: userValue('server.path') ?? '',
    ignoreFocusOut: true,
    validateInput: (v) => {
      const p = v.trim();
      if (!p) return undefined;
      try {
        return statSync(p).isFile() ? undefined : `${p} is not a file`;
      } catch {
        return existsSync(p) ? undefined : `No file at ${p}`;
      }
    },
  });
  if (value === undefined) return;
  const next = value.trim() || undefined;
  // The configuration listener restarts the server when qwen.server.path changes; the same path again is a retry.
  if (next === userValue('server.path')) await vscode.commands.executeCommand('qwen.restartServer');
  else await vscode.workspace.getConfiguration('qwen').update('server.path', next, vscode.ConfigurationTarget.Global);
}
