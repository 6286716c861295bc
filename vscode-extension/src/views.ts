/** Native tree views: the Context view (qwen/context) and the Skills view (qwen/skills/list). */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { requests } from './rpc.generated';
import type { ServerManager } from './server';
import { describeError } from './errors';
import type { ContextFigures } from './contextFigure';
import { figureOfReport, figureWords } from './meter';
import type { ContextResult, ContextSection } from './shared/protocol';

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
 * What fills the next request, from one source: the server's qwen/context count. The headline is
 * its total (and what that leaves of the window); the rows are its parts, history included, so
 * they add up to the headline exactly. The prompt size the endpoint reported for the chat's last
 * request stands beside the total, as what it is: the last request's, not the next one's.
 */
export class ContextView extends ListView {
  constructor(
    server: ServerManager,
    private readonly figures: ContextFigures,
  ) {
    super(server);
  }

  protected async load(): Promise<vscode.TreeItem[]> {
    const r = this.figures.report;
    if (!r) return [item(this.figures.error ? describeError(this.figures.error).message : 'Loading…', { icon: this.figures.error ? 'error' : 'loading~spin' })];
    return [headline(r), ...r.sections.map(sectionItem)];
  }
}

/**
 * "Next request: 6,782 tokens", then "95% left of 131,072 · the endpoint counted 5,990 for the last
 * request": the label stays short enough for a narrow side bar; the tooltip says it all.
 */
function headline(r: ContextResult): vscode.TreeItem {
  const w = figureWords(figureOfReport(r));
  const n = (x: number): string => x.toLocaleString('en-US');
  const last = r.lastReported ? ` · the endpoint counted ${n(r.lastReported)} for the last request` : '';
  const tooltip = `The server's count of the next request (${w.tokens}): the parts below add up to it.${r.lastReported ? `\nThe endpoint's own count of the chat's last request: ${n(r.lastReported)} tokens.` : ''}\n${w.limits}`;
  return item(`Next request: ${n(r.totalTokens)} tokens`, { description: `${w.left} of ${n(r.window)}${last}`, tooltip, icon: 'dashboard' });
}

function sectionItem(s: ContextSection): vscode.TreeItem {
  const tokens = `${s.tokens.toLocaleString('en-US')} tokens`;
  return item(s.name, { description: s.source ? `${tokens} · ${s.source}` : tokens, tooltip: s.path ?? s.source ?? undefined, icon: 'symbol-file', open: fileUri(s.path ?? undefined) });
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
