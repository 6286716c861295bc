/**
 * The notices of the open chat ("Activated api-helper — triggered by …", "Memory updated …"):
 * lines in the transcript where they happened, each with the file it is about, opened by id so the
 * webview can open only what the host put in a notice.
 */
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { describeError } from '../errors';
import { memoryNotice } from '../memory';
import type { Notice } from '../shared/messages';
import type { MemoryChanged, SkillsChanged } from '../shared/protocol';
import type { WebviewHub } from './hub';

const MAX_NOTICES = 5;

export class Notices {
  private list: Notice[] = [];
  private counter = 0;
  /** The skills each "Activated …" notice names, and its trigger's words, so it can follow later changes. */
  private readonly skills = new Map<string, { names: string[]; trigger: string }>();

  /** `position`: how many transcript messages came before a new notice. */
  constructor(
    private readonly hub: WebviewHub,
    private readonly position: () => number,
  ) {}

  get current(): Notice[] {
    return this.list;
  }

  /** A notice saying what one already shown says replaces it, at the newest place: notices never repeat. */
  add(n: Omit<Notice, 'id' | 'at'>): string {
    const id = `n${this.counter++}`;
    this.list = [...this.list.filter((o) => o.text !== n.text || o.uri !== n.uri), { id, at: this.position(), ...n }].slice(-MAX_NOTICES);
    this.forgetGone();
    this.publish();
    return id;
  }

  dismiss(id: string): void {
    this.list = this.list.filter((n) => n.id !== id);
    this.forgetGone();
    this.publish();
  }

  /** A notice sits in the transcript of the chat where it happened: another chat starts without them. */
  clear(): void {
    this.list = [];
    this.skills.clear();
  }

  /** A notice's file, opened by id. */
  async open(id: string): Promise<void> {
    const uri = this.list.find((n) => n.id === id)?.uri;
    if (!uri) return;
    try {
      await vscode.window.showTextDocument(vscode.Uri.parse(uri, true), { preview: true });
    } catch (err) {
      void vscode.window.showErrorMessage(describeError(err).message);
    }
  }

  /**
   * qwen/skillsChanged: a notice naming what switched on and the file that triggered it. A skill
   * announced again moves to the new notice, and one switched off (deleted, no longer matching)
   * leaves the notices that named it: a notice never says what is no longer true.
   */
  skillsChanged(p: SkillsChanged): void {
    const stale = new Set([...(p.activated ?? []), ...(p.deactivated ?? [])]);
    let changed = false;
    for (const [id, entry] of this.skills) {
      const names = entry.names.filter((n) => !stale.has(n));
      if (names.length === entry.names.length) continue;
      changed = true;
      if (names.length) {
        this.skills.set(id, { ...entry, names });
        this.list = this.list.map((n) => (n.id === id ? { ...n, text: `Activated ${names.join(', ')}${entry.trigger}` } : n));
      } else {
        this.skills.delete(id);
        this.list = this.list.filter((n) => n.id !== id);
      }
    }
    if (!p.activated?.length) {
      if (changed) this.publish();
      return;
    }
    let trigger = '';
    if (p.trigger) {
      try {
        trigger = ` — triggered by ${vscode.workspace.asRelativePath(vscode.Uri.parse(p.trigger))}`;
      } catch {
        trigger = '';
      }
    }
    const id = this.add({ text: `Activated ${p.activated.join(', ')}${trigger}`, uri: p.trigger });
    this.skills.set(id, { names: [...p.activated], trigger });
  }

  /** qwen/memoryChanged: "Memory updated (project): saved …; removed …", with the saved file to open. */
  memoryChanged(p: MemoryChanged): void {
    const notice = memoryNotice(p, existsSync);
    this.add({ text: notice.text, ...(notice.path ? { uri: vscode.Uri.file(notice.path).toString(), openLabel: 'Open memory' } : {}) });
  }

  /** Skill entries of notices no longer shown (dismissed, or past the limit) are dropped. */
  private forgetGone(): void {
    for (const id of this.skills.keys()) if (!this.list.some((n) => n.id === id)) this.skills.delete(id);
  }

  private publish(): void {
    this.hub.broadcast({ type: 'notices', notices: this.list });
  }
}
