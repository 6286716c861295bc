/**
 * The chat's host side: one transcript per window, shown by any number of webviews (the sidebar
 * view and editor tabs). Sends qwen/chat with a CancellationToken (Stop cancels it), folds
 * qwen/chatEvent into the transcript and forwards changes coalesced to one frame.
 */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import type { LanguageClient } from 'vscode-languageclient/node';
import { FrameCoalescer } from './coalesce';
import { linkTarget, resolveInside } from './links';
import type { ContainmentFs } from './links';
import { describeError, isCancelled } from './errors';
import type { ServerManager, ServerState } from './server';
import { Transcript } from './transcript';
import { memoryNotice } from './memory';
import { compactErrorText, compactingText, compactSession } from './compaction';
import { PermissionBroker } from './permission';
import { DiffEditorUi } from './diffEditor';
import { acceptSuggestionTurn, Followups } from './followups';
import { EditorContextTracker } from './editorContext';
import { stricterValue } from './settings';
import type { AcceptOutcome } from './followups';
import { notifications, permissionRequest, requests } from './rpc.generated';
import type { Send } from './rpc.generated';
import { APPROVAL_MODES } from './shared/messages';
import type { ApprovalModeName, AttachmentChip, CompactState, ContextFigureLine, EditorContextChip, ErrorAction, HostToWebview, Notice, SetupState, StreamPatch, WebviewToHost } from './shared/messages';
import type { ChatParams, CompressMode, MemoryChanged, PermissionParams, PermissionResult, SessionSummary, SkillsChanged } from './shared/protocol';

const SESSION_KEY = 'qwen.sessionId';
/** The extension host's own file system, for the links' containment check (links.ts). */
const LOCAL_FS: ContainmentFs = { realpath: (p) => realpath(p), path, caseInsensitive: process.platform === 'win32' || process.platform === 'darwin' };
const MAX_NOTICES = 5;

