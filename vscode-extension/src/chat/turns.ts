/**
 * Turns of the chat: the user's message (typed, a Retry, an accepted follow-up suggestion), the
 * streaming answer, Stop through the request's CancellationToken, then the final message.
 */
import * as vscode from 'vscode';
import { describeError, isCancelled } from '../errors';
import { acceptSuggestionTurn } from '../followups';
import type { AcceptOutcome, Followups } from '../followups';
import { requests } from '../rpc.generated';
import type { Send } from '../rpc.generated';
import type { ServerManager } from '../server';
import type { ChatParams, CommandResult } from '../shared/protocol';
import { runCommand } from './commands';
import { isSlashCommand } from '../shared/slash';
import type { Transcript } from '../transcript';
import type { Approvals } from './approvals';
import type { Outgoing } from './outgoing';
import type { WebviewHub } from './hub';
import type { OutgoingContext } from './outgoing';
import type { SessionLink } from './session';

type Outcome = Parameters<Transcript['end']>[0] & AcceptOutcome;

export interface TurnParts {
  hub: WebviewHub;
  transcript: Transcript;
  server: ServerManager;
  session: SessionLink;
  outgoing: OutgoingContext;
  followups: Followups;
  approvals: Approvals;
  /** The transcript changed as a whole (a Retry took a turn back): the views get a snapshot. */
  reshow: () => void;
  /** A turn ended with an answer (the welcome's test step is done). */
  answered: () => void;
  /** A slash command finished: what it changed beyond its message (a new chat, a reopened one). */
  commandDone: (result: CommandResult) => void;
  /** A command's own words when it also ran a turn ("Empty QWEN.md created…"), shown as a notice. */
  note: (text: string) => void;
  /**
   * A chat in an editor tab gets its session before its first message (from `/clear`), so its
   * streamed events are told apart from another new chat's by their session (src/chat/router.ts).
   */
  ownSession?: boolean;
}


export class Turns {
  private cts: vscode.CancellationTokenSource | undefined;
  /** What went along with the last message sent (its attachments, a left-out editor context): a Retry of
   * that turn sends them again, as the failed turn had them (a pasted image refused by a text-only
   * model is sent again after /model, not silently dropped). */
  private lastSent: Outgoing | undefined;

  constructor(private readonly p: TurnParts) {}

  /** `retry`: the prompt is a Retry of the chat's failed last turn, which the server takes back first (ChatParams.retry). */
  async send(prompt: string, retry = false): Promise<void> {
    const { transcript, followups, outgoing } = this.p;
    if (transcript.running || !prompt.trim()) return;
    followups.clear(false); // the server aborts the suggestion's speculation on any new qwen/chat
    if (isSlashCommand(prompt.trim())) return this.command(prompt.trim());
    const sent = retry && this.lastSent ? this.lastSent : outgoing.take();
    this.lastSent = sent;
    const { attachments, leaveOutEditorContext } = sent;
    await this.run(prompt, async (send) => {
      const params: ChatParams = {
        prompt,
        ...(transcript.sessionId ? { sessionId: transcript.sessionId } : {}),
        ...(attachments.length ? { attachments } : {}),
        ...(leaveOutEditorContext ? { editorContext: false } : {}),
        ...(retry ? { retry: true } : {}),
      };
      const r = await send(requests.chat, params);
      return { sessionId: r.sessionId, text: r.text, cancelled: r.finishReason === 'cancelled' };
    });
  }

  /** A slash command: its result is the answer's text, or the turn it ran streams as any other. */
  private async command(line: string): Promise<void> {
    this.lastSent = undefined;
    let done: CommandResult | undefined;
    await this.run(line, async (send) => {
      const r = (done = await runCommand(send, line, this.p.transcript.sessionId));
      if (r.chat) {
        if (r.text) this.p.note(r.text);
        return { sessionId: r.chat.sessionId, text: r.chat.text };
      }
      if (r.status === 'error') return { error: { kind: 'unknown', message: r.text, actions: [] } };
      return { text: r.text };
    });
    if (done) this.p.commandDone(done);
  }

  /**
   * Tab / Enter on the suggestion chip: the suggestion runs as a turn of this chat (its text is
   * the user's message); see acceptSuggestionTurn. A stale id (replaced meanwhile) does nothing.
   */
  async acceptSuggestion(id: string): Promise<void> {
    const sessionId = this.p.transcript.sessionId;
    if (this.p.transcript.running || !sessionId) return;
    const s = this.p.followups.take(id);
    if (!s) return;
    this.lastSent = undefined;
    await this.run(s.text, (send) => acceptSuggestionTurn(send, s.id));
  }

  /**
   * Retry sends the failed prompt again in place of the failed turn, on the server too (the failed
   * turn leaves the session, so the prompt is sent and reopened once); an older failed turn's Retry
   * does nothing.
   */
  async retry(): Promise<void> {
    const prompt = this.p.transcript.takeBackFailedTurn();
    if (!prompt) return;
    this.p.reshow();
    await this.send(prompt, true);
  }

  /** Stop: the request is cancelled through its token ($/cancelRequest); the partial answer stays. */
  stop(): void {
    if (!this.cts) return;
    this.p.hub.patches.flush();
    this.p.transcript.stop();
    this.p.approvals.denyAll(); // the server withdraws them too; the card goes at once
    this.cts.cancel();
  }

  /** The window closes: a running request is cancelled. */
  cancel(): void {
    this.cts?.cancel();
  }

  private async run(prompt: string, request: (send: Send) => Promise<Outcome>): Promise<void> {
    const { hub, transcript, server, session } = this.p;
    const [user, assistant] = transcript.begin(prompt);
    hub.broadcast({ type: 'message', message: user });
    hub.broadcast({ type: 'message', message: assistant });
    hub.broadcast({ type: 'running', running: true });
    void vscode.commands.executeCommand('setContext', 'qwen.chatRunning', true);
    const cts = (this.cts = new vscode.CancellationTokenSource());
    let outcome: Outcome;
    const client = await server.ready();
    if (!client) {
      outcome = { error: describeError(new Error('Client is not running'), server.failure) };
    } else {
      try {
        await session.reopen(client);
        if (this.p.ownSession && !transcript.sessionId) transcript.sessionId = (await client.sendRequest(requests.command, { text: '/clear' })).sessionId;
        outcome = await request((type, params) => client.sendRequest(type, params, cts.token));
      } catch (err) {
        outcome = isCancelled(err) || cts.token.isCancellationRequested ? { cancelled: true } : { error: describeError(err, server.failure) };
      } finally {
        session.usedWith(client); // a failed turn names its session too (in its events), unsaved
      }
    }
    cts.dispose();
    this.cts = undefined;
    hub.patches.flush(); // everything streamed goes out before the final message
    const final = transcript.end(outcome);
    if (final && !final.error && !final.interrupted) this.p.answered();
    session.remember();
    if (final) hub.broadcast({ type: 'message', message: final });
    hub.broadcast({ type: 'running', running: false });
    void vscode.commands.executeCommand('setContext', 'qwen.chatRunning', false);
  }
}
