/**
 * What the panel's buttons and links open outside the webview: an inline error's fix (Set API key,
 * Set up model…) and a link in an answer, opened only when it is a web address or a file inside
 * the workspace.
 */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { realpath } from 'node:fs/promises';
import { linkTarget, resolveInside } from '../links';
import type { ContainmentFs } from '../links';
import type { ErrorAction } from '../shared/messages';

/** The extension host's own file system, for the links' containment check (links.ts). */
const LOCAL_FS: ContainmentFs = { realpath: (p) => realpath(p), path, caseInsensitive: process.platform === 'win32' || process.platform === 'darwin' };

/** The command each error action runs; Retry and Show log are the chat's own. */
const ACTION_COMMANDS: Record<Exclude<ErrorAction, 'retry' | 'showLog'>, readonly [string, ...unknown[]]> = {
  setApiKey: ['qwen.setApiKey'],
  openSettings: ['workbench.action.openSettings', 'qwen.model'],
  restartServer: ['qwen.restartServer'],
  configureModel: ['qwen.configureModel'],
  setServerPath: ['qwen.setServerPath'],
  manageTrust: ['workbench.trust.manage'],
};

export async function runErrorAction(action: ErrorAction, own: { retry: () => Promise<void>; showLog: () => void }): Promise<void> {
  if (action === 'retry') return own.retry();
  if (action === 'showLog') return own.showLog();
  // In a remote window (code-server, Remote-SSH, WSL) the machine-scoped qwen.model.baseUrl lives in
  // the remote's settings: the User tab would not show the value the window reads.
  const [command, ...args] = action === 'openSettings' && vscode.env.remoteName ? ['workbench.action.openRemoteSettings', { query: 'qwen.model' }] : ACTION_COMMANDS[action];
  await vscode.commands.executeCommand(command, ...args);
}

/** `log`: where a refused link is written (never opened). */
export async function openLink(href: string, log: (line: string) => void): Promise<void> {
  let uri: vscode.Uri;
  try {
    uri = vscode.Uri.parse(href, true);
  } catch {
    return;
  }
  const target = linkTarget(uri.scheme);
  if (target === 'external') return void (await vscode.env.openExternal(uri));
  if (target !== 'file') return;
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const real = await resolveInside(uri, folders, LOCAL_FS);
  if (real) await vscode.window.showTextDocument(vscode.Uri.file(real), { preview: true });
  else log(`[qwen] not opened: ${href.slice(0, 300)} is not a file inside the workspace`);
}

/**
 * A context chip's files (a skill's SKILL.md, recalled memories, the editor's file): paths the server
 * named itself, not the model, so a file outside the workspace (~/.qwen/…) opens too.
 */
export async function openSources(paths: string[]): Promise<void> {
  for (const p of paths) if (path.isAbsolute(p)) await vscode.window.showTextDocument(vscode.Uri.file(p), { preview: paths.length === 1 });
}

/** `qwen.chat.showContextChanges`: whether answers show what their context gained (on unless turned off). */
export function showContextChanges(): boolean {
  return vscode.workspace.getConfiguration('qwen').get<boolean>('chat.showContextChanges', true) !== false;
}
