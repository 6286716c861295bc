/**
 * What a person approves, shown as it is: the same escaping as the server's
 * qwen_lsp/visible_text.py, applied again here so the card never depends on the server having
 * done it. Control characters (\r, \x1b, ...) become escapes, newlines become ⏎ (or stay, one
 * shown line per line), bidi controls and zero-width characters become \u202e-style escapes.
 * Idempotent: escaping escaped text changes nothing.
 */

export const NEWLINE_MARK = '⏎';
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const NAMED: Record<string, string> = { '\r': '\\r', '\t': '\\t', '\n': '\\n' };

function escape(ch: string): string {
  if (NAMED[ch]) return NAMED[ch];
  const code = ch.codePointAt(0)!;
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every character that does not show as itself written out. */
export function visible(text: string, keepNewlines = false): string {
  return text.replace(HIDDEN, (ch) => (ch === '\n' ? (keepNewlines ? '\n' : NEWLINE_MARK) : escape(ch)));
}

function lineCount(text: string): number {
  return text ? text.replace(/\n+$/, '').split('\n').length : 1;
}

/** `prefix` + `text` on one visible line, at most `limit` characters; multi-line flagged, a cut says how much. */
export function shownTitle(prefix: string, text: string, limit = 200): string {
  const lines = lineCount(text);
  const flag = lines > 1 ? ` [multi-line: ${lines} lines]` : '';
  let body = visible(text);
  const room = Math.max(limit - prefix.length - flag.length, 20);
  if (body.length > room) {
    const left = body.length - (room - 20);
    body = `${body.slice(0, room - 20)}… [+${left} characters]`;
  }
  return `${prefix}${body}${flag}`;
}
