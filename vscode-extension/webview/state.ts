/**
 * Everything the chat webview holds between messages, in one place: what the host last said
 * (running, the welcome's steps, the Compact state), the rendered messages, the stream patches
 * waiting for the next frame, and what survives a reload in VS Code's webview state (the draft,
 * the scroll position, the prompts sent). The rest of the webview reads and writes it here, never
 * in module globals of its own.
 */
import type { CompactState, SetupState, StreamPatch, TranscriptMessage } from '../src/shared/messages';
import type { MarkdownView } from './markdown';

/** What VS Code keeps for the view across a reload (`vscode.setState`). */
export interface SavedState {
  draft?: string;
  scrollTop?: number;
  pinned?: boolean;
  /** Prompts sent from this view, oldest first, for Up/Down in the empty composer. */
  sent?: string[];
}

/** A rendered message. */
export interface View {
  el: HTMLElement;
  msg: TranscriptMessage;
  /** An answer's body: its text split at the tool rows, one Markdown view and one row group per part. */
  parts?: { md: MarkdownView; tools: HTMLElement }[];
}

export interface WebviewState {
  /** A turn is running (Send is off, Stop is on). */
  running: boolean;
  /** The rendered messages by id. */
  views: Map<string, View>;
  /** The welcome's steps, shown while the chat is empty. */
  setup: SetupState | undefined;
  /** The last window's chat is on its way (the welcome waits for it). */
  restoring: boolean;
  compact: CompactState;
  /** Stream patches that arrived since the last frame, applied together. */
  pendingPatches: StreamPatch[];
  frame: number | undefined;
  persistTimer: number | undefined;
  /** What the view had before a reload, read once at start (scroll position and pin are used once). */
  saved: SavedState;
}

export function initialState(saved: SavedState | undefined): WebviewState {
  return {
    running: false,
    views: new Map(),
    setup: undefined,
    restoring: false,
    compact: { available: false, compacting: false },
    pendingPatches: [],
    frame: undefined,
    persistTimer: undefined,
    saved: saved ?? {},
  };
}
