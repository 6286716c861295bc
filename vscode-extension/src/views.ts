/** Native tree views: the Context view (qwen/context) and the Skills view (qwen/skills/list). */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { requests } from './rpc.generated';
import type { ServerManager } from './server';
import { describeError } from './errors';
import type { ContextFigures } from './contextFigure';
import { figureWords } from './meter';

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

/**
 * What fills the context: the shared figure (the status bar's and the panel's) on top, where
 * each level starts in tokens, then the next request's parts from the last qwen/context report.
 */
export class ContextView extends ListView {
  constructor(
    server: ServerManager,
    private readonly figures: ContextFigures,
  ) {
    super(server);
  }

  protected async load(): Promise<vscode.TreeItem[]> {
    const f = this.figures;
    if (!f.report) return [item(f.error ? describeError(f.error).message : 'Loading…', { icon: f.error ? 'error' : 'loading~spin' })];
    const head = [];
    if (f.figure) {
      const w = figureWords(f.figure);
      head.push(item(w.tokens, { description: `${w.left} · ${w.compresses}`, tooltip: w.limits, icon: 'dashboard' }));
    }
    return [
      ...head,
      ...f.report.sections.map((s) =>
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
