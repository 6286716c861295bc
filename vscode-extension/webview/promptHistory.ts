/**
 * Up/Down in the composer recall earlier prompts, as a shell does: only from an empty composer
 * (or one still showing a recalled prompt, unedited), so the arrows move the caret in a draft.
 * Down past the newest empties the composer again. The list is kept in the webview's state, so it
 * survives New chat, a hidden view and a window reload.
 */
const MAX_ENTRIES = 100;

export class PromptHistory {
  /** The entry shown while browsing; undefined when not browsing. */
  private index: number | undefined;
  private shown: string | undefined;

  constructor(
    private readonly prompt: HTMLTextAreaElement,
    private list: string[],
  ) {
    this.list = list.filter((p) => typeof p === 'string').slice(-MAX_ENTRIES);
  }

  get entries(): string[] {
    return this.list;
  }

  add(text: string): void {
    if (this.list[this.list.length - 1] !== text) this.list = [...this.list, text].slice(-MAX_ENTRIES);
    this.index = undefined;
    this.shown = undefined;
  }

  /** True when the key recalled (or cleared) a prompt; the caller does nothing else with it. */
  handleKey(e: KeyboardEvent): boolean {
    if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return false;
    if (e.shiftKey || e.altKey || e.ctrlKey || e.metaKey || e.isComposing) return false;
    const browsing = this.index !== undefined && this.prompt.value === this.shown;
    if (!browsing) {
      this.index = undefined;
      if (this.prompt.value !== '') return false;
    }
    if (e.key === 'ArrowUp') {
      const next = (this.index ?? this.list.length) - 1;
      if (next < 0) return false;
      this.show(next);
    } else {
      if (this.index === undefined) return false;
      if (this.index + 1 < this.list.length) this.show(this.index + 1);
      else {
        this.index = undefined;
        this.shown = undefined;
        this.prompt.value = '';
      }
    }
    e.preventDefault();
    return true;
  }

  private show(i: number): void {
    this.index = i;
    this.shown = this.list[i];
    this.prompt.value = this.shown;
    this.prompt.setSelectionRange(this.shown.length, this.shown.length);
  }
}
