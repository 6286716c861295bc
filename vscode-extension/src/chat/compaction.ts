/**
 * The panel's Compact: qwen/compress for the open chat, its "Compacting…" status line and the
 * state the Compact button and command follow.
 */
import * as vscode from 'vscode';
import { compactErrorText, compactingText, compactSession } from '../compaction';
import type { ServerManager } from '../server';
import type { CompactState } from '../shared/messages';
import type { CompressMode } from '../shared/protocol';
import type { Transcript } from '../transcript';
import type { WebviewHub } from './hub';

export class ChatCompaction {
  /** The "Compacting…" status line while qwen/compress runs. */
  private line: string | undefined;
  /** Called after a compaction made the model's history smaller (the Context view refreshes). */
  onCompacted: (() => void) | undefined;

  constructor(
    private readonly hub: WebviewHub,
    private readonly transcript: Transcript,
    private readonly server: ServerManager,
  ) {}

  /** Compact needs a session with an answer in it: a failed turn (e.g. no model configured) leaves nothing to compact. */
  state(): CompactState {
    const answered = this.transcript.messages.some((m) => m.role === 'assistant' && !m.error && (m.text || m.tools?.length));
    return { available: !!this.transcript.sessionId && answered, compacting: this.line !== undefined };
  }

  /** The panel's Compact button and the command's enablement follow the session and the running compaction. */
  publish(): void {
    const state = this.state();
    this.hub.broadcast({ type: 'compactState', state });
    void vscode.commands.executeCommand('setContext', 'qwen.hasSession', state.available);
    void vscode.commands.executeCommand('setContext', 'qwen.compacting', state.compacting);
  }

  /**
   * The transcript is kept (only the model's copy is compacted); a status line says "Compacting…"
   * and then the result, in place. The composer stays usable: a message sent meanwhile waits on the
   * server for the compaction to finish.
   */
  async run(mode: CompressMode = 'full'): Promise<void> {
    if (this.line !== undefined) return;
    const sessionId = this.transcript.sessionId;
    if (!sessionId) return void vscode.window.showInformationMessage('Start a chat first: there is nothing to compact yet.');
    const line = this.transcript.addStatus(compactingText(mode), { pending: true });
    this.line = line.id;
    this.hub.broadcast({ type: 'message', message: line });
    this.publish();
    const client = await this.server.ready();
    const outcome = client
      ? await compactSession((type, params) => client.sendRequest(type, params), sessionId, mode)
      : compactErrorText(new Error('Client is not running'));
    this.line = undefined;
    const settled = this.transcript.settleStatus(line.id, outcome.text, outcome.tone);
    if (settled) this.hub.broadcast({ type: 'message', message: settled });
    this.publish();
    if (outcome.compacted) this.onCompacted?.();
  }
}
