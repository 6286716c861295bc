/**
 * The composer's completion list: slash commands when the message starts with `/` (each with its
 * description; picking one fills `/name `), workspace files after an `@` (fuzzy, from the server;
 * picking one writes `@path ` and attaches the file as a chip the user can remove). A listbox under
 * the composer: ↑/↓ move, Tab or Enter pick, Escape closes.
 */
import type { CommandInfo, FileCompletionItem } from '../src/shared/protocol';

export interface CompletionHooks {
  /** Ask the host for files matching the `@` word being typed. */
  files(query: string): void;
  /** A file or folder was picked after `@`. */
  pickedPath(path: string): void;
}

interface Item {
  label: string;
  detail: string;
  insert: string;
  path?: string;
}

/** The `@word` the caret is in, or undefined: starts the text or follows whitespace. */
export function atWord(text: string, caret: number): { start: number; query: string } | undefined {
  const before = text.slice(0, caret);
  const m = /(^|\s)@([^\s@]*)$/.exec(before);
  return m ? { start: caret - m[2].length - 1, query: m[2] } : undefined;
}

/** Commands whose name (or another name) starts with what follows `/`, while no space was typed. */
export function slashMatches(text: string, commands: CommandInfo[]): CommandInfo[] {
  const m = /^\/(\S*)$/.exec(text);
  if (!m) return [];
  const typed = m[1].toLowerCase();
  return commands.filter((c) => [c.name, ...(c.altNames ?? [])].some((n) => n.startsWith(typed)));
}

export class Completion {
  private commands: CommandInfo[] = [];
  private items: Item[] = [];
  private active = 0;
  private at: { start: number; query: string } | undefined;
  readonly list: HTMLElement;

  constructor(
    private readonly prompt: HTMLTextAreaElement,
    container: HTMLElement,
    private readonly hooks: CompletionHooks,
  ) {
    this.list = document.createElement('div');
    this.list.id = 'completions';
    this.list.className = 'completions';
    this.list.setAttribute('role', 'listbox');
    this.list.setAttribute('aria-label', 'Completions');
    this.list.hidden = true;
    container.before(this.list);
    prompt.setAttribute('aria-controls', 'completions');
    prompt.addEventListener('input', () => this.update());
    prompt.addEventListener('blur', () => window.setTimeout(() => this.close(), 150));
  }

  get open(): boolean {
    return !this.list.hidden;
  }

  setCommands(commands: CommandInfo[]): void {
    this.commands = commands;
    this.update();
  }

  /** The server's answer for `query`; an answer to an older query is dropped. */
  setFiles(query: string, items: FileCompletionItem[]): void {
    if (!this.at || this.at.query !== query) return;
    this.show(items.map((i) => ({ label: `@${i.path}`, detail: i.kind, insert: `@${i.path} `, path: i.path })));
  }

  /** Keys while the list is open; true when the key was used here. */
  key(e: KeyboardEvent): boolean {
    if (!this.open) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      this.move(e.key === 'ArrowDown' ? 1 : -1);
    } else if ((e.key === 'Enter' && !e.shiftKey) || e.key === 'Tab') {
      this.pick(this.active);
    } else if (e.key === 'Escape') {
      this.close();
    } else {
      return false;
    }
    e.preventDefault();
    return true;
  }

  private update(): void {
    const text = this.prompt.value;
    const slash = slashMatches(text, this.commands);
    if (slash.length) {
      this.at = undefined;
      this.show(slash.map((c) => ({ label: `/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ''}`, detail: c.description, insert: `/${c.name} ` })));
      return;
    }
    this.at = atWord(text, this.prompt.selectionStart ?? text.length);
    if (this.at) this.hooks.files(this.at.query);
    else this.close();
  }

  private show(items: Item[]): void {
    this.items = items;
    this.active = 0;
    this.list.replaceChildren(
      ...items.map((item, i) => {
        const row = document.createElement('div');
        row.className = 'completion';
        row.id = `completion-${i}`;
        row.setAttribute('role', 'option');
        const label = document.createElement('span');
        label.className = 'completion-label';
        label.textContent = item.label;
        const detail = document.createElement('span');
        detail.className = 'completion-detail';
        detail.textContent = item.detail;
        row.append(label, detail);
        row.addEventListener('mousedown', (e) => {
          e.preventDefault(); // keep the caret in the composer
          this.pick(i);
        });
        return row;
      }),
    );
    this.list.hidden = items.length === 0;
    this.move(0);
  }

  private move(delta: number): void {
    if (!this.items.length) return;
    this.active = (this.active + delta + this.items.length) % this.items.length;
    [...this.list.children].forEach((row, i) => row.setAttribute('aria-selected', String(i === this.active)));
    this.prompt.setAttribute('aria-activedescendant', `completion-${this.active}`);
    this.list.children[this.active]?.scrollIntoView({ block: 'nearest' });
  }

  private pick(index: number): void {
    const item = this.items[index];
    if (!item) return;
    const text = this.prompt.value;
    if (item.path !== undefined && this.at) {
      const caret = this.prompt.selectionStart ?? text.length;
      this.prompt.value = text.slice(0, this.at.start) + item.insert + text.slice(caret);
      const end = this.at.start + item.insert.length;
      this.prompt.setSelectionRange(end, end);
      this.hooks.pickedPath(item.path);
    } else {
      this.prompt.value = item.insert;
    }
    this.close();
    this.prompt.focus();
    this.prompt.dispatchEvent(new Event('input'));
  }

  close(): void {
    this.list.hidden = true;
    this.items = [];
    this.prompt.removeAttribute('aria-activedescendant');
  }
}
