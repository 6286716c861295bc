/**
 * Chat history: the saved sessions as a quick pick (resume, delete), and what resuming one does
 * to the panel.
 */
import * as vscode from 'vscode';
import { describeError } from '../errors';
import { requests } from '../rpc.generated';
import type { ServerManager } from '../server';
import type { SessionListItem } from '../shared/protocol';
import type { Transcript } from '../transcript';
import type { SessionLink } from './session';

export interface HistoryHooks {
  /** Another chat is shown: what belonged to the previous one (suggestion, notices) goes. */
  leaving(): void;
  /** The transcript changed as a whole: the views get a snapshot. */
  shown(): void;
  /** The open chat was deleted. */
  deletedOpen(): void;
  /** Opens a chat in a new editor tab (History asks where a picked chat opens when this is set). */
  openInTab?: (sessionId: string) => void;
}

export class ChatHistory {
  constructor(
    private readonly transcript: Transcript,
    private readonly server: ServerManager,
    private readonly session: SessionLink,
    private readonly hooks: HistoryHooks,
  ) {}

  async list(): Promise<SessionListItem[]> {
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
      if (r.sessionId !== this.transcript.sessionId) this.hooks.leaving();
      this.transcript.load(r);
      this.session.usedWith(client);
      this.session.remember(r.promptTokens);
      this.hooks.shown();
    } catch (err) {
      void vscode.window.showErrorMessage(describeError(err).message);
    }
  }

  async delete(sessionId: string): Promise<void> {
    const client = await this.server.ready();
    if (!client) return;
    try {
      await client.sendRequest(requests.sessionsDelete, { sessionId });
      if (this.transcript.sessionId === sessionId) this.hooks.deletedOpen();
    } catch (err) {
      void vscode.window.showErrorMessage(describeError(err).message);
    }
  }

  /** Where a picked chat opens: here, or (with an editor-tab opener) in a new editor tab, as the user chooses. */
  private async open(sessionId: string): Promise<void> {
    const openInTab = this.hooks.openInTab;
    if (!openInTab) return this.resume(sessionId);
    const here = 'Open here';
    const tab = 'Open in a new editor tab';
    const where = await vscode.window.showQuickPick([here, tab], { title: 'Qwen: Open chat', placeHolder: 'Where should the chat open?' });
    if (where === here) await this.resume(sessionId);
    else if (where === tab) openInTab(sessionId);
  }

  /**
   * History as a quick pick, as Copilot Chat has it: it fits any side-bar width (titles whole, no
   * horizontal scrolling), filters as you type, and each row has a Delete button. Picking a chat
   * resumes it; deleting one keeps the list open.
   */
  async show(): Promise<void> {
    const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { sessionId: string }>();
    qp.title = 'Qwen: Chat History';
    qp.placeholder = 'Pick a chat to resume; type to filter';
    qp.matchOnDescription = true;
    const remove: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete chat' };
    const fill = async (): Promise<void> => {
      qp.busy = true;
      const sessions = await this.list();
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
      await this.delete(e.item.sessionId);
      await fill();
    });
    qp.onDidAccept(() => {
      const pick = qp.selectedItems[0];
      qp.hide();
      if (pick) void this.open(pick.sessionId);
    });
    qp.onDidHide(() => qp.dispose());
    qp.show();
    await fill();
  }
}
