/**
 * Proposed skills (qwen/skillProposed): one card each, with the name, the description, the
 * proposed SKILL.md (collapsed, shown as code, never rendered as Markdown or HTML) and Accept /
 * Discard. Like the approval card (B11), stray input cannot answer it:
 *  - it never takes focus, so keys typed in the composer stay there, and it has no hotkeys;
 *  - for ARM_MS after a card appears its buttons do nothing (aria-disabled, still reachable by
 *    Tab), so a click aimed at what was there a moment before cannot accept;
 *  - a card already on screen keeps its DOM and its armed state when the list changes.
 */
import type { SkillProposal } from '../src/shared/messages';
import { ARM_MS } from './approval';

export type ProposalReply = (id: string, accept: boolean) => void;

interface Card {
  el: HTMLElement;
  armed: boolean;
  /** Answered and waiting for the host; the host sending the list again (a failed accept) re-enables it. */
  answered: boolean;
  timer: number;
}

export class SkillProposalCards {
  private readonly cards = new Map<string, Card>();

  constructor(
    private readonly box: HTMLElement,
    private readonly reply: ProposalReply,
  ) {
    box.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-proposal]');
      if (!b) return;
      const id = b.dataset.proposal!;
      const card = this.cards.get(id);
      if (!card?.armed || card.answered) return;
      card.answered = true;
      this.setEnabled(card, false);
      this.reply(id, b.dataset.answer === 'accept');
    });
  }

  /** Shows exactly `list`, in order. */
  show(list: SkillProposal[] | undefined): void {
    const hadFocus = this.box.contains(document.activeElement);
    const want = new Set((list ?? []).map((p) => p.id));
    for (const [id, card] of this.cards) {
      if (want.has(id)) {
        if (card.answered) {
          card.answered = false;
          this.setEnabled(card, true);
        }
        continue;
      }
      window.clearTimeout(card.timer);
      this.cards.delete(id);
    }
    this.box.replaceChildren(...(list ?? []).map((p) => (this.cards.get(p.id) ?? this.create(p)).el));
    this.box.hidden = !this.cards.size;
    if (hadFocus && !this.box.contains(document.activeElement)) document.getElementById('prompt')?.focus(); // not to <body>
  }

  private create(p: SkillProposal): Card {
    const el = document.createElement('div');
    el.className = 'proposal';
    el.dataset.proposalId = p.id;
    el.setAttribute('role', 'group');
    el.setAttribute('aria-label', `Proposed skill: ${p.name}`);
    const title = document.createElement('div');
    title.className = 'proposal-title';
    title.textContent = `Proposed skill: ${p.name}`;
    el.append(title);
    if (p.description) {
      const desc = document.createElement('div');
      desc.className = 'proposal-description';
      desc.textContent = p.description;
      el.append(desc);
    }
    const details = document.createElement('details');
    details.className = 'proposal-text';
    const summary = document.createElement('summary');
    summary.textContent = 'SKILL.md';
    const pre = document.createElement('pre');
    const code = document.createElement('code');
    code.textContent = p.text;
    pre.append(code);
    details.append(summary, pre);
    el.append(details);
    const actions = document.createElement('div');
    actions.className = 'proposal-actions';
    actions.append(this.button(p, 'accept', 'Accept'), this.button(p, 'discard', 'Discard'));
    el.append(actions);
    const card: Card = { el, armed: false, answered: false, timer: 0 };
    card.timer = window.setTimeout(() => {
      card.armed = true;
      this.setEnabled(card, true);
    }, ARM_MS);
    this.cards.set(p.id, card);
    return card;
  }

  private setEnabled(card: Card, on: boolean): void {
    for (const b of Array.from(card.el.querySelectorAll('button[data-proposal]'))) {
      if (on) b.removeAttribute('aria-disabled');
      else b.setAttribute('aria-disabled', 'true');
    }
  }

  private button(p: SkillProposal, answer: 'accept' | 'discard', label: string): HTMLButtonElement {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.proposal = p.id;
    b.dataset.answer = answer;
    b.className = answer === 'accept' ? 'primary' : '';
    b.textContent = label;
    b.setAttribute('aria-label', `${label} skill ${p.name}`);
    b.setAttribute('aria-disabled', 'true');
    return b;
  }
}
