/**
 * The proposed change of a qwen/permission request in VS Code's own diff editor: a read-only
 * virtual "before" (the open buffer with its unsaved changes, else the file on disk, else empty for
 * a new file) and a read-only virtual "after" (the server's unified diff applied to it). Opened
 * with preserveFocus, so typing continues where it was, in the active group, or beside it when
 * the active tab is the chat panel itself. Not a preview tab: opening another file must not
 * replace it, because closing it is the user's Deny. If the diff does not apply (the buffer changed
 * since, or the server cut a huge diff), the diff itself is shown as text.
 */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { PANEL_TYPE } from './panelType';
import type { DiffView, PermissionUi } from './permission';
import type { PermissionParams } from './shared/protocol';
import { applyUnifiedDiff } from './unifiedDiff';

export const PROPOSED_SCHEME = 'qwen-proposed';

function tabUris(tab: vscode.Tab): vscode.Uri[] {
  const input = tab.input;
  if (input instanceof vscode.TabInputTextDiff) return [input.original, input.modified];
  if (input instanceof vscode.TabInputText) return [input.uri];
  return [];
}

export class DiffEditorUi implements vscode.Disposable {
  private readonly texts = new Map<string, string>();
  /** The "after" (or raw diff) URI of each open proposal → what to call when the user closes it. */
  private readonly watched = new Map<string, () => void>();
  private readonly disposables: vscode.Disposable[];
  private counter = 0;

  constructor() {
    this.disposables = [
      vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, { provideTextDocumentContent: (uri) => this.texts.get(uri.toString()) ?? '' }),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        if (!e.closed.length || !this.watched.size) return;
        const stillOpen = new Set(vscode.window.tabGroups.all.flatMap((g) => g.tabs.flatMap(tabUris)).map((u) => u.toString()));
        for (const key of e.closed.flatMap(tabUris).map((u) => u.toString())) {
          const onClosed = this.watched.get(key);
          if (!onClosed || stillOpen.has(key)) continue; // moved to another group, not closed
          this.watched.delete(key);
          onClosed();
        }
      }),
    ];
  }

  /** The PermissionUi half that opens diffs (the card half is the chat's). */
  readonly openDiff: PermissionUi['openDiff'] = async (params, onClosed) => {
    if (params.diff === undefined || params.path === undefined) return undefined;
    const file = vscode.Uri.file(params.path);
    const id = `${Date.now().toString(36)}-${this.counter++}`;
    const virtual = (side: string, p = file.path) => vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: p, query: `${side}&${id}` });
    const before = await this.currentText(file, params.diff);
    let after: string | undefined;
    try {
      after = before === undefined ? undefined : applyUnifiedDiff(before, params.diff);
    } catch {
      after = undefined;
    }
    const name = path.basename(params.path);
    const column = this.column();
    let shown: vscode.Uri;
    const opened: string[] = [];
    if (after !== undefined) {
      const left = virtual('before');
      shown = virtual('after');
      this.texts.set(left.toString(), before!);
      this.texts.set(shown.toString(), after);
      opened.push(left.toString(), shown.toString());
      await vscode.commands.executeCommand('vscode.diff', left, shown, `${name}: proposed change (Qwen)`, { preserveFocus: true, preview: false, viewColumn: column });
    } else {
      shown = virtual('diff', `${file.path}.diff`);
      this.texts.set(shown.toString(), params.diff);
      opened.push(shown.toString());
      const doc = await vscode.workspace.openTextDocument(shown);
      await vscode.window.showTextDocument(doc, { preserveFocus: true, preview: false, viewColumn: column });
    }
    const key = shown.toString();
    this.watched.set(key, onClosed);
    return {
      close: () => {
        this.watched.delete(key);
        const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => tabUris(t).some((u) => u.toString() === key));
        void Promise.resolve(vscode.window.tabGroups.close(tabs, true)).finally(() => opened.forEach((u) => this.texts.delete(u)));
      },
    } satisfies DiffView;
  };

  /** The text the server's diff was computed from: the open buffer, else the disk; '' for a new file. */
  private async currentText(file: vscode.Uri, diff: string): Promise<string | undefined> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file.fsPath);
    if (open) return open.getText();
    if (diff.startsWith('--- /dev/null')) return '';
    try {
      return new TextDecoder().decode(await vscode.workspace.fs.readFile(file));
    } catch {
      return undefined;
    }
  }

  /** The active group, unless the chat panel is what it shows: then beside it, so the chat stays visible. */
  private column(): vscode.ViewColumn {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    const chatIsActive = input instanceof vscode.TabInputWebview && input.viewType.endsWith(PANEL_TYPE);
    return chatIsActive ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.watched.clear();
    this.texts.clear();
  }
}
