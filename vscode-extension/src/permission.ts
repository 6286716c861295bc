/**
 * The host side of qwen/permission: the server asks before a write or a shell command;
 * the chat shows the approval card above the composer and, for a file change, VS Code's diff
 * editor beside it. Pure (no vscode import) so the whole life of a request is unit-tested with a
 * fake UI; src/diffEditor.ts is the real diff editor.
 *
 * One request is on screen at a time (the card shows one); others wait in arrival order. A
 * request ends exactly once, by whichever comes first:
 *  - the card's answer (Allow / Allow always / Deny with an optional reason);
 *  - the user closing the diff tab, which is a Deny (they looked and walked away);
 *  - the server withdrawing it ($/cancelRequest when the turn is cancelled): the card goes and
 *    the diff closes, and the answer is ignored by the server;
 *  - the chat going away (new chat, window closing): Deny.
 *
 * An approval never shows less than it approves: a file change can be allowed only once the diff
 * editor has it open whole (until then the card's `hold` says why Allow is off, and a reply of
 * Allow is ignored); a diff that is not whole (cut short, malformed) can only be denied.
 */
import type { ApprovalOption, ApprovalRequest } from './shared/messages';
import type { PermissionDecision, PermissionParams, PermissionAnswer } from './shared/protocol';
import { shownTitle, visible } from './shared/visibleText';
import { diffIsWhole, diffStats } from './unifiedDiff';

/** The server keeps at most this much of a reason (docs/protocol.md). */
export const MAX_REASON_CHARS = 2000;

export const PERMISSION_OPTIONS: readonly ApprovalOption[] = [
  { id: 'allow', label: 'Allow', kind: 'allow' },
  { id: 'allowAlways', label: 'Allow always (this chat)', kind: 'allow' },
  { id: 'deny', label: 'Deny', kind: 'reject' },
];

/** Past this many changed lines the card says the change is large and to read it in the diff editor. */
export const LARGE_CHANGE_LINES = 200;

export const HOLD_OPENING = 'Allow is available once the whole change is open in the diff editor.';
export const HOLD_NOT_SHOWN =
  'The whole change could not be shown (the diff editor did not open it), so it cannot be allowed from here. Deny, and ask for it in smaller steps.';
export const HOLD_CUT = 'The proposed change arrived incomplete (its diff was cut or is malformed), so it cannot be allowed from here. Deny, and ask for it in smaller steps.';

/** The subset of vscode's / vscode-jsonrpc's CancellationToken used here. */
export interface Cancellation {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}

export interface DiffView {
  /** Closes the diff tab without counting it as the user's Deny. */
  close(): void;
}

export interface PermissionUi {
  /** Shows the card for `request`, or removes it (null). */
  card(request: ApprovalRequest | null): void;
  /** Opens the proposed change beside the chat; `onClosed` fires when the user closes it. Undefined: nothing to show. */
  openDiff(params: PermissionParams, onClosed: () => void): Promise<DiffView | undefined>;
}

/** The card for a request; `relative` turns the absolute path into the one people read. */
export function approvalRequestFor(id: string, params: PermissionParams, relative: (path: string) => string = (p) => p): ApprovalRequest {
  let detail: string | undefined;
  // A command's card is titled with the command itself (never a description the model wrote),
  // and every hidden character in it is written out (src/shared/visibleText.ts).
  let title = params.title ? visible(params.title) : `Run ${visible(params.tool)}?`;
  let hold: string | undefined;
  if (params.command !== undefined) {
    title = shownTitle('Run: ', params.command);
    detail = `$ ${visible(params.command, 'lines')}`;
  } else if (params.path !== undefined) {
    detail = visible(relative(params.path));
    if (params.diff !== undefined) {
      const { added, removed } = diffStats(params.diff);
      const large = added + removed > LARGE_CHANGE_LINES;
      detail += large
        ? ` (+${added} −${removed}): too large to show here; it opens whole in the diff editor, read it there`
        : ` (+${added} −${removed}), shown in the diff editor`;
      hold = diffIsWhole(params.diff) ? HOLD_OPENING : HOLD_CUT;
    }
  }
  const options = PERMISSION_OPTIONS.filter((o) => hold !== HOLD_CUT || o.kind === 'reject');
  return {
    id,
    title,
    ...(detail !== undefined ? { detail } : {}),
    ...(params.directory ? { directory: visible(params.directory) } : {}),
    ...(params.alwaysCovers && options.some((o) => o.id === 'allowAlways') ? { covers: visible(params.alwaysCovers) } : {}),
    ...(hold ? { hold } : {}),
    options,
  };
}

