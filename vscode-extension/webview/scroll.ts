/**
 * Auto-scroll that follows the stream only while the reader is at the bottom. Any upward scroll
 * input (one wheel tick, PageUp/ArrowUp/Home, a scrollbar drag, a touch drag) pauses it at once;
 * it resumes only when the reader comes back to the bottom (or presses "Jump to latest").
 * Streamed content scrolls instantly, never smoothly, so nothing bounces. A row the reader
 * expands or collapses (Thinking) stays where it is on screen, even when following the bottom.
 */
const UP_KEYS = new Set(['PageUp', 'ArrowUp', 'Home']);
const INTENT_MS = 800;

export class AutoScroller {
  pinned = true;
  private intentUntil = 0;
  private lastTop = 0;
  /** The row being expanded or collapsed, and where it was on screen before. */
  private held: { el: HTMLElement; top: number } | undefined;

  constructor(
    private readonly el: HTMLElement,
    content: HTMLElement,
    private readonly onPinnedChange: (pinned: boolean) => void,
  ) {
    // Messages settle their height after layout (content-visibility, wrapping): stay at the
    // bottom while pinned whenever the content's size changes.
    new ResizeObserver(() => this.afterResize()).observe(content);
    const intent = (): void => {
      this.intentUntil = performance.now() + INTENT_MS;
    };
    el.addEventListener('wheel', (e) => {
      intent();
      if (e.deltaY < 0) this.setPinned(false);
    }, { passive: true });
    el.addEventListener('keydown', (e) => {
      intent();
      if (UP_KEYS.has(e.key)) this.setPinned(false);
    });
    el.addEventListener('pointerdown', intent);
    el.addEventListener('touchmove', intent, { passive: true });
    el.addEventListener('scroll', () => {
      const top = el.scrollTop;
      const user = performance.now() < this.intentUntil;
      if (user && top < this.lastTop - 1) this.setPinned(false);
      else if (user && this.atBottom()) this.setPinned(true);
      this.lastTop = top;
    }, { passive: true });
  }

  atBottom(): boolean {
    return this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight <= 2;
  }

  /**
   * The reader is toggling `el` (a <summary>): the next resize keeps it where it is on screen
   * instead of following the bottom, and following continues only if that ends at the bottom.
   */
  hold(el: HTMLElement): void {
    this.held = { el, top: el.getBoundingClientRect().top };
    // A toggle that changed no size must not hold a later, unrelated resize.
    requestAnimationFrame(() => requestAnimationFrame(() => (this.held = undefined)));
  }

  private afterResize(): void {
    const held = this.held;
    this.held = undefined;
    if (!held) return this.follow();
    this.el.scrollTop += held.el.getBoundingClientRect().top - held.top;
    this.lastTop = this.el.scrollTop;
    this.setPinned(this.atBottom());
  }

  /** Call after content changed: follows the bottom only while pinned. */
  follow(): void {
    if (this.pinned) this.toBottom();
  }

  toBottom(): void {
    this.el.scrollTop = this.el.scrollHeight;
    this.lastTop = this.el.scrollTop;
  }

  jump(): void {
    this.setPinned(true);
    this.toBottom();
  }

  restore(top: number, pinned: boolean): void {
    this.pinned = pinned;
    if (pinned) this.toBottom();
    else {
      this.el.scrollTop = top;
      this.lastTop = this.el.scrollTop;
    }
    this.onPinnedChange(pinned);
  }

  private setPinned(p: boolean): void {
    if (p === this.pinned) return;
    this.pinned = p;
    this.onPinnedChange(p);
  }
}
