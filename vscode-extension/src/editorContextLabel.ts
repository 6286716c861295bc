/**
 * What the panel says goes along with the next message (the editor context the server adds), and
 * the `qwen/editorContext` params for a focused editor. Pure functions, so they are tested without
 * VS Code.
 */
import type { EditorContextParams } from './shared/protocol';

export interface Pos {
  line: number;
  character: number;
}

/** The focused editor as the extension sees it (0-based positions, as VS Code and LSP count). */
export interface FocusedEditor {
  uri: string;
  name: string;
  cursor: Pos;
  selection?: { start: Pos; end: Pos };
}

export function editorContextParams(e: FocusedEditor | undefined): EditorContextParams {
  if (!e) return {};
  const sel = e.selection && (e.selection.start.line !== e.selection.end.line || e.selection.start.character !== e.selection.end.character) ? e.selection : undefined;
  return { activeFile: { uri: e.uri, cursor: e.cursor, ...(sel ? { selection: sel } : {}) } };
}

/**
 * "main.py · lines 10–14 selected", "main.py · line 3 selected", or "main.py · line 7" (the cursor).
 * A selection that ends at the start of a line does not count that line, as the editor shows it.
 */
export function editorContextLabel(e: FocusedEditor | undefined): string | undefined {
  if (!e) return undefined;
  const sel = editorContextParams(e).activeFile?.selection;
  if (!sel) return `${e.name} · line ${e.cursor.line + 1}`;
  const first = Math.min(sel.start.line, sel.end.line) + 1;
  const endPos = sel.start.line <= sel.end.line ? sel.end : sel.start;
  const last = Math.max(first, endPos.character === 0 && endPos.line + 1 > first ? endPos.line : endPos.line + 1);
  return first === last ? `${e.name} · line ${first} selected` : `${e.name} · lines ${first}–${last} selected`;
}