/** The answer for a card option; anything unknown is a Deny, and only a Deny carries a reason. */
export function decisionFor(optionId: string, reason?: string): PermissionAnswer {
  const decision: PermissionDecision = optionId === 'allow' || optionId === 'allowAlways' ? optionId : 'deny';
  const why = decision === 'deny' ? reason?.trim().slice(0, MAX_REASON_CHARS) : undefined;
  return why ? { decision, reason: why } : { decision };
}

interface Pending {
  request: ApprovalRequest;
  params: PermissionParams;
  resolve: (r: PermissionAnswer) => void;
  diff?: DiffView;
  done: boolean;
  cancelSub?: { dispose(): void };
}

export class PermissionBroker {
  private readonly queue: Pending[] = [];
  private counter = 0;

  constructor(
    private readonly ui: PermissionUi,
    private readonly relative: (path: string) => string = (p) => p,
  ) {}

  /** The card on screen, for snapshots (a reloaded view shows it again). */
  get current(): ApprovalRequest | undefined {
    return this.queue[0]?.request;
  }

  /** Puts the question to the user; resolves with their answer (or Deny, see the module doc). */
  ask(params: PermissionParams, token?: Cancellation): Promise<PermissionAnswer> {
    return new Promise((resolve) => {
      const p: Pending = { request: approvalRequestFor(`perm${this.counter++}`, params, this.relative), params, resolve, done: false };
      if (token?.isCancellationRequested) return resolve({ decision: 'deny' });
      p.cancelSub = token?.onCancellationRequested(() => this.settle(p, { decision: 'deny' }));
      this.queue.push(p);
      if (this.queue.length === 1) this.present(p);
    });
  }

  /** The card's answer (WebviewToHost approvalReply); false when that card is no longer waiting. */
  reply(id: string, optionId: string, reason?: string): boolean {
    const p = this.queue.find((q) => q.request.id === id);
    if (!p) return false;
    const result = decisionFor(optionId, reason);
    if (p.request.hold && result.decision !== 'deny') return false; // not shown whole: only Deny counts
    this.settle(p, result);
    return true;
  }

  /** Denies everything waiting (the chat was replaced or is closing). */
  denyAll(): void {
    for (const p of [...this.queue]) this.settle(p, { decision: 'deny' });
  }

  private present(p: Pending): void {
    this.ui.card(p.request);
    if (p.params.diff === undefined) return;
    const whole = p.request.hold === HOLD_OPENING;
    void this.ui
      .openDiff(p.params, () => {
        p.diff = undefined; // already closed by the user
        this.settle(p, { decision: 'deny' });
      })
      .then(
        (view) => {
          if (p.done) return void view?.close();
          p.diff = view;
          if (whole) this.release(p, view ? undefined : HOLD_NOT_SHOWN);
        },
        () => whole && this.release(p, HOLD_NOT_SHOWN), // the card still works, for a Deny
      );
  }

  /** The diff editor opened the whole change (hold undefined: Allow is on), or could not (hold says so). */
  private release(p: Pending, hold: string | undefined): void {
    if (p.done) return;
    const { hold: _old, ...rest } = p.request;
    p.request = hold ? { ...rest, hold } : rest;
    if (this.queue[0] === p) this.ui.card(p.request);
  }

  private settle(p: Pending, result: PermissionAnswer): void {
    if (p.done) return;
    p.done = true;
    p.cancelSub?.dispose();
    p.diff?.close();
    p.diff = undefined;
    const wasShown = this.queue[0] === p;
    this.queue.splice(this.queue.indexOf(p), 1);
    p.resolve(result);
    if (!wasShown) return;
    const next = this.queue[0];
    if (next) this.present(next);
    else this.ui.card(null);
  }
}
