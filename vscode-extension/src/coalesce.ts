/**
 * Coalesces stream patches to about one frame on the way to the webview: the first patch after
 * a quiet spell goes out on the next tick, later ones ride along until the frame is over. A fast
 * model therefore costs the webview one message and one paint per frame, not one per token.
 */
import type { StreamPatch } from './shared/messages';

export interface Timer {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimer: Timer = { set: (fn, ms) => setTimeout(fn, ms), clear: (h) => clearTimeout(h as NodeJS.Timeout) };

/** Merges neighbouring appends to the same message so a batch carries one string per message. */
export function mergePatches(patches: StreamPatch[]): StreamPatch[] {
  const out: StreamPatch[] = [];
  for (const p of patches) {
    const last = out[out.length - 1];
    if (last && (p.op === 'append' || p.op === 'thought') && last.op === p.op && last.id === p.id) {
      out[out.length - 1] = { ...last, text: last.text + p.text };
    } else out.push(p);
  }
  return out;
}

export class FrameCoalescer {
  private pending: StreamPatch[] = [];
  private handle: unknown;

  constructor(
    private readonly flushTo: (patches: StreamPatch[]) => void,
    private readonly frameMs = 16,
    private readonly timer: Timer = realTimer,
  ) {}

  push(patch: StreamPatch): void {
    this.pending.push(patch);
    if (this.handle === undefined) this.handle = this.timer.set(() => this.flush(), this.frameMs);
  }

  /** Sends whatever is pending now (before a turn's end message, so order holds). */
  flush(): void {
    if (this.handle !== undefined) this.timer.clear(this.handle);
    this.handle = undefined;
    if (this.pending.length === 0) return;
    const batch = mergePatches(this.pending);
    this.pending = [];
    this.flushTo(batch);
  }

  /** Drops pending patches (the webview will get a full snapshot instead). */
  discard(): void {
    if (this.handle !== undefined) this.timer.clear(this.handle);
    this.handle = undefined;
    this.pending = [];
  }
}
