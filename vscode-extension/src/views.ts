/** Native tree views: the Context view (qwen/context) and the Skills view (qwen/skills/list). */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { requests } from './rpc.generated';
import type { ServerManager } from './server';
import { describeError } from './errors';

function fileUri(source: string | undefined): vscode.Uri | undefined {
  if (!source) return undefined;
  if (/^file:/.test(source)) return vscode.Uri.parse(source);
  return path.isAbsolute(source) ? vscode.Uri.file(source) : undefined;
}

function item(label: string, o: { description?: string; tooltip?: string; icon?: string; open?: vscode.Uri } = {}): vscode.TreeItem {
  const t = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
  t.description = o.description;
  t.tooltip = o.tooltip;
  if (o.icon) t.iconPath = new vscode.ThemeIcon(o.icon);
  if (o.open) {
    t.resourceUri = o.open;
    t.command = { command: 'vscode.open', title: 'Open', arguments: [o.open] };
  }
  return t;
}

abstract class ListView implements vscode.TreeDataProvider<vscode.TreeItem> {
  protected items: vscode.TreeItem[] = [];
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(protected readonly server: ServerManager) {}

  getTreeItem(t: vscode.TreeItem): vscode.TreeItem {
    return t;
  }

  getChildren(): vscode.TreeItem[] {
    return this.items;
  }

  protected abstract load(): Promise<vscode.TreeItem[]>;

  async refresh(): Promise<void> {
    try {
      this.items = await this.load();
    } catch (err) {
      this.items = [item(describeError(err).message, { icon: 'error' })];
    }
    this.emitter.fire();
  }
}

export class ContextView extends ListView {
  sessionId: () => string | undefined = () => undefined;

  protected async load(): Promise<vscode.TreeItem[]> {
    const client = await this.server.ready();
    if (!client) return [item('The qwen-lsp server is not running', { icon: 'error' })];
    const sid = this.sessionId();
    const r = await client.sendRequest(requests.context, sid ? { sessionId: sid } : {});
    const pct = r.window ? Math.round((100 * r.totalTokens) / r.window) : 0;
    const head = item(`${r.totalTokens.toLocaleString('en-US')} of ${r.window.toLocaleString('en-US')} tokens`, {
      description: `${pct}% used · warn ${Math.round(r.thresholds.warn * 100)}% · hard ${Math.round(r.thresholds.hard * 100)}%`,
      icon: 'dashboard',
    });
    return [
      head,
      ...r.sections.map((s) =>
        item(s.name, { description: `${s.tokens.toLocaleString('en-US')} tokens${s.source ? ` · ${s.source}` : ''}`, tooltip: s.source, icon: 'symbol-file', open: fileUri(s.source) }),
      ),
    ];
  }
}

export class SkillsView extends ListView {
  protected async load(): Promise<vscode.TreeItem[]> {
    const client = await this.server.ready();
    if (!client) return [item('The qwen-lsp server is not running', { icon: 'error' })];
    const r = await client.sendRequest(requests.skillsList, {});
    const skills = r.skills.map((s) =>
      item(s.name, {
        description: `${s.level}${s.conditional ? ' · conditional' : ''}${s.active ? ' · active' : ''}`,
        tooltip: `${s.description}\n${s.path}`,
        icon: s.active ? 'pass-filled' : 'circle-large-outline',
        open: fileUri(s.path),
      }),
    );
    const errors = r.errors.map((e) => item(e.message, { description: e.path, tooltip: `${e.path}: ${e.message}`, icon: 'error', open: fileUri(e.path) }));
    return [...errors, ...skills];
  }
}
