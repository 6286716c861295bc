/**
 * Approvals: the server's qwen/permission questions (the card above the composer, the proposed
 * change in the diff editor) and the approval-mode picker that decides which calls ask at all.
 */
import * as vscode from 'vscode';
import { DiffEditorUi } from '../diffEditor';
import { PermissionBroker } from '../permission';
import { stricterValue } from '../settings';
import { APPROVAL_MODES } from '../shared/messages';
import type { ApprovalModeName, ApprovalRequest } from '../shared/messages';
import type { PermissionAnswer, PermissionParams } from '../shared/protocol';
import type { Transcript } from '../transcript';
import type { WebviewHub } from './hub';

export class Approvals implements vscode.Disposable {
  private readonly diffs = new DiffEditorUi();
  private readonly broker: PermissionBroker;

  constructor(
    private readonly hub: WebviewHub,
    private readonly transcript: Transcript,
  ) {
    this.broker = new PermissionBroker(
      {
        card: (approval) => {
          this.hub.patches.flush(); // the tool card the question is about goes out first
          this.hub.broadcast({ type: 'approval', approval });
        },
        openDiff: this.diffs.openDiff,
      },
      (p) => vscode.workspace.asRelativePath(p),
    );
  }

  get pending(): ApprovalRequest | undefined {
    return this.broker.current;
  }

  /**
   * The server asks before a write or a command of the running turn. A question for any other
   * chat (one this window no longer shows) is denied: nobody could see what they would approve.
   */
  ask(params: PermissionParams, token: vscode.CancellationToken): Promise<PermissionAnswer> {
    const sid = this.transcript.sessionId;
    if (!this.transcript.running || this.transcript.stopping || (sid !== undefined && params.sessionId !== sid)) {
      return Promise.resolve({ decision: 'deny', reason: 'The chat this request belongs to is not open in the editor.' });
    }
    return this.broker.ask(params, token);
  }

  reply(id: string, optionId: string, reason?: string): void {
    this.broker.reply(id, optionId, reason);
  }

  /** Stop or a closed window: every open question is denied (the server withdraws them too). */
  denyAll(): void {
    this.broker.denyAll();
  }

  /** The picker's mode: `qwen.tools.approvalMode` as VS Code has it, `default` when unset or unknown. */
  mode(): ApprovalModeName {
    // What the server applies: the user's mode, or a workspace value only when it is stricter (settings.ts).
    const value = stricterValue(vscode.workspace.getConfiguration('qwen').inspect('tools.approvalMode') ?? {});
    return APPROVAL_MODES.find((m) => m.mode === value)?.mode ?? 'default';
  }

  /**
   * The picker writes the user's setting (every workspace, as Qwen Code's `/approval-mode` does for
   * the session); the server gets it with the other `qwen.*` settings and applies it from the next call.
   */
  async setMode(mode: ApprovalModeName): Promise<void> {
    if (!APPROVAL_MODES.some((m) => m.mode === mode)) return;
    await vscode.workspace.getConfiguration('qwen').update('tools.approvalMode', mode, vscode.ConfigurationTarget.Global);
  }

  /** Called when `qwen.tools.approvalMode` changed, from the picker or the Settings editor. */
  modeChanged(): void {
    this.hub.broadcast({ type: 'approvalMode', mode: this.mode() });
  }

  dispose(): void {
    this.broker.denyAll();
    this.diffs.dispose();
  }
}
