/**
 * Entry point: wires the server, the chat, the status-bar meter, the views and the commands.
 * Work-done progress from the server (memory extraction, dream, compression) needs no code here:
 * vscode-languageclient's ProgressFeature answers window/workDoneProgress/create and shows it in
 * the status bar (ProgressLocation.Window), which never takes focus.
 */
import * as vscode from 'vscode';
import { ChatController } from './chatController';
import { ChatRouter } from './chat/router';
import { ChatViewProvider, openChatPanel } from './chatView';
import { PANEL_TYPE } from './panelType';
import { API_KEY_SECRET, ServerManager } from './server';
import { StatusMeter } from './statusBar';
import { ContextFigures } from './contextFigure';
import { figureWords } from './meter';
import { ContextView, SkillsView } from './views';
import { ContextPictureView } from './contextPicture';
import { forgetByQuery, forgetOne, MemoryView } from './memoryView';
import { addSelectionToProjectRules, rememberConvention, runServerCommand } from './selectionCommands';
import { notifications } from './rpc.generated';
import { configureModel, setServerPath, setupState } from './setup';

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Qwen', { log: true });
  const server = new ServerManager(context, output);
  // The side bar's chat; "New Chat in Editor Tab" opens more, each its own (src/chat/router.ts).
  const openInTab = (sessionId?: string): void => {
    const tabChat = new ChatController(context, server, { tab: true });
    router.add(tabChat);
    const panel = openChatPanel(context.extensionUri, tabChat);
    panel.onDidDispose(() => {
      router.remove(tabChat);
      tabChat.dispose();
    });
    if (sessionId) void tabChat.resume(sessionId);
  };
  const chat = new ChatController(context, server, { openInTab });
  const router = new ChatRouter(chat);
  chat.readSetup = () => setupState(server, context.secrets);
  const meter = new StatusMeter();
  // One context figure for the status bar, the Context view and the panel (contextFigure.ts).
  const figures = new ContextFigures(server);
  const contextView = new ContextView(server, figures);
  const picture = new ContextPictureView(figures);
  chat.onChatShown = (sessionId, promptTokens) => figures.follow(sessionId, promptTokens);
  chat.onCompacted = () => void figures.refresh();
  figures.onDidChange(() => {
    const f = figures.figure;
    if (f) meter.showStatus(f);
    else meter.clearStatus();
    const w = f && figureWords(f);
    chat.showContextFigure(w && f ? { left: w.left, title: `Context: ${w.tokens}, ${w.left}. ${w.limits} Click to see what fills it.`, level: f.level } : undefined);
    void contextView.refresh();
    picture.render();
  });
  const contextTree = vscode.window.createTreeView('qwen.context', { treeDataProvider: contextView });
  contextTree.onDidChangeVisibility((e) => {
    if (e.visible) void figures.refresh();
  });
  const skillsView = new SkillsView(server);
  chat.onSkillSaved = () => void skillsView.refresh();
  const memoryView = new MemoryView(server);
  server.commandHook = runServerCommand;
  const provider = new ChatViewProvider(context.extensionUri, chat);

  server.onDidCreateClient((client) => {
    router.bindClient(client);
    client.onNotification(notifications.contextStatus, (s) => figures.onStatus(s, chat.transcript.sessionId));
    client.onNotification(notifications.skillsChanged, (p) => {
      chat.onSkillsChanged(p);
      void skillsView.refresh();
    });
    client.onNotification(notifications.memoryChanged, (p) => {
      chat.onMemoryChanged(p);
      void memoryView.refresh();
    });
  });
  server.onDidChangeState((s) => {
    meter.showServer(s);
    void chat.serverStateChanged(s);
  });

  context.subscriptions.push(
    output,
    server,
    chat,
    meter,
    figures,
    contextTree,
    vscode.window.registerWebviewViewProvider('qwen.chat', provider),
    vscode.window.registerWebviewViewProvider('qwen.contextPicture', picture),
    vscode.window.registerTreeDataProvider('qwen.skills', skillsView),
    memoryView,
    vscode.window.registerTreeDataProvider('qwen.memory', memoryView),
    vscode.window.registerWebviewPanelSerializer(PANEL_TYPE, {
      deserializeWebviewPanel: async (panel) => void openChatPanel(context.extensionUri, chat, panel),
    }),
    vscode.commands.registerCommand('qwen.newChat', () => chat.newChat()),
    vscode.commands.registerCommand('qwen.stop', () => chat.stop()),
    vscode.commands.registerCommand('qwen.compact', () => chat.compact('full')),
    vscode.commands.registerCommand('qwen.compactFast', () => chat.compact('fast')),
    vscode.commands.registerCommand('qwen.showHistory', () => chat.showHistory()),
    vscode.commands.registerCommand('qwen.focusInput', async () => {
      await vscode.commands.executeCommand('qwen.chat.focus');
      provider.focusComposer();
    }),
    vscode.commands.registerCommand('qwen.restartServer', async () => {
      await server.restart();
      void figures.refresh();
      void skillsView.refresh();
      void memoryView.refresh();
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
    vscode.commands.registerCommand('qwen.configureModel', () => configureModel()),
    vscode.commands.registerCommand('qwen.setServerPath', () => setServerPath()),
    vscode.commands.registerCommand('qwen.openChatInEditor', () => openChatPanel(context.extensionUri, chat)),
    vscode.commands.registerCommand('qwen.newChatInEditor', () => openInTab()),
    vscode.commands.registerCommand('qwen.attachSelection', () => chat.attachSelection()),
    vscode.commands.registerCommand('qwen.attachFile', () => chat.attachFile()),
    vscode.commands.registerCommand('qwen.attachFiles', () => chat.pickFiles()),
    vscode.commands.registerCommand('qwen.showContext', async () => {
      await vscode.commands.executeCommand('qwen.context.focus');
      await figures.refresh();
    }),
    vscode.commands.registerCommand('qwen.refreshSkills', () => skillsView.refresh()),
    vscode.commands.registerCommand('qwen.addSelectionToProjectRules', () => addSelectionToProjectRules(server)),
    vscode.commands.registerCommand('qwen.rememberConvention', () => rememberConvention(server)),
    vscode.commands.registerCommand('qwen.refreshMemory', () => memoryView.refresh()),
    vscode.commands.registerCommand('qwen.forgetMemories', () => forgetByQuery(server, memoryView)),
    vscode.commands.registerCommand('qwen.forgetMemory', (node) => forgetOne(server, memoryView, node)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('qwen.server.path')) void vscode.commands.executeCommand('qwen.restartServer');
      else if (e.affectsConfiguration('qwen')) server.notifySettingsChanged();
      if (e.affectsConfiguration('qwen.model') || e.affectsConfiguration('qwen.compression')) void figures.refresh(); // the window or thresholds may change
      if (e.affectsConfiguration('qwen.tools.approvalMode')) chat.approvalModeChanged();
      if (e.affectsConfiguration('qwen.model')) void chat.modelSettingsChanged();
    }),
    // Trust granted: the server that Restricted Mode held back starts now.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void vscode.commands.executeCommand('qwen.restartServer')),
    context.secrets.onDidChange((e) => {
      if (e.key !== API_KEY_SECRET) return;
      output.appendLine('[qwen] API key changed');
      void chat.refreshSetup();
    }),
  );

  void server.ready().then((client) => {
    if (!client) return;
    void figures.refresh();
    void skillsView.refresh();
    void memoryView.refresh();
  });
}

export function deactivate(): void {
  // Disposables in context.subscriptions stop the server.
}
