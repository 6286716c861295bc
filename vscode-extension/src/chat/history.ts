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
  /** Opens a chat in a new editor tab (each History row then has a button for it). */
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

  /**
   * History as a quick pick, as Copilot Chat has it: it fits any side-bar width (titles whole, no
   * horizontal scrolling), filters as you type, and each row has a Delete button and, where chats
   * open in editor tabs, an "Open in Editor Tab" button. Picking a chat resumes it here, with no
   * second question; deleting one keeps the list open.
   */
  async show(): Promise<void> {
    const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { sessionId: string }>();
    qp.title = 'Qwen: Chat History';
    qp.placeholder = 'Pick a chat to resume; type to filter';
    qp.matchOnDescription = true;
    const remove: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete chat' };
    const openInTab = this.hooks.openInTab;
    const inTab: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('link-external'), tooltip: 'Open in Editor Tab' };
    const buttons = openInTab ? [inTab, remove] : [remove];
    const fill = async (): Promise<void> => {
      qp.busy = true;
      const sessions = await this.list();
      qp.items = sessions.map((s) => ({
        sessionId: s.sessionId,
        label: s.title || '(untitled)',
        description: `${s.sessionId === this.transcript.sessionId ? 'current · ' : ''}${s.messageCount} messages · ${new Date(s.updatedAt).toLocaleString()}`,
        buttons,
      }));
      if (!sessions.length) qp.placeholder = 'No saved chats yet';
      qp.busy = false;
    };
    qp.onDidTriggerItemButton(async (e) => {
      if (e.button === inTab && openInTab) {
        qp.hide();
        openInTab(e.item.sessionId);
        return;
      }
      await this.delete(e.item.sessionId);
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
}
