/**
 * The chat's host side: one transcript per window, shown by any number of webviews (the sidebar
 * view and editor tabs). It puts the chat's parts together (src/chat/: the webviews, turns,
 * approvals, session and history, compaction, the model set-up, notices, what goes along with a
 * message) and routes each webview message to the part that owns it, through a table the compiler
 * checks against the contract (shared/messages.ts): a new message without a handler does not build.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { Transcript } from './transcript';
import { Followups } from './followups';
import type { ServerManager, ServerState } from './server';
import type { ContextFigureLine, HostToWebview, SetupState, WebviewToHost } from './shared/messages';
import type { CompressMode, MemoryChanged, SessionListItem, SkillsChanged } from './shared/protocol';
import { WebviewHub } from './chat/hub';
import { Notices } from './chat/notices';
import { OutgoingContext } from './chat/outgoing';
import { Approvals } from './chat/approvals';
import { ChatCompaction } from './chat/compaction';
import { SessionLink } from './chat/session';
import { ChatHistory } from './chat/history';
import { Turns } from './chat/turns';
import { ModelSetup } from './chat/modelSetup';
import { openLink, openSources, runErrorAction, showContextChanges } from './chat/actions';
import { SlashCommands } from './chat/commands';
import type { ChatEvent, CommandResult, PermissionAnswer, PermissionParams, SkillProposed, SuggestionNotice } from './shared/protocol';

export interface ChatOptions {
  /** A chat of its own in an editor tab (see the constructor). */
  tab?: boolean;
  /** History's "Open in Editor Tab" button on each chat. */
  openInTab?: (sessionId: string) => void;
}

/** A tab's chat is not brought back after a reload: nothing of it is remembered in the workspace state. */
const FORGETFUL: vscode.Memento = { keys: () => [], get: () => undefined, update: async () => undefined };

/** One handler per webview message type, each given its own message: a missing one is a compile error. */
type Handlers = { [K in WebviewToHost['type']]: (m: Extract<WebviewToHost, { type: K }>, webview: vscode.Webview) => unknown };

