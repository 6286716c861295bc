/**
 * Applies the unified diff of a qwen/permission request to the text it was computed from, so the
 * proposed file can be shown in VS Code's diff editor (the server sends the diff, not the new text).
 *
 * The server makes the diff with Python's difflib over `splitlines(keepends=True)`, so a "line"
 * ends at any of Python's line boundaries (not only \n) and keeps its terminator; a last line
 * without one is followed by "\ No newline at end of file". The same splitting is used here for
 * both sides, so CRLF files and odd separators round-trip. Strict: a context or removed line that
 * does not match, or a diff cut short by the server's size cap, throws — the caller then shows
 * the diff as text instead of a wrong "after". Linear in the sizes; no regex over untrusted text
 * beyond the anchored hunk header.
 */

/** Python's str.splitlines boundaries; \r\n is one boundary. */
const BOUNDARY = new Set(['\n', '\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029']);

/** `text` split after each line boundary, terminators kept (Python's `splitlines(keepends=True)`). */
export function splitLinesKeepEnds(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (!BOUNDARY.has(c)) continue;
    if (c === '\r' && text[i + 1] === '\n') i++;
    out.push(text.slice(start, i + 1));
    start = i + 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

export class DiffError extends Error {}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const NO_NEWLINE = '\\ No newline at end of file';

interface Hunk {
  oldStart: number;
  oldCount: number;
  newCount: number;
  lines: string[];
}

function stripEnd(line: string): string {
  if (line.endsWith('\r\n')) return line.slice(0, -2);
  return line.length && BOUNDARY.has(line[line.length - 1]) ? line.slice(0, -1) : line;
}

function parse(diff: string): Hunk[] {
  const hunks: Hunk[] = [];
  let hunk: Hunk | undefined;
  for (const raw of splitLinesKeepEnds(diff)) {
    const bare = stripEnd(raw);
    const m = bare.startsWith('@@') ? HUNK.exec(bare.slice(0, 100)) : null;
    if (m) {
      hunk = { oldStart: Number(m[1]), oldCount: m[2] === undefined ? 1 : Number(m[2]), newCount: m[4] === undefined ? 1 : Number(m[4]), lines: [] };
      hunks.push(hunk);
    } else if (!hunk) {
      if (!bare.startsWith('--- ') && !bare.startsWith('+++ ') && bare !== '') throw new DiffError(`Unexpected line before the first hunk: ${bare.slice(0, 80)}`);
    } else if (bare === NO_NEWLINE) {
      const last = hunk.lines.length - 1;
      if (last < 0 || !hunk.lines[last].endsWith('\n')) throw new DiffError('Misplaced "No newline at end of file" marker');
      hunk.lines[last] = hunk.lines[last].slice(0, -1); // the server added this \n after a line that had none
    } else if (raw[0] === ' ' || raw[0] === '-' || raw[0] === '+') {
      hunk.lines.push(raw);
    } else {
      throw new DiffError(`The diff is incomplete or malformed near: ${bare.slice(0, 80)}`);
    }
  }
  return hunks;
}

/** The text `diff` turns `before` into; throws DiffError when it does not apply exactly. */
export function applyUnifiedDiff(before: string, diff: string): string {
  const old = splitLinesKeepEnds(before);
  const out: string[] = [];
  let at = 0; // next unread line of `old`
  for (const h of parse(diff)) {
    // A hunk that removes nothing from an empty range starts *after* line oldStart.
    const start = h.oldCount === 0 ? h.oldStart : h.oldStart - 1;
    if (start < at || start > old.length) throw new DiffError(`Hunk at line ${h.oldStart} is out of order or past the end`);
    out.push(...old.slice(at, start));
    at = start;
    let consumed = 0;
    for (const line of h.lines) {
      const body = line.slice(1);
      if (line[0] === '+') {
        out.push(body);
        continue;
      }
      if (old[at] !== body) throw new DiffError(`Line ${at + 1} does not match the diff (the file changed since it was proposed)`);
      if (line[0] === ' ') out.push(body);
      at++;
      consumed++;
    }
    if (consumed !== h.oldCount) throw new DiffError(`Hunk at line ${h.oldStart} has ${consumed} old lines, its header says ${h.oldCount}`);
  }
  out.push(...old.slice(at));
  return out.join('');
}

/**
 * True when `diff` is a complete unified diff: it parses, and every hunk holds exactly the old and
 * new lines its header counts. A diff cut short (mid-hunk, or with a trailing marker line such as
 * "... [diff cut at N characters]", which no diff line can be) is not whole: the card then offers
 * only Deny (src/permission.ts).
 */
export function diffIsWhole(diff: string): boolean {
  let hunks: Hunk[];
  try {
    hunks = parse(diff);
  } catch {
    return false;
  }
  return hunks.every((h) => {
    const old = h.lines.filter((l) => l[0] !== '+').length;
    const added = h.lines.filter((l) => l[0] !== '-').length;
    return old === h.oldCount && added === h.newCount;
  });
}

/** Lines added and removed, for the card's one-line summary. */
export function diffStats(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  let inHunk = false;
  for (const line of splitLinesKeepEnds(diff)) {
    if (line.startsWith('@@')) inHunk = true;
    else if (!inHunk) continue;
    else if (line[0] === '+') added++;
    else if (line[0] === '-') removed++;
  }
  return { added, removed };
}
