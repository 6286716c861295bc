/**
 * The Context Picture view (a webview view beside the Context tree): the chat's last requests as
 * stacked bars (contextPictureHtml.ts). A webview because a tree cannot draw a bar; a view of its
 * own, not a part of the chat panel, so the transcript keeps its room and the picture sits with the
 * Context list it explains. It shows the shared report (contextFigure.ts): the same qwen/context
 * answer the Context tree lists, fetched again after each turn.
 */
import * as vscode from 'vscode';
import type { ContextFigures } from './contextFigure';
import { pictureHtml } from './contextPictureHtml';
import { describeError } from './errors';

export class ContextPictureView implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;

  constructor(private readonly figures: ContextFigures) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: false };
    view.onDidChangeVisibility(() => {
      if (view.visible) void this.figures.refresh();
    });
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
    this.render();
    void this.figures.refresh();
  }

  /** The report changed: the page is written again (it has no script to patch it). */
  render(): void {
    const view = this.view;
    if (!view) return;
    const f = this.figures;
    view.webview.html = pictureHtml(f.report, view.webview.cspSource, f.report ? undefined : f.error ? describeError(f.error).message : undefined);
  }
}