export class ChatController implements vscode.Disposable {
  readonly transcript = new Transcript((p) => vscode.workspace.asRelativePath(p, false));
  private readonly webviews = new Set<vscode.Webview>();
  private attachments: AttachmentChip[] = [];
  private notices: Notice[] = [];
  private cts: vscode.CancellationTokenSource | undefined;
  private restored: Promise<void> | undefined;
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private noticeCounter = 0;
  /** The welcome's steps (server, model, key), kept current while the chat is empty. */
  private setup: SetupState | undefined;
  /** Reads the welcome's steps (src/setup.ts, set by the extension's entry point). */
  readSetup: (() => Promise<SetupState>) | undefined;
  /**
   * The client the open session was last used with. A restarted server (e.g. after "Set API key")
   * knows only the sessions saved on disk, so the next turn re-opens the session first (see reopenSession).
   */
  private sessionClient: LanguageClient | undefined;
  /** The "Compacting…" status line while qwen/compress runs. */
  private compactingLine: string | undefined;
  /** Called after a compaction made the model's history smaller (the Context view refreshes). */
  onCompacted: (() => void) | undefined;
  /** Called after a proposed skill was saved (the Skills view refreshes). */
  onSkillSaved: (() => void) | undefined;
  /** Called when the chat shown changes or a turn ends (the context figure follows it), with a resumed chat's recorded prompt size. */
  onChatShown: ((sessionId: string | undefined, promptTokens?: number) => void) | undefined;
  private contextFigure: ContextFigureLine | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly coalescer = new FrameCoalescer((patches: StreamPatch[]) => this.broadcast({ type: 'patches', patches }));
  private readonly diffs = new DiffEditorUi();
  /** The editor context that goes along with the next message, and whether the user left it out. */
  private readonly editorContext = new EditorContextTracker(() => this.publishEditorContext());
  private editorContextLeftOut = false;
  /** qwen/permission: the card above the composer and the proposed change in the diff editor. */
  private readonly permissions = new PermissionBroker(
    {
      card: (approval) => {
        this.coalescer.flush(); // the tool card the question is about goes out first
        this.broadcast({ type: 'approval', approval });
      },
      openDiff: this.diffs.openDiff,
    },
    (p) => vscode.workspace.asRelativePath(p),
  );
  /** qwen/suggestion (the chip above the composer) and qwen/skillProposed (cards with Accept / Discard). */
  private readonly followups = new Followups(
    async (type, params) => {
      const client = await this.server.ready();
      if (!client) throw new Error('Client is not running');
      return client.sendRequest(type, params);
    },
    {
      chat: () => ({ sessionId: this.transcript.sessionId, running: this.transcript.running }),
      suggestion: (suggestion) => this.broadcast({ type: 'suggestion', suggestion }),
      proposals: (proposals) => this.broadcast({ type: 'skillProposals', proposals }),
      notice: (text, file) => this.addNotice({ text, ...(file ? { uri: vscode.Uri.file(file).toString(), openLabel: 'Open skill' } : {}) }),
      skillSaved: () => this.onSkillSaved?.(),
    },
    (p) => vscode.workspace.asRelativePath(p, false),
  );

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: ServerManager,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e) this.lastEditor = e;
      }),
      this.diffs,
      this.editorContext,
    );
  }

  private editorContextChip(): EditorContextChip | undefined {
    const label = this.editorContext.label;
    return label ? { label, leftOut: this.editorContextLeftOut } : undefined;
  }

  private publishEditorContext(): void {
    this.broadcast({ type: 'editorContext', chip: this.editorContextChip() ?? null });
  }

  /** Wires a new client's notifications (called before it starts). */
  bindClient(client: LanguageClient): void {
    client.onNotification(notifications.chatEvent, (ev) => {
      const patch = this.transcript.apply(ev);
      if (patch) this.coalescer.push(patch);
    });
    client.onRequest(permissionRequest, (params, token) => this.onPermission(params, token));
    client.onNotification(notifications.suggestion, (p) => this.followups.onSuggestion(p));
    client.onNotification(notifications.skillProposed, (p) => this.followups.onSkillProposed(p));
    this.editorContext.bind(client);
  }

  /**
   * The server asks before a write or a command of the running turn. A question for any other
   * chat (one this window no longer shows) is denied: nobody could see what they would approve.
   */
  private onPermission(params: PermissionParams, token: vscode.CancellationToken): Promise<PermissionResult> {
    const sid = this.transcript.sessionId;
    if (!this.transcript.running || this.transcript.stopping || (sid !== undefined && params.sessionId !== sid)) {
      return Promise.resolve({ decision: 'deny', reason: 'The chat this request belongs to is not open in the editor.' });
    }
    return this.permissions.ask(params, token);
  }

  /** Shows the webview's messages in this chat; the webview asks for a snapshot when it loads. */
  attach(webview: vscode.Webview): vscode.Disposable {
    const sub = webview.onDidReceiveMessage((m: WebviewToHost) => this.onMessage(webview, m));
    return new vscode.Disposable(() => {
      sub.dispose();
      this.webviews.delete(webview);
    });
  }

  /** A view was hidden: VS Code cannot post to it, so stop trying; its reload asks for a snapshot. */
  detachHidden(webview: vscode.Webview): void {
    this.webviews.delete(webview);
  }

  private post(webview: vscode.Webview, msg: HostToWebview): void {
    void webview.postMessage(msg);
  }

  private broadcast(msg: HostToWebview): void {
    for (const w of this.webviews) this.post(w, msg);
  }

  private snapshot(): HostToWebview {
    const approval = this.permissions.current;
    const suggestion = this.followups.suggestion;
    const skillProposals = this.followups.proposals;
    const editorContext = this.editorContextChip();
    return {
      type: 'snapshot',
      snapshot: this.transcript.snapshot({
        attachments: this.attachments,
        notices: this.notices,
        compact: this.compactState(),
        approvalMode: this.approvalMode(),
        ...(approval ? { approval } : {}),
        ...(suggestion ? { suggestion } : {}),
        ...(skillProposals.length ? { skillProposals } : {}),
        ...(editorContext ? { editorContext } : {}),
        ...(this.contextFigure ? { contextFigure: this.contextFigure } : {}),
        ...(this.setup ? { setup: this.setup } : {}),
      }),
    };
  }

  private async onMessage(webview: vscode.Webview, m: WebviewToHost): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.webviews.add(webview);
        await this.restoreOnce();
        this.setup ??= await this.readSetup?.();
        this.post(webview, this.snapshot());
        break;
      case 'send':
        await this.send(m.prompt);
        break;
      case 'stop':
        this.stop();
        break;
      case 'newChat':
        this.newChat();
        break;
      case 'compact':
        await this.compact(m.mode === 'fast' ? 'fast' : 'full');
        break;
      case 'showHistory':
        await this.showHistory();
        break;
      case 'showContext':
        await vscode.commands.executeCommand('qwen.showContext');
        break;
      case 'copy':
        await vscode.env.clipboard.writeText(m.text);
        break;
      case 'insert':
        await this.insertAtCursor(m.text);
        break;
      case 'attachSelection':
        this.attachSelection();
        break;
      case 'attachFile':
        this.attachFile();
        break;
      case 'removeAttachment':
        this.attachments = this.attachments.filter((_, i) => i !== m.index);
        this.broadcast({ type: 'attachments', attachments: this.attachments });
        break;
      case 'dismissNotice':
        this.notices = this.notices.filter((n) => n.id !== m.id);
        this.broadcast({ type: 'notices', notices: this.notices });
        break;
      case 'openNotice':
        await this.openNotice(m.id);
        break;
      case 'openLink':
        await this.openLink(m.href);
        break;
      case 'action':
        await this.runAction(m.action);
        break;
      case 'approvalReply':
        this.permissions.reply(m.id, m.optionId, m.reason);
        break;
      case 'acceptSuggestion':
        await this.acceptSuggestion(m.id);
        break;
      case 'dismissSuggestion':
        this.followups.dismiss(m.id);
        break;
      case 'toggleEditorContext':
        this.editorContextLeftOut = !this.editorContextLeftOut;
        this.publishEditorContext();
        break;
      case 'setApprovalMode':
        await this.setApprovalMode(m.mode);
        break;
      case 'skillProposalReply':
        await this.followups.answerProposal(m.id, m.accept);
        break;
    }
  }

  /** After a window reload: the transcript of the last session comes back from the server. */
  private restoreOnce(): Promise<void> {
    return (this.restored ??= (async () => {
      const id = this.context.workspaceState.get<string>(SESSION_KEY);
      if (!id || this.transcript.sessionId || this.transcript.messages.length) return;
      const client = await this.server.ready();
      if (!client) return;
      try {
        // A window reload brings back the chat the user was in: no recap (it would cost a model request each time).
        const r = await client.sendRequest(requests.sessionsResume, { sessionId: id, recap: false });
        if (!this.transcript.messages.length) this.transcript.load(r);
        this.onChatShown?.(this.transcript.sessionId, r.promptTokens);
        this.sessionClient = client;
      } catch {
        void this.context.workspaceState.update(SESSION_KEY, undefined); // deleted or unreadable: start fresh
      }
      this.publishCompactState();
    })());
  }

  private rememberSession(promptTokens?: number): void {
    void this.context.workspaceState.update(SESSION_KEY, this.transcript.sessionId);
    this.publishCompactState();
    this.onChatShown?.(this.transcript.sessionId, promptTokens);
  }

  /** The shared context figure (src/contextFigure.ts), shown under the composer. */
  showContextFigure(figure: ContextFigureLine | undefined): void {
    this.contextFigure = figure;
    this.broadcast({ type: 'contextFigure', figure: figure ?? null });
  }

  /** The picker's mode: `qwen.tools.approvalMode` as VS Code has it, `default` when unset or unknown. */
  private approvalMode(): ApprovalModeName {
    // What the server applies: the user's mode, or a workspace value only when it is stricter (settings.ts).
    const value = stricterValue(vscode.workspace.getConfiguration('qwen').inspect('tools.approvalMode') ?? {});
    return APPROVAL_MODES.find((m) => m.mode === value)?.mode ?? 'default';
  }

  /**
   * The picker writes the user's setting (every workspace, as Qwen Code's `/approval-mode` does for
   * the session); the server gets it with the other `qwen.*` settings and applies it from the next call.
   */
  private async setApprovalMode(mode: ApprovalModeName): Promise<void> {
    if (!APPROVAL_MODES.some((m) => m.mode === mode)) return;
    await vscode.workspace.getConfiguration('qwen').update('tools.approvalMode', mode, vscode.ConfigurationTarget.Global);
  }

  /** Called when `qwen.tools.approvalMode` changed, from the picker or the Settings editor. */
  approvalModeChanged(): void {
    this.broadcast({ type: 'approvalMode', mode: this.approvalMode() });
  }

  /** Compact needs a session with an answer in it: a failed turn (e.g. no model configured) leaves nothing to compact. */
  private compactState(): CompactState {
    const answered = this.transcript.messages.some((m) => m.role === 'assistant' && !m.error && (m.text || m.tools?.length));
    return { available: !!this.transcript.sessionId && answered, compacting: this.compactingLine !== undefined };
  }

  /** The panel's Compact button and the command's enablement follow the session and the running compaction. */
  private publishCompactState(): void {
    const state = this.compactState();
    this.broadcast({ type: 'compactState', state });
    void vscode.commands.executeCommand('setContext', 'qwen.hasSession', state.available);
    void vscode.commands.executeCommand('setContext', 'qwen.compacting', state.compacting);
  }

  /**
   * qwen/compress for the open chat. The transcript is kept (only the model's copy is compacted);
   * a status line says "Compacting…" and then the result, in place. The composer stays usable: a
   * message sent meanwhile waits on the server for the compaction to finish.
   */
  async compact(mode: CompressMode = 'full'): Promise<void> {
    if (this.compactingLine !== undefined) return;
    const sessionId = this.transcript.sessionId;
    if (!sessionId) return void vscode.window.showInformationMessage('Start a chat first: there is nothing to compact yet.');
    const line = this.transcript.addStatus(compactingText(mode), { pending: true });
    this.compactingLine = line.id;
    this.broadcast({ type: 'message', message: line });
    this.publishCompactState();
    const client = await this.server.ready();
    const outcome = client
      ? await compactSession((type, params) => client.sendRequest(type, params), sessionId, mode)
      : compactErrorText(new Error('Client is not running'));
    this.compactingLine = undefined;
    const settled = this.transcript.settleStatus(line.id, outcome.text, outcome.tone);
    if (settled) this.broadcast({ type: 'message', message: settled });
    this.publishCompactState();
    if (outcome.compacted) this.onCompacted?.();
  }

  async send(prompt: string): Promise<void> {
    if (this.transcript.running || !prompt.trim()) return;
    this.followups.clear(false); // the server aborts the suggestion's speculation on any new qwen/chat
    const attachments = this.attachments.map(({ uri, range }) => (range ? { uri, range } : { uri }));
    this.attachments = [];
    this.broadcast({ type: 'attachments', attachments: [] });
    const leaveOut = this.editorContextLeftOut; // for this message only
    this.editorContextLeftOut = false;
    if (leaveOut) this.publishEditorContext();
    await this.runTurn(prompt, async (send) => {
      const params: ChatParams = {
        prompt,
        ...(this.transcript.sessionId ? { sessionId: this.transcript.sessionId } : {}),
        ...(attachments.length ? { attachments } : {}),
        ...(leaveOut ? { editorContext: false } : {}),
      };
      const r = await send(requests.chat, params);
      return { sessionId: r.sessionId, text: r.text, cancelled: r.finishReason === 'cancelled' };
    });
  }

  /**
   * Tab / Enter on the suggestion chip: the suggestion runs as a turn of this chat (its text is
   * the user's message); see acceptSuggestionTurn. A stale id (replaced meanwhile) does nothing.
   */
  async acceptSuggestion(id: string): Promise<void> {
    const sessionId = this.transcript.sessionId;
    if (this.transcript.running || !sessionId) return;
    const s = this.followups.take(id);
    if (!s) return;
    await this.runTurn(s.text, (send) => acceptSuggestionTurn(send, s.id));
  }

  /**
   * One turn of the chat: the user's message and a streaming answer, the request (cancelled by
   * Stop through its token), then the final message.
   */
  private async runTurn(prompt: string, request: (send: Send) => Promise<Parameters<Transcript['end']>[0] & AcceptOutcome>): Promise<void> {
    const [user, assistant] = this.transcript.begin(prompt);
    this.broadcast({ type: 'message', message: user });
    this.broadcast({ type: 'message', message: assistant });
    this.broadcast({ type: 'running', running: true });
    void vscode.commands.executeCommand('setContext', 'qwen.chatRunning', true);
    const cts = (this.cts = new vscode.CancellationTokenSource());
    let outcome: Parameters<Transcript['end']>[0] & AcceptOutcome;
    const client = await this.server.ready();
    if (!client) {
      outcome = { error: describeError(new Error('Client is not running'), this.server.failure) };
    } else {
      try {
        await this.reopenSession(client);
        outcome = await request((type, params) => client.sendRequest(type, params, cts.token));
      } catch (err) {
        outcome = isCancelled(err) || cts.token.isCancellationRequested ? { cancelled: true } : { error: describeError(err, this.server.failure) };
      } finally {
        this.sessionClient = client; // a failed turn names its session too (in its events), unsaved
      }
    }
    cts.dispose();
    this.cts = undefined;
    this.coalescer.flush(); // everything streamed goes out before the final message
    const final = this.transcript.end(outcome);
    this.rememberSession();
    if (final) this.broadcast({ type: 'message', message: final });
    this.broadcast({ type: 'running', running: false });
    void vscode.commands.executeCommand('setContext', 'qwen.chatRunning', false);
  }

  /**
   * After a server restart: the open chat continues on the new server. A session saved on disk is
   * found there (sessions/resume without a recap only checks it); one that never got a record (its
   * only turns failed, e.g. before a model was configured) is gone, so the next message starts a
   * new session and the panel keeps the transcript.
   */
  private async reopenSession(client: LanguageClient): Promise<void> {
    const sessionId = this.transcript.sessionId;
    if (!sessionId || this.sessionClient === client) return;
    try {
      await client.sendRequest(requests.sessionsResume, { sessionId, recap: false });
    } catch (err) {
      if (describeError(err).kind !== 'not_found') throw err;
      this.transcript.sessionId = undefined;
    }
    this.sessionClient = client;
  }

  /**
   * The server's state changed: the welcome's server step follows it, and once the server runs
   * again an earlier "server is not running" error says so and offers Retry instead of a restart.
   */
  async serverStateChanged(state: ServerState): Promise<void> {
    if (state === 'running') {
      for (const m of this.transcript.messages) {
        if (m.error?.kind !== 'server_down') continue;
        m.error = { kind: 'server_back', message: 'The qwen-lsp server is running now. Retry sends the message again.', actions: ['retry'] };
        this.broadcast({ type: 'message', message: m });
      }
    }
    await this.refreshSetup();
  }

  /** Settings or the API key changed: the welcome's steps are read again. */
  async refreshSetup(): Promise<void> {
    this.setup = await this.readSetup?.();
    if (this.setup) this.broadcast({ type: 'setup', setup: this.setup });
  }

  /** Stop: the request is cancelled through its token ($/cancelRequest); the partial answer stays. */
  stop(): void {
    if (!this.cts) return;
    this.coalescer.flush();
    this.transcript.stop();
    this.permissions.denyAll(); // the server withdraws them too; the card goes at once
    this.cts.cancel();
  }

  /** `focus`: the caret goes to the composer (not when History's delete cleared the chat: the list stays open). */
  newChat(focus = true): void {
    if (this.transcript.running) this.stop();
    this.followups.clear(true);
    this.coalescer.discard();
    this.transcript.reset();
    this.notices = []; // a notice sits in the transcript of the chat where it happened
    this.rememberSession();
    this.broadcast(this.snapshot());
    if (focus) this.broadcast({ type: 'focusComposer' });
  }

  async listSessions(): Promise<SessionSummary[]> {
    const client = await this.server.ready();
    if (!client) return [];
    try {
      const r = await client.sendRequest(requests.sessionsList, {});
      return r.sessions;
    } catch (err) {
      void vscode.window.showErrorMessage(describeError(err).message);
      return [];
    }
  }

  async resume(sessionId: string): Promise<void> {
    if (this.transcript.running) return;
    const client = await this.server.ready();
    if (!client) return;
    try {
      const r = await client.sendRequest(requests.sessionsResume, { sessionId });
      if (r.sessionId !== this.transcript.sessionId) {
        this.followups.clear(true);
        this.notices = [];
      }
      this.transcript.load(r);
      this.sessionClient = client;
      this.rememberSession(r.promptTokens);
      this.broadcast(this.snapshot());
    } catch (err) {
      void vscode.window.showErrorMessage(describeError(err).message);
    }
  }

  async deleteSession(sessionId: string): Promise<void> {
    const client = await this.server.ready();
    if (!client) return;
    try {
      await client.sendRequest(requests.sessionsDelete, { sessionId });
      if (this.transcript.sessionId === sessionId) this.newChat(false);
    } catch (err) {
      void vscode.window.showErrorMessage(describeError(err).message);
    }
  }

  /**
   * History as a quick pick, as Copilot Chat has it: it fits any side-bar width (titles whole, no
   * horizontal scrolling), filters as you type, and each row has a Delete button. Picking a chat
   * resumes it; deleting one keeps the list open.
   */
  async showHistory(): Promise<void> {
    const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { sessionId: string }>();
    qp.title = 'Qwen: Chat History';
    qp.placeholder = 'Pick a chat to resume; type to filter';
    qp.matchOnDescription = true;
    const remove: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete chat' };
    const fill = async (): Promise<void> => {
      qp.busy = true;
      const sessions = await this.listSessions();
      qp.items = sessions.map((s) => ({
        sessionId: s.sessionId,
        label: s.title || '(untitled)',
        description: `${s.sessionId === this.transcript.sessionId ? 'current · ' : ''}${s.messageCount} messages · ${new Date(s.updatedAt).toLocaleString()}`,
        buttons: [remove],
      }));
      if (!sessions.length) qp.placeholder = 'No saved chats yet';
      qp.busy = false;
    };
    qp.onDidTriggerItemButton(async (e) => {
      await this.deleteSession(e.item.sessionId);
      await fill();
    });
    qp.onDidAccept(() => {
      const pick = qp.selectedItems[0];
      qp.hide();
      if (pick) void this.resume(pick.sessionId);
    });
    qp.onDidHide(() => qp.dispose());
    qp.show();
    await fill();
  }

  attachSelection(): void {
    const editor = this.editor();
    if (!editor) return void vscode.window.showInformationMessage('Open a file to attach its selection.');
    const sel = editor.selection;
    if (sel.isEmpty) return this.attachFile();
    const name = path.basename(editor.document.uri.fsPath);
    this.addAttachment({
      uri: editor.document.uri.toString(),
      range: { start: { line: sel.start.line, character: 0 }, end: { line: sel.end.line, character: sel.end.character } },
      label: `${name}:${sel.start.line + 1}-${sel.end.line + 1}`,
    });
  }

  attachFile(): void {
    const editor = this.editor();
    if (!editor) return void vscode.window.showInformationMessage('Open a file to attach it.');
    this.addAttachment({ uri: editor.document.uri.toString(), label: path.basename(editor.document.uri.fsPath) });
  }

  private addAttachment(chip: AttachmentChip): void {
    if (!this.attachments.some((a) => a.uri === chip.uri && JSON.stringify(a.range) === JSON.stringify(chip.range))) this.attachments.push(chip);
    this.broadcast({ type: 'attachments', attachments: this.attachments });
  }

  private editor(): vscode.TextEditor | undefined {
    return vscode.window.activeTextEditor ?? this.lastEditor;
  }

  private async insertAtCursor(text: string): Promise<void> {
    const editor = this.editor();
    if (!editor) return void vscode.window.showInformationMessage('Open a file to insert the code into.');
    await editor.edit((eb) => {
      for (const sel of editor.selections) eb.replace(sel, text);
    });
  }

  private async openLink(href: string): Promise<void> {
    let uri: vscode.Uri;
    try {
      uri = vscode.Uri.parse(href, true);
    } catch {
      return;
    }
    const target = linkTarget(uri.scheme);
    if (target === 'external') return void (await vscode.env.openExternal(uri));
    if (target !== 'file') return;
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    const real = await resolveInside(uri, folders, LOCAL_FS);
    if (real) await vscode.window.showTextDocument(vscode.Uri.file(real), { preview: true });
    else this.server.output.appendLine(`[qwen] not opened: ${href.slice(0, 300)} is not a file inside the workspace`);
  }

  private async runAction(action: ErrorAction): Promise<void> {
    switch (action) {
      case 'setApiKey':
        await vscode.commands.executeCommand('qwen.setApiKey');
        break;
      case 'openSettings':
        await vscode.commands.executeCommand('workbench.action.openSettings', 'qwen.');
        break;
      case 'restartServer':
        await vscode.commands.executeCommand('qwen.restartServer');
        break;
      case 'retry':
        await this.retry();
        break;
      case 'showLog':
        this.server.output.show(true);
        break;
      case 'configureModel':
        await vscode.commands.executeCommand('qwen.configureModel');
        break;
      case 'setServerPath':
        await vscode.commands.executeCommand('qwen.setServerPath');
        break;
      case 'manageTrust':
        await vscode.commands.executeCommand('workbench.trust.manage');
        break;
    }
  }

  /** Retry sends the failed prompt again in place of the failed turn; an older failed turn's Retry does nothing. */
  private async retry(): Promise<void> {
    const prompt = this.transcript.takeBackFailedTurn();
    if (!prompt) return;
    this.broadcast(this.snapshot());
    await this.send(prompt);
  }

  /** qwen/skillsChanged: a notice naming what switched on and the file that triggered it. */
  onSkillsChanged(p: SkillsChanged): void {
    if (!p.activated?.length) return;
    let trigger = '';
    if (p.trigger) {
      try {
        trigger = ` — triggered by ${vscode.workspace.asRelativePath(vscode.Uri.parse(p.trigger))}`;
      } catch {
        trigger = '';
      }
    }
    this.addNotice({ text: `Activated ${p.activated.join(', ')}${trigger}`, uri: p.trigger });
  }

  /** qwen/memoryChanged: "Memory updated (project): saved …; removed …", with the saved file to open. */
  onMemoryChanged(p: MemoryChanged): void {
    const notice = memoryNotice(p, existsSync);
    this.addNotice({ text: notice.text, ...(notice.path ? { uri: vscode.Uri.file(notice.path).toString(), openLabel: 'Open memory' } : {}) });
  }

  private addNotice(n: Omit<Notice, 'id' | 'at'>): void {
    this.notices = [...this.notices, { id: `n${this.noticeCounter++}`, at: this.transcript.messages.length, ...n }].slice(-MAX_NOTICES);
    this.broadcast({ type: 'notices', notices: this.notices });
  }

  /** A notice's file, opened by id: the webview can open only what the host put in a notice. */
  private async openNotice(id: string): Promise<void> {
    const uri = this.notices.find((n) => n.id === id)?.uri;
    if (!uri) return;
    try {
      await vscode.window.showTextDocument(vscode.Uri.parse(uri, true), { preview: true });
    } catch (err) {
      void vscode.window.showErrorMessage(describeError(err).message);
    }
  }

  dispose(): void {
    this.cts?.cancel();
    this.permissions.denyAll();
    this.coalescer.discard();
    for (const d of this.disposables) d.dispose();
  }
}
