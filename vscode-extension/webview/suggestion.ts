/**
 * The follow-up suggestion chip above the composer (qwen/suggestion), as Qwen Code's prompt
 * suggestion: the text is also the empty composer's placeholder (the ghost), Tab or Enter in
 * the empty composer accepts it, and typing anything dismisses it. The keys are taken only
 * then: with text in the composer, no suggestion, a running turn, modifiers or an open IME
 * composition, Tab moves focus and Enter does what it always does (B13).
 *
 * "Result ready" marks a suggestion whose speculative run finished: accepting applies it at once.
 * The chip's own buttons are there for the mouse and for keyboard users who Tab to them.
 */
import type { Suggestion } from '../src/shared/messages';

export interface SuggestionActions {
  accept(id: string): void;
  dismiss(id: string): void;
}

export class SuggestionChip {
  private current: Suggestion | undefined;
  private readonly text: HTMLElement;
  private readonly ready: HTMLElement;
  private readonly useBtn: HTMLButtonElement;
  private readonly basePlaceholder: string;

  constructor(
    private readonly box: HTMLElement,
    private readonly prompt: HTMLTextAreaElement,
    private readonly actions: SuggestionActions,
    /** A turn is streaming: the suggestion waits (the keys are left alone, the button does nothing). */
    private readonly running: () => boolean,
  ) {
    this.basePlaceholder = prompt.placeholder;
    box.hidden = true;
    this.useBtn = document.createElement('button');
    this.useBtn.type = 'button';
    this.useBtn.className = 'suggestion-use';
    this.useBtn.setAttribute('aria-keyshortcuts', 'Tab Enter');
    const label = document.createElement('span');
    label.className = 'suggestion-label';
    label.textContent = 'Suggested:';
    this.text = document.createElement('span');
    this.text.className = 'suggestion-text';
    this.ready = document.createElement('span');
    this.ready.className = 'suggestion-ready';
    this.ready.textContent = 'result ready';
    this.ready.title = 'It already ran in the background: accepting applies its result at once.';
    const hint = document.createElement('span');
    hint.className = 'suggestion-hint';
    hint.textContent = 'Tab';
    this.useBtn.append(label, this.text, this.ready, hint);
    const close = document.createElement('button');
    close.type = 'button';
    close.className = 'suggestion-dismiss';
    close.textContent = '×';
    close.setAttribute('aria-label', 'Dismiss suggestion');
    box.append(this.useBtn, close);
    this.useBtn.addEventListener('click', () => this.accept());
    close.addEventListener('click', () => {
      const s = this.current;
      if (!s) return;
      this.show(null);
      this.actions.dismiss(s.id);
      prompt.focus();
    });
    // Typing anything (a key, a paste, an IME composition) dismisses.
    prompt.addEventListener('input', () => {
      const s = this.current;
      if (s && prompt.value !== '') {
        this.show(null);
        this.actions.dismiss(s.id);
      }
    });
  }

  get suggestion(): Suggestion | undefined {
    return this.current;
  }

  /** Shows `s` (the same id again only updates the ready marker), or removes the chip (null). */
  show(s: Suggestion | null | undefined): void {
    const hadFocus = this.box.contains(document.activeElement);
    this.current = s ?? undefined;
    this.box.hidden = !s;
    this.prompt.placeholder = s ? `${s.text} (Tab to use it)` : this.basePlaceholder;
    if (!s) {
      if (hadFocus) this.prompt.focus(); // focus must not fall to <body>
      return;
    }
    this.text.textContent = s.text;
    this.text.title = s.text; // the chip cuts a long one short
    this.ready.hidden = !s.ready;
    this.box.classList.toggle('ready', s.ready);
    this.useBtn.setAttribute('aria-label', `Use suggestion${s.ready ? ' (result ready)' : ''}: ${s.text}`);
  }

  /** The composer's keydown, before its own handling: true when Tab or Enter accepted the suggestion (the event is consumed). */
  handleKey(e: KeyboardEvent): boolean {
    if (!this.current || this.running() || this.prompt.value !== '') return false;
    if (e.key !== 'Tab' && e.key !== 'Enter') return false;
    if (e.shiftKey || e.altKey || e.ctrlKey || e.metaKey || e.isComposing || e.keyCode === 229) return false;
    e.preventDefault();
    this.accept();
    return true;
  }

  private accept(): void {
    const s = this.current;
    if (!s || this.running()) return;
    this.show(null);
    this.actions.accept(s.id);
  }
}
