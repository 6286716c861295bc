/**
 * The approval card: a tool call waiting for Allow or Reject, shown above the composer (never in
 * place of it, so the draft stays where it is). Stray input must not decide it:
 *  - it never takes focus; the composer keeps typing while the card appears;
 *  - option hotkeys (1, 2, …) and Esc (= reject) work only while focus is inside the card, never
 *    at window level, so digits and Enter typed into the composer go to the composer;
 *  - for ARM_MS after it appears the options do nothing, so a click or Enter aimed at what was
 *    there a moment before (the card pushes the layout up) cannot approve;
 *  - reject can carry a reason, typed in the card;
 *  - while the request has a `hold` (its change is not yet open whole in the diff editor, or cannot
 *    be), the allow options stay off and the card says why; the host ignores an Allow then too.
 * Everything the card shows from the request goes through the one visible-text escaping
 * (src/shared/visibleText.ts), so no hidden character shows as nothing or reorders the line.
 * Options are aria-disabled rather than disabled while arming, so a keyboard user can already
 * Tab to them.
 */
import type { ApprovalRequest, ApprovalOption } from '../src/shared/messages';
import { visible } from '../src/shared/visibleText';

export const ARM_MS = 600;

export type Reply = (id: string, optionId: string, reason?: string) => void;

export class ApprovalCard {
  private request: ApprovalRequest | undefined;
  private armed = false;
  private armTimer: number | undefined;
  private reason: HTMLInputElement | undefined;

  constructor(
    private readonly box: HTMLElement,
    private readonly reply: Reply,
  ) {
    box.addEventListener('keydown', (e) => this.onKey(e));
    box.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-option]');
      if (b) this.choose(b.dataset.option!);
    });
  }

  get pending(): ApprovalRequest | undefined {
    return this.request;
  }

  /** Shows `request` (or clears the card on null); the same request again keeps its state. */
  show(request: ApprovalRequest | null | undefined): void {
    if (request && request.id === this.request?.id) return this.update(request);
    window.clearTimeout(this.armTimer);
    const hadFocus = this.box.contains(document.activeElement);
    this.request = request ?? undefined;
    this.armed = false;
    this.reason = undefined;
    if (!request) {
      this.box.replaceChildren();
      if (hadFocus) document.getElementById('prompt')?.focus(); // focus must not fall to <body>
      return;
    }
    const card = document.createElement('div');
    card.className = 'approval';
    card.setAttribute('role', 'group');
    card.setAttribute('aria-label', `Approval needed: ${visible(request.title)}`);
    const title = document.createElement('div');
    title.className = 'approval-title';
    title.textContent = visible(request.title);
    card.append(title);
    if (request.detail) {
      const detail = document.createElement('pre');
      detail.className = 'approval-detail';
      detail.textContent = visible(request.detail, 'lines');
      card.append(detail);
    }
    if (request.directory) {
      const dir = document.createElement('div');
      dir.className = 'approval-directory';
      dir.textContent = `in ${visible(request.directory)}`;
      card.append(dir);
    }
    const hold = document.createElement('div');
    hold.className = 'approval-hold';
    hold.setAttribute('role', 'status');
    card.append(hold);
    const actions = document.createElement('div');
    actions.className = 'approval-actions';
    request.options.forEach((o, i) => {
      const b = this.optionButton(o, i);
      if (o.id === 'allowAlways' && request.covers) {
        // Beside its button, and read with it: what "Allow always" would let run without asking.
        const group = document.createElement('span');
        group.className = 'approval-always';
        const covers = document.createElement('span');
        covers.className = 'approval-covers';
        covers.id = `approval-covers-${request.id}`;
        covers.textContent = `Covers: ${visible(request.covers)}`;
        b.setAttribute('aria-describedby', covers.id);
        group.append(b, covers);
        actions.append(group);
      } else actions.append(b);
    });
    card.append(actions);
    if (request.options.some((o) => o.kind === 'reject')) {
      const reason = document.createElement('input');
      reason.type = 'text';
      reason.className = 'approval-reason';
      reason.placeholder = 'Reason for rejecting (optional)';
      reason.setAttribute('aria-label', 'Reason for rejecting (optional)');
      reason.maxLength = 2000;
      this.reason = reason;
      card.append(reason);
    }
    this.box.replaceChildren(card);
    this.showHold();
    this.armTimer = window.setTimeout(() => {
      this.armed = true;
      this.showHold();
    }, ARM_MS);
  }

  /** The same request again, with its hold lifted or changed: the card keeps its focus, reason and arming. */
  private update(request: ApprovalRequest): void {
    this.request = request;
    this.showHold();
  }

  /** Options on once armed, except allow options while the request is held; the hold's reason shown. */
  private showHold(): void {
    const request = this.request;
    if (!request) return;
    const hold = this.box.querySelector<HTMLElement>('.approval-hold');
    if (hold) {
      hold.textContent = request.hold ?? '';
      hold.hidden = !request.hold;
    }
    for (const b of Array.from(this.box.querySelectorAll<HTMLButtonElement>('button[data-option]'))) {
      const held = !!request.hold && request.options.find((o) => o.id === b.dataset.option)?.kind === 'allow';
      if (this.armed && !held) b.removeAttribute('aria-disabled');
      else b.setAttribute('aria-disabled', 'true');
    }
  }

  private optionButton(o: ApprovalOption, i: number): HTMLButtonElement {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.option = o.id;
    b.className = o.kind === 'allow' && i === 0 ? 'primary' : '';
    b.setAttribute('aria-disabled', 'true');
    b.setAttribute('aria-keyshortcuts', String(i + 1));
    b.textContent = `${i + 1} ${o.label}`;
    b.setAttribute('aria-label', o.label);
    return b;
  }

  private onKey(e: KeyboardEvent): void {
    const request = this.request;
    if (!request) return;
    if (e.key === 'Escape') {
      const reject = request.options.find((o) => o.kind === 'reject');
      if (reject) {
        e.preventDefault();
        e.stopPropagation();
        this.choose(reject.id);
      }
      return;
    }
    if (e.target === this.reason) {
      if (e.key === 'Enter') {
        e.preventDefault();
        const reject = request.options.find((o) => o.kind === 'reject');
        if (reject) this.choose(reject.id);
      }
      return; // digits typed into the reason are text
    }
    const n = /^[1-9]$/.test(e.key) ? Number(e.key) : 0;
    if (n && n <= request.options.length) {
      e.preventDefault();
      this.choose(request.options[n - 1].id);
    }
  }

  private choose(optionId: string): void {
    const request = this.request;
    if (!request || !this.armed) return;
    const option = request.options.find((o) => o.id === optionId);
    if (!option || (option.kind === 'allow' && request.hold)) return;
    const reason = option.kind === 'reject' ? this.reason?.value.trim() : undefined;
    this.reply(request.id, option.id, reason || undefined);
    this.show(null);
  }
}
