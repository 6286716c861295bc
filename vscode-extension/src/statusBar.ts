/** The status-bar item: server state until the chat's context figure is known (contextFigure.ts), then the context meter. */
import * as vscode from 'vscode';
import { meterView } from './meter';
import type { ServerState } from './server';
import type { ContextFigure } from './meter';

export class StatusMeter implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('qwen.contextMeter', vscode.StatusBarAlignment.Left, 50);
  private last: ContextFigure | undefined;
  private state: ServerState = 'starting';

  constructor() {
    this.item.name = 'Qwen context';
    this.item.command = 'qwen.showContext';
    this.showServer('starting');
    this.item.show();
  }

  showServer(state: ServerState): void {
    this.state = state;
    if (state === 'running' && this.last) return this.showStatus(this.last);
    const icon = state === 'starting' ? '$(sync~spin)' : state === 'failed' ? '$(error)' : state === 'restricted' ? '$(shield)' : '$(comment-discussion)';
    this.item.text = `${icon} Qwen`;
    this.item.tooltip =
      state === 'failed'
        ? 'The qwen-lsp server is not running. Click for context; run "Qwen: Restart Server" to retry.'
        : state === 'restricted'
          ? 'Restricted Mode: Qwen starts no server until the folder is trusted.'
          : `Qwen server: ${state}`;
    this.item.backgroundColor = state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  showStatus(s: ContextFigure): void {
    this.last = s;
    const v = meterView(s);
    this.item.text = v.text;
    this.item.tooltip = v.tooltip;
    this.item.backgroundColor = v.background ? new vscode.ThemeColor(v.background) : undefined;
  }

  /** The chat has no figure (no model is configured): the item shows the server's state again. */
  clearStatus(): void {
    this.last = undefined;
    this.showServer(this.state);
  }

  dispose(): void {
    this.item.dispose();
  }
}