export class ChatController implements vscode.Disposable {
  readonly transcript = new Transcript((p) => vscode.workspace.asRelativePath(p, false));
  private readonly hub = new WebviewHub();
  private readonly notices = new Notices(this.hub, () => this.transcript.messages.length);
  private readonly outgoing = new OutgoingContext(this.hub);
  private readonly approvals = new Approvals(this.hub, this.transcript);
  private readonly compaction: ChatCompaction;
  private readonly session: SessionLink;
  private readonly history: ChatHistory;
  private readonly turns: Turns;
  private readonly setup = new ModelSetup(this.hub, this.transcript);
  private readonly commands: SlashCommands;
  private contextFigure: ContextFigureLine | undefined;
  /** Every chat (the side bar's and each tab's) shows or hides its chips the moment the setting changes. */
  private readonly settingWatch = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('qwen.chat.showContextChanges')) this.hub.broadcast({ type: 'showContextChanges', show: showContextChanges() });
  });
  /** Called after a proposed skill was saved (the Skills view refreshes). */
  onSkillSaved: (() => void) | undefined;
  /** qwen/suggestion (the chip above the composer) and qwen/skillProposed (cards with Accept / Discard). */
  private readonly followups = new Followups(
    async (type, params) => {
      const client = await this.server.ready();
      if (!client) throw new Error('Client is not running');
      return client.sendRequest(type, params);
    },
    {
      chat: () => ({ sessionId: this.transcript.sessionId, running: this.transcript.running }),
      suggestion: (suggestion) => this.hub.broadcast({ type: 'suggestion', suggestion }),
      proposals: (proposals) => this.hub.broadcast({ type: 'skillProposals', proposals }),
      notice: (text, file) => this.notices.add({ text, ...(file ? { uri: vscode.Uri.file(file).toString(), openLabel: 'Open skill' } : {}) }),
      skillSaved: () => this.onSkillSaved?.(),
    },
    (p) => vscode.workspace.asRelativePath(p, false),
  );

  private readonly handlers: Handlers = {
    ready: async (_m, webview) => {
      this.hub.add(webview);
      const restored = this.session.restoreOnce();
      // While the server starts (seconds after a reload) the panel shows what is known at once:
      // the header, the composer, and that the last chat is on its way.
      if (this.session.restoring) this.hub.post(webview, this.snapshot());
      await restored;
      await this.setup.current();
      this.hub.post(webview, this.snapshot());
      await this.commands.publish(webview);
    },
    send: (m) => this.turns.send(m.prompt),
    stop: () => this.turns.stop(),
    newChat: () => this.newChat(),
    compact: (m) => this.compaction.run(m.mode === 'fast' ? 'fast' : 'full'),
    showHistory: () => this.history.show(),
    showContext: () => vscode.commands.executeCommand('qwen.showContext'),
    copy: (m) => vscode.env.clipboard.writeText(m.text),
    insert: (m) => this.outgoing.insertAtCursor(m.text),
    attachSelection: () => this.outgoing.attachSelection(),
    attachFile: () => this.outgoing.attachFile(),
    removeAttachment: (m) => this.outgoing.remove(m.index),
    dismissNotice: (m) => this.notices.dismiss(m.id),
    openNotice: (m) => this.notices.open(m.id),
    openLink: (m) => openLink(m.href, (line) => this.server.output.appendLine(line)),
    openContextChange: (m) => openSources(this.transcript.changeSources(m.id, m.index)),
    action: (m) => runErrorAction(m.action, { retry: () => this.turns.retry(), showLog: () => this.server.output.show(true) }),
    approvalReply: (m) => this.approvals.reply(m.id, m.optionId, m.reason),
    acceptSuggestion: (m) => this.turns.acceptSuggestion(m.id),
    dismissSuggestion: (m) => this.followups.dismiss(m.id),
    skillProposalReply: (m) => this.followups.answerProposal(m.id, m.accept),
    toggleEditorContext: () => this.outgoing.toggleEditorContext(),
    setApprovalMode: (m) => this.approvals.setMode(m.mode),
    completeFiles: (m, webview) => this.commands.completeFiles(m.query, webview),
    attachPath: (m) => this.outgoing.attachPath(m.path),
    pasteImage: async (m) => {
      const client = await this.server.ready();
      if (client) await this.outgoing.paste(client, m.data);
    },
  };

  /** `tab`: a chat of its own in an editor tab (not restored after a reload, its session made before its first message). */
  constructor(
    context: vscode.ExtensionContext,
    private readonly server: ServerManager,
    private readonly options: ChatOptions = {},
  ) {
    this.compaction = new ChatCompaction(this.hub, this.transcript, server);
    this.commands = new SlashCommands(this.hub, server);
    this.session = new SessionLink(options.tab ? FORGETFUL : context.workspaceState, this.transcript, server, () => this.compaction.publish());
    const reshow = (): void => this.hub.broadcast(this.snapshot());
    this.history = new ChatHistory(this.transcript, server, this.session, {
      leaving: () => {
        this.followups.clear(true);
        this.notices.clear();
      },
      shown: reshow,
      deletedOpen: () => this.newChat(false),
      ...(options.openInTab ? { openInTab: options.openInTab } : {}),
    });
    this.turns = new Turns({ hub: this.hub, transcript: this.transcript, server, session: this.session, outgoing: this.outgoing, followups: this.followups, approvals: this.approvals, reshow, answered: () => void this.setup.turnAnswered(), commandDone: (r) => this.commandDone(r), note: (text) => void this.notices.add({ text }), ...(options.tab ? { ownSession: true } : {}) });
  }

  /** What a slash command changed beyond its message: `/clear` opens a new chat, `/resume <id>` shows the reopened one. */
  private commandDone(r: CommandResult): void {
    if (r.status !== 'done') return;
    if (r.command === 'clear') this.newChat();
    else if (r.command === 'resume' && r.resumed) {
      this.followups.clear(true);
      this.notices.clear();
      this.transcript.load(r.resumed);
      this.session.remember(r.resumed.promptTokens);
      this.hub.broadcast(this.snapshot());
    } else if (r.command === 'compress') void this.compaction.publish();
  }

  /** Reads the welcome's steps (src/setup.ts, set by the extension's entry point). */
  set readSetup(read: (() => Promise<SetupState>) | undefined) {
    this.setup.read = read;
  }

  /** Called after a compaction made the model's history smaller (the Context view refreshes). */
  set onCompacted(fn: (() => void) | undefined) {
    this.compaction.onCompacted = fn;
  }

  /** Called when the chat shown changes or a turn ends (the context figure follows it), with a resumed chat's recorded prompt size. */
  set onChatShown(fn: ((sessionId: string | undefined, promptTokens?: number) => void) | undefined) {
    this.session.onChatShown = fn;
  }

  /** A new client (called before it starts); its notifications reach this chat through the ChatRouter (src/chat/router.ts). */
  bindClient(client: LanguageClient): void {
    this.commands.forget();
    if (!this.options.tab) this.outgoing.bind(client); // the window's editor context is told once, by the side bar's chat
  }

  /** How surely a chat event belongs to this chat's running turn (Transcript.owns). */
  owns(ev: ChatEvent): number {
    return this.transcript.owns(ev);
  }

  onChatEvent(ev: ChatEvent): void {
    const patch = this.transcript.apply(ev);
    if (patch) this.hub.patches.push(patch);
  }

  askPermission(params: PermissionParams, token: vscode.CancellationToken): Promise<PermissionAnswer> {
    return this.approvals.ask(params, token);
  }

  onSuggestion(p: SuggestionNotice): void {
    this.followups.onSuggestion(p);
  }

  onSkillProposed(p: SkillProposed): void {
    this.followups.onSkillProposed(p);
  }

  /** Shows the webview's messages in this chat; the webview asks for a snapshot when it loads. */
  attach(webview: vscode.Webview): vscode.Disposable {
    const sub = webview.onDidReceiveMessage((m: WebviewToHost) => this.onMessage(webview, m));
    return new vscode.Disposable(() => {
      sub.dispose();
      this.hub.delete(webview);
    });
  }

  /** A view was hidden: VS Code cannot post to it, so stop trying; its reload asks for a snapshot. */
  detachHidden(webview: vscode.Webview): void {
    this.hub.delete(webview);
  }

  private async onMessage(webview: vscode.Webview, m: WebviewToHost): Promise<void> {
    const handle = this.handlers[m.type] as (m: WebviewToHost, webview: vscode.Webview) => unknown;
    await handle(m, webview);
  }

  private snapshot(): HostToWebview {
    const approval = this.approvals.pending;
    const suggestion = this.followups.suggestion;
    const skillProposals = this.followups.proposals;
    const editorContext = this.outgoing.editorContextChip;
    const setup = this.setup.known;
    return {
      type: 'snapshot',
      snapshot: this.transcript.snapshot({
        attachments: this.outgoing.chips,
        notices: this.notices.current,
        compact: this.compaction.state(),
        approvalMode: this.approvals.mode(),
        ...(approval ? { approval } : {}),
        ...(suggestion ? { suggestion } : {}),
        ...(skillProposals.length ? { skillProposals } : {}),
        ...(editorContext ? { editorContext } : {}),
        ...(this.contextFigure ? { contextFigure: this.contextFigure } : {}),
        ...(setup ? { setup } : {}),
        ...(this.session.restoring ? { restoring: true } : {}),
        showContextChanges: showContextChanges(),
      }),
    };
  }

  /** The shared context figure (src/contextFigure.ts), shown under the composer. */
  showContextFigure(figure: ContextFigureLine | undefined): void {
    this.contextFigure = figure;
    this.hub.broadcast({ type: 'contextFigure', figure: figure ?? null });
  }

  /** Called when `qwen.tools.approvalMode` changed, from the picker or the Settings editor. */
  approvalModeChanged(): void {
    this.approvals.modeChanged();
  }

  compact(mode: CompressMode = 'full'): Promise<void> {
    return this.compaction.run(mode);
  }

  send(prompt: string): Promise<void> {
    return this.turns.send(prompt);
  }

  acceptSuggestion(id: string): Promise<void> {
    return this.turns.acceptSuggestion(id);
  }

  serverStateChanged(state: ServerState): Promise<void> {
    return this.setup.serverStateChanged(state);
  }

  /** Settings or the API key changed: the welcome's steps are read again. */
  refreshSetup(): Promise<void> {
    return this.setup.refresh();
  }

  /** `qwen.model.*` changed: the welcome's steps are read again, its test step open until the next answer. */
  modelSettingsChanged(): Promise<void> {
    return this.setup.modelChanged();
  }

  stop(): void {
    this.turns.stop();
  }

  /** `focus`: the caret goes to the composer (not when History's delete cleared the chat: the list stays open). */
  newChat(focus = true): void {
    if (this.transcript.running) this.turns.stop();
    this.followups.clear(true);
    this.hub.patches.discard();
    this.transcript.reset();
    this.notices.clear(); // a notice sits in the transcript of the chat where it happened
    this.session.remember();
    this.hub.broadcast(this.snapshot());
    if (focus) this.hub.broadcast({ type: 'focusComposer' });
  }

  listSessions(): Promise<SessionListItem[]> {
    return this.history.list();
  }

  resume(sessionId: string): Promise<void> {
    return this.history.resume(sessionId);
  }

  deleteSession(sessionId: string): Promise<void> {
    return this.history.delete(sessionId);
  }

  showHistory(): Promise<void> {
    return this.history.show();
  }

  attachSelection(): void {
    this.outgoing.attachSelection();
  }

  attachFile(): void {
    this.outgoing.attachFile();
  }

  pickFiles(): Promise<void> {
    return this.outgoing.pickFiles();
  }

  onSkillsChanged(p: SkillsChanged): void {
    this.notices.skillsChanged(p);
  }

  onMemoryChanged(p: MemoryChanged): void {
    this.notices.memoryChanged(p);
  }

  dispose(): void {
    this.settingWatch.dispose();
    this.turns.cancel();
    this.approvals.dispose();
    this.hub.patches.discard();
    this.outgoing.dispose();
  }
}
