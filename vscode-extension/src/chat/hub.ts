/**
 * The webviews showing the chat (the sidebar view and editor tabs): every host → webview message
 * goes out here, typed by the one contract (shared/messages.ts), and streamed changes are
 * coalesced to one message per frame.
 */
import type * as vscode from 'vscode';
import { FrameCoalescer } from '../coalesce';
import type { HostToWebview, StreamPatch } from '../shared/messages';

export class WebviewHub {
  private readonly webviews = new Set<vscode.Webview>();
  readonly patches = new FrameCoalescer((patches: StreamPatch[]) => this.broadcast({ type: 'patches', patches }));

  /** A view that said `ready` gets every message from now on. */
  add(webview: vscode.Webview): void {
    this.webviews.add(webview);
  }

  /** A closed view, or a hidden one (VS Code cannot post to it; its reload asks for a snapshot). */
  delete(webview: vscode.Webview): void {
    this.webviews.delete(webview);
  }

  post(webview: vscode.Webview, msg: HostToWebview): void {
    void webview.postMessage(msg);
  }

  broadcast(msg: HostToWebview): void {
    for (const w of this.webviews) this.post(w, msg);
  }
}
