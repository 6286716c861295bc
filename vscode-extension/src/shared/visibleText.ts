/**
 * Text from the model or the repository shown as it is: the one escaping used by the approval
 * card (src/permission.ts, webview/approval.ts), the tool rows and the code blocks of answers
 * (webview/main.ts, webview/markdown.ts). It follows the server's text/visible.py
 * (`visible`), applied again here so the panel never depends on the server having done it.
 *
 * Written out, because they do not show as themselves:
 *  - controls (Cc: \r, \x1b, …) and format characters (Cf: bidi controls such as U+202E, zero-width
 *    characters, the BOM, the soft hyphen), line and paragraph separators (Zl, Zp), lone surrogates;
 *  - every Default_Ignorable_Code_Point (variation selectors U+FE00–U+FE0F, the combining grapheme
 *    joiner U+034F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, tags U+E0000–U+E0FFF, …),
 *    which render as nothing;
 *  - the braille blank U+2800, which renders as a space but is not one to a shell.
 * Each becomes an escape (`\r`, `\x1b`, `\u202e`); a newline becomes ⏎ on one line, or stays.
 * Idempotent: escaping escaped text changes nothing. What is shown is also what Copy copies, so a
 * copied command is the one the person read.
 */

export const NEWLINE_MARK = '⏎';
/** Every character that does not show as itself (see the module doc); one class, used everywhere. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u115f\u1160\u3164\uffa0\u2800]/gu;
const NAMED: Record<string, string> = { '\r': '\\r', '\t': '\\t', '\n': '\\n' };

/**
 * How line layout is shown: `line` (one line: newline as ⏎, tab as \t, the server's default),
 * `lines` (newlines kept: one shown line per line, the server's keep_newlines), `block` (newlines
 * and tabs kept: code blocks and tool output, where indentation is part of what is shown).
 */
export type Layout = 'line' | 'lines' | 'block';

function escape(ch: string): string {
  if (NAMED[ch]) return NAMED[ch];
  const code = ch.codePointAt(0)!;
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every character that does not show as itself written out. */
export function visible(text: string, layout: Layout = 'line'): string {
  return text.replace(HIDDEN, (ch) => {
    if (ch === '\n') return layout === 'line' ? NEWLINE_MARK : '\n';
    if (ch === '\t' && layout === 'block') return '\t';
    return escape(ch);
  });
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
