/**
 * The Memory view (qwen/memory/list grouped by scope) and the two ways to forget: "Forget…" (a
 * query, the server's candidates, a multi-select pick, a modal confirmation naming the files) and
 * "Forget" on one item (a modal confirmation). Nothing is removed without that confirmation.
 */
import * as vscode from 'vscode';
import { homedir } from 'node:os';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { ServerManager } from './server';
import { describeError } from './errors';
import { candidatePicks, forget, forgetCandidates, forgetConfirmation, forgetSummary, isMethodNotFound, loadMemoryTree, NO_MEMORY_SUPPORT } from './memory';
import type { CandidatePick, MemoryGroup, MemoryRow, MemoryTree } from './memory';
import type { Send } from './rpc.generated';

type Node = { kind: 'group'; group: MemoryGroup } | { kind: 'memory'; row: MemoryRow } | { kind: 'message'; text: string; icon: string };

const SCOPE_ICON: Record<string, string> = { user: 'account', project: 'repo', team: 'organization' };

export function sendVia(client: LanguageClient): Send {
  return (type, params) => client.sendRequest(type, params);
}

export class MemoryView implements vscode.TreeDataProvider<Node> {
  private roots: Node[] = [];
  private loaded = false;
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly server: ServerManager) {}

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'group') {
      const t = new vscode.TreeItem(node.group.label, vscode.TreeItemCollapsibleState.Expanded);
      t.id = `scope:${node.group.scope}`;
      t.description = String(node.group.rows.length);
      t.tooltip = `${node.group.label} memories`;
      t.iconPath = new vscode.ThemeIcon(SCOPE_ICON[node.group.scope] ?? 'folder');
      return t;
    }
    if (node.kind === 'memory') {
      const uri = vscode.Uri.file(node.row.path);
      const t = new vscode.TreeItem(node.row.label, vscode.TreeItemCollapsibleState.None);
      t.id = `memory:${node.row.path}`;
      t.description = node.row.description;
      t.tooltip = node.row.tooltip;
      t.resourceUri = uri;
      t.iconPath = new vscode.ThemeIcon('note');
      t.contextValue = 'qwen.memory';
      t.command = { command: 'vscode.open', title: 'Open', arguments: [uri] };
      return t;
    }
    const t = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
    t.tooltip = node.text;
    t.iconPath = new vscode.ThemeIcon(node.icon);
    return t;
  }

  getChildren(node?: Node): Node[] {
    if (!node && !this.loaded) void this.refresh(); // first shown before any refresh: load it now
    if (!node) return this.roots;
    return node.kind === 'group' ? node.group.rows.map((row) => ({ kind: 'memory', row })) : [];
  }

  async refresh(): Promise<void> {
    this.loaded = true;
    // A server that failed to start has said why already; showing the view must not retry and say it again.
    const client = this.server.state === 'failed' ? undefined : await this.server.ready();
    let tree: MemoryTree;
    if (!client) tree = { kind: 'message', text: 'The qwen-lsp server is not running', icon: 'error' };
    else {
      try {
        tree = await loadMemoryTree(sendVia(client));
      } catch (err) {
        tree = { kind: 'message', text: describeError(err).message, icon: 'error' };
      }
    }
    this.roots = tree.kind === 'groups' ? tree.groups.map((group) => ({ kind: 'group', group })) : [{ kind: 'message', text: tree.text, icon: tree.icon }];
    this.emitter.fire();
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

/** Confirms with a modal warning naming the files, then removes them and says what went. */
async function confirmAndForget(send: Send, items: { label: string; path: string }[]): Promise<void> {
  const home = homedir();
  const { message, detail } = forgetConfirmation(items, home);
  const pick = await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Forget');
  if (pick !== 'Forget') return;
  const asked = items.map((i) => i.path);
  const removed = await forget(send, asked);
  const summary = forgetSummary(asked, removed, home);
  if (summary.severity === 'info') void vscode.window.showInformationMessage(summary.text);
  else void vscode.window.showWarningMessage(summary.text);
}

function reportFailure(err: unknown): void {
  if (isMethodNotFound(err)) void vscode.window.showInformationMessage(NO_MEMORY_SUPPORT);
  else void vscode.window.showErrorMessage(describeError(err).message);
}

/** "Forget…": query → candidates → multi-select → confirmation → removal. */
export async function forgetByQuery(server: ServerManager, view: MemoryView): Promise<void> {
  const query = await vscode.window.showInputBox({
    title: 'Qwen: Forget memories',
    prompt: 'What should Qwen forget? Matching memories are listed for you to choose from; nothing is removed before you confirm.',
    placeHolder: 'e.g. database mocking in tests',
  });
  if (!query?.trim()) return;
  const client = await server.ready();
  if (!client) return;
  const send = sendVia(client);
  try {
    const candidates = await forgetCandidates(send, query.trim());
    if (!candidates.length) return void vscode.window.showInformationMessage(`No memory matches “${query.trim()}”.`);
    const picked = await vscode.window.showQuickPick<CandidatePick & vscode.QuickPickItem>(candidatePicks(candidates, homedir()), {
      title: `Memories matching “${query.trim()}”`,
      placeHolder: 'Choose the memories to forget',
      canPickMany: true,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!picked?.length) return;
    await confirmAndForget(send, picked);
  } catch (err) {
    reportFailure(err);
  }
  await view.refresh();
}

/** "Forget" on one item of the view. */
export async function forgetOne(server: ServerManager, view: MemoryView, node: Node | undefined): Promise<void> {
  if (node?.kind !== 'memory') return;
  const client = await server.ready();
  if (!client) return;
  try {
    await confirmAndForget(sendVia(client), [node.row]);
  } catch (err) {
    reportFailure(err);
  }
  await view.refresh();
}
