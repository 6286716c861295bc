/**
 * Which server session the open chat is: remembered per workspace so a window reload brings it
 * back, and re-opened on a restarted server (which knows only the sessions saved on disk).
 */
import type * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { describeError } from '../errors';
import { requests } from '../rpc.generated';
import type { ServerManager } from '../server';
import type { Transcript } from '../transcript';

const SESSION_KEY = 'qwen.sessionId';

export class SessionLink {
  /** The client the open session was last used with (see reopen). */
  private client: LanguageClient | undefined;
  private restored: Promise<void> | undefined;
  /** restoreOnce is bringing a saved chat back. */
  restoring = false;
  /** Called when the chat shown changes or a turn ends (the context figure follows it), with a resumed chat's recorded prompt size. */
  onChatShown: ((sessionId: string | undefined, promptTokens?: number) => void) | undefined;

  /** `changed`: the session shown changed (the Compact state follows it). */
  constructor(
    private readonly state: vscode.Memento,
    private readonly transcript: Transcript,
    private readonly server: ServerManager,
    private readonly changed: () => void,
  ) {}

  /** The open session was last used with `client` (a turn, a resume). */
  usedWith(client: LanguageClient): void {
    this.client = client;
  }

  /** Saves which chat is open and tells whoever follows it. */
  remember(promptTokens?: number): void {
    void this.state.update(SESSION_KEY, this.transcript.sessionId);
    this.changed();
    this.onChatShown?.(this.transcript.sessionId, promptTokens);
  }

  /** After a window reload: the transcript of the last session comes back from the server, once. */
  restoreOnce(): Promise<void> {
    return (this.restored ??= (async () => {
      const id = this.state.get<string>(SESSION_KEY);
      if (!id || this.transcript.sessionId || this.transcript.messages.length) return;
      this.restoring = true;
      const client = await this.server.ready();
      if (!client) return void (this.restoring = false);
      try {
        // A window reload brings back the chat the user was in: no recap (it would cost a model request each time).
        const r = await client.sendRequest(requests.sessionsResume, { sessionId: id, recap: false });
        if (!this.transcript.messages.length) this.transcript.load(r);
        this.onChatShown?.(this.transcript.sessionId, r.promptTokens);
        this.client = client;
      } catch {
        void this.state.update(SESSION_KEY, undefined); // deleted or unreadable: start fresh
      }
      this.restoring = false;
      this.changed();
    })());
  }

  /**
   * After a server restart: the open chat continues on the new server. A session saved on disk is
   * found there (sessions/resume without a recap only checks it); one that never got a record (its
   * only turns failed, e.g. before a model was configured) is gone, so the next message starts a
   * new session and the panel keeps the transcript.
   */
  async reopen(client: LanguageClient): Promise<void> {
    const sessionId = this.transcript.sessionId;
    if (!sessionId || this.client === client) return;
    try {
      await client.sendRequest(requests.sessionsResume, { sessionId, recap: false });
    } catch (err) {
      if (describeError(err).kind !== 'not_found') throw err;
      this.transcript.sessionId = undefined;
    }
    this.client = client;
  }
}
