/** The chat webview in the sidebar (a WebviewView) and in editor tabs (WebviewPanels). */
import * as vscode from 'vscode';
import type { ChatController } from './chatController';
import { chatHtml, makeNonce } from './html';
import { PANEL_TYPE } from './panelType';
import type { HostToWebview } from './shared/messages';

function setUp(webview: vscode.Webview, extensionUri: vscode.Uri): void {
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  webview.options = { enableScripts: true, localResourceRoots: [dist] };
  webview.html = chatHtml({
    cspSource: webview.cspSource,
    nonce: makeNonce(),
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
    styleUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css')).toString(),
  });
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const sub = this.controller.attach(view.webview);
    view.onDidChangeVisibility(() => {
      if (!view.visible) this.controller.detachHidden(view.webview);
    });
    view.onDidDispose(() => sub.dispose());
    setUp(view.webview, this.extensionUri);
  }

  /** "Qwen: Focus Chat Input": the caret goes to the side bar's composer (VS Code holds the message until the view has loaded). */
  focusComposer(): void {
    void this.view?.webview.postMessage({ type: 'focusComposer' } satisfies HostToWebview);
  }
}

export function openChatPanel(extensionUri: vscode.Uri, controller: ChatController, existing?: vscode.WebviewPanel): vscode.WebviewPanel {
  const panel =
    existing ??
    vscode.window.createWebviewPanel(PANEL_TYPE, 'Qwen Chat', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false }, { enableScripts: true });
  panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'qwen.svg');
  const sub = controller.attach(panel.webview);
  panel.onDidChangeViewState(() => {
    if (!panel.visible) controller.detachHidden(panel.webview);
  });
  panel.onDidDispose(() => sub.dispose());
  setUp(panel.webview, extensionUri);
  return panel;
}
