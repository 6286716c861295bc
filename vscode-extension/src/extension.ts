/** Entry point: wires the server, the chat, the status-bar meter, the views and the commands. */
import * as vscode from 'vscode';
import { ChatController } from './chatController';
import { ChatViewProvider, openChatPanel, PANEL_TYPE } from './chatView';
import { API_KEY_SECRET, ServerManager } from './server';
import { StatusMeter } from './statusBar';
import { ContextView, SkillsView } from './views';
import { describeError } from './errors';
import type { ContextStatus, SkillsChanged } from './shared/protocol';

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Qwen', { log: true });
  const server = new ServerManager(context, output);
  const chat = new ChatController(context, server);
  const meter = new StatusMeter();
  const contextView = new ContextView(server);
  contextView.sessionId = () => chat.transcript.sessionId;
  const skillsView = new SkillsView(server);
  const provider = new ChatViewProvider(context.extensionUri, chat);

  server.onDidCreateClient((client) => {
    chat.bindClient(client);
    client.onNotification('qwen/contextStatus', (s: ContextStatus) => meter.showStatus(s));
    client.onNotification('qwen/skillsChanged', (p: SkillsChanged) => {
      chat.onSkillsChanged(p);
      void skillsView.refresh();
    });
  });
  server.onDidChangeState((s) => meter.showServer(s));

  context.subscriptions.push(
    output,
    server,
    chat,
    meter,
    vscode.window.registerWebviewViewProvider('qwen.chat', provider),
    vscode.window.registerTreeDataProvider('qwen.context', contextView),
    vscode.window.registerTreeDataProvider('qwen.skills', skillsView),
    vscode.window.registerWebviewPanelSerializer(PANEL_TYPE, {
      deserializeWebviewPanel: async (panel) => void openChatPanel(context.extensionUri, chat, panel),
    }),
    vscode.commands.registerCommand('qwen.newChat', () => chat.newChat()),
    vscode.commands.registerCommand('qwen.stop', () => chat.stop()),
    vscode.commands.registerCommand('qwen.showHistory', () => chat.showHistory()),
    vscode.commands.registerCommand('qwen.restartServer', async () => {
      await server.restart();
      void skillsView.refresh();
    }),
    vscode.commands.registerCommand('qwen.setApiKey', async () => {
      const key = await vscode.window.showInputBox({
        title: 'Qwen: API key',
        prompt: 'Stored in VS Code secret storage and given to the qwen-lsp server as OPENAI_API_KEY. Leave empty to remove it.',
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return;
      if (key.trim()) await context.secrets.store(API_KEY_SECRET, key.trim());
      else await context.secrets.delete(API_KEY_SECRET);
      await server.restart(); // the key reaches the server through its environment
    }),
    vscode.commands.registerCommand('qwen.openChatInEditor', () => openChatPanel(context.extensionUri, chat)),
    vscode.commands.registerCommand('qwen.attachSelection', () => chat.attachSelection()),
    vscode.commands.registerCommand('qwen.attachFile', () => chat.attachFile()),
    vscode.commands.registerCommand('qwen.showContext', async () => {
      await vscode.commands.executeCommand('qwen.context.focus');
      await contextView.refresh();
    }),
    vscode.commands.registerCommand('qwen.refreshSkills', () => skillsView.refresh()),
    vscode.commands.registerCommand('qwen.addSelectionToProjectRules', async () => {
      const editor = vscode.window.activeTextEditor;
      const text = editor?.document.getText(editor.selection);
      if (!editor || !text?.trim()) return void vscode.window.showInformationMessage('Select the text to add to QWEN.md first.');
      const client = await server.ready();
      if (!client) return;
      try {
        const r: { path: string } = await client.sendRequest('workspace/executeCommand', {
          command: 'qwen.addToProjectRules',
          arguments: [{ text, uri: editor.document.uri.toString() }],
        });
        const pick = await vscode.window.showInformationMessage(`Added to ${vscode.workspace.asRelativePath(r.path)}.`, 'Open');
        if (pick === 'Open') await vscode.window.showTextDocument(vscode.Uri.file(r.path), { preview: true });
      } catch (err) {
        void vscode.window.showErrorMessage(describeError(err).message);
      }
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('qwen.server.path')) void vscode.commands.executeCommand('qwen.restartServer');
      else if (e.affectsConfiguration('qwen')) server.notifySettingsChanged();
    }),
    context.secrets.onDidChange((e) => {
      if (e.key === API_KEY_SECRET) output.appendLine('[qwen] API key changed');
    }),
  );

  void server.ready().then((client) => {
    if (client) void skillsView.refresh();
  });
}

export function deactivate(): void {
  // Disposables in context.subscriptions stop the server.
}
