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

  /** `position`: how many transcript messages came before a new notice. */
  constructor(
    private readonly hub: WebviewHub,
    private readonly position: () => number,
  ) {}

  get current(): Notice[] {
    return this.list;
  }

  add(n: Omit<Notice, 'id' | 'at'>): void {
    this.list = [...this.list, { id: `n${this.counter++}`, at: this.position(), ...n }].slice(-MAX_NOTICES);
    this.publish();
  }

  dismiss(id: string): void {
    this.list = this.list.filter((n) => n.id !== id);
    this.publish();
  }

  /** A notice sits in the transcript of the chat where it happened: another chat starts without them. */
  clear(): void {
    this.list = [];
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

  /** qwen/skillsChanged: a notice naming what switched on and the file that triggered it. */
  skillsChanged(p: SkillsChanged): void {
    if (!p.activated?.length) return;
    let trigger = '';
    if (p.trigger) {
      try {
        trigger = ` — triggered by ${vscode.workspace.asRelativePath(vscode.Uri.parse(p.trigger))}`;
      } catch {
        trigger = '';
      }
    }
    this.add({ text: `Activated ${p.activated.join(', ')}${trigger}`, uri: p.trigger });
  }

  /** qwen/memoryChanged: "Memory updated (project): saved …; removed …", with the saved file to open. */
  memoryChanged(p: MemoryChanged): void {
    const notice = memoryNotice(p, existsSync);
    this.add({ text: notice.text, ...(notice.path ? { uri: vscode.Uri.file(notice.path).toString(), openLabel: 'Open memory' } : {}) });
  }

  private publish(): void {
    this.hub.broadcast({ type: 'notices', notices: this.list });
  }
}
