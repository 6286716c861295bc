/**
 * Several chats in one window: the side bar's and one per editor tab opened with "New Chat in
 * Editor Tab", each with its own session, stream and approvals. The server's notifications and
 * questions reach the chat they belong to: a streamed event the chat whose running turn it is (by
 * its turn, else by its session: a tab's chat has its session before its first message), a
 * permission question and a suggestion the chat of their session.
 */
import type * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { ChatController } from '../chatController';
import { notifications, permissionRequest } from '../rpc.generated';

export class ChatRouter {
  private readonly chats = new Set<ChatController>();
  private client: LanguageClient | undefined;

  constructor(readonly main: ChatController) {
    this.chats.add(main);
  }

  /** A chat in a tab; it is bound to the running client at once. */
  add(chat: ChatController): void {
    this.chats.add(chat);
    if (this.client) chat.bindClient(this.client);
  }

  remove(chat: ChatController): void {
    if (chat !== this.main) this.chats.delete(chat);
  }

  /** A new client (called before it starts). */
  bindClient(client: LanguageClient): void {
    this.client = client;
    for (const chat of this.chats) chat.bindClient(client);
    client.onNotification(notifications.chatEvent, (ev) => {
      let best: ChatController | undefined;
      let sure = 0;
      for (const chat of this.chats) {
        const s = chat.owns(ev);
        if (s > sure) [best, sure] = [chat, s];
      }
      best?.onChatEvent(ev);
    });
    client.onRequest(permissionRequest, (params, token: vscode.CancellationToken) => this.bySession(params.sessionId).askPermission(params, token));
    client.onNotification(notifications.suggestion, (p) => this.bySession(p.sessionId).onSuggestion(p));
    client.onNotification(notifications.skillProposed, (p) => this.main.onSkillProposed(p));
  }

  private bySession(sessionId: string): ChatController {
    for (const chat of this.chats) if (chat.transcript.sessionId === sessionId) return chat;
    return this.main;
  }
}
