/**
 * What the Memory view and the memory commands show, free of the vscode API: the unit tests and
 * the protocol tests (against the real server) run this module exactly as the extension does.
 * Requests go through a plain `send` function, so the same code serves the language client and a
 * bare vscode-jsonrpc connection.
 *
 * A server without memory answers -32601 (MethodNotFound); that is a version gap, not an error,
 * so it becomes one friendly line instead of a red item or an error toast.
 */
import { isMethodNotFound } from './errors';
import type { ForgetCandidate, MemoryChanged, MemoryItem, MemoryListResult, MemoryRememberResult } from './shared/protocol';
import { commands, requests } from './rpc.generated';
import type { Send } from './rpc.generated';

export const NO_MEMORY_SUPPORT = 'This server has no memory support yet (update qwen-lsp)';
export const NO_MEMORIES = 'No memories yet. Select text and run “Qwen: Remember this convention”.';
/** The server-side command behind the "Remember this convention" code action (docs/protocol.md). */
export const REMEMBER_COMMAND = 'qwen.rememberSelection';

/** Index and prompt order of the scopes (`memory/prompt.ts`); an unknown scope sorts after them. */
const SCOPE_ORDER = ['user', 'project', 'team'];
const SCOPE_LABEL: Record<string, string> = { user: 'User', project: 'Project', team: 'Team' };

export { isMethodNotFound };

/** `~/…` for paths under the home folder: memory files live there, outside the workspace. */
export function tildify(p: string, home: string): string {
  if (!home) return p;
  const h = home.endsWith('/') ? home.slice(0, -1) : home;
  return p === h ? '~' : p.startsWith(`${h}/`) ? `~${p.slice(h.length)}` : p;
}

function baseName(p: string): string {
  return p.slice(Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\')) + 1);
}

export interface MemoryRow {
  label: string;
  description: string;
  tooltip: string;
  path: string;
}

export interface MemoryGroup {
  scope: string;
  label: string;
  rows: MemoryRow[];
}

export type MemoryTree = { kind: 'groups'; groups: MemoryGroup[] } | { kind: 'message'; text: string; icon: 'info' | 'error' };

export function memoryRow(m: MemoryItem): MemoryRow {
  const age = m.age; // Qwen Code's memoryAge words, worded by the server
  const label = m.name?.trim() || baseName(m.path).replace(/\.md$/i, '');
  const description = [m.description?.trim(), age].filter(Boolean).join(' · ');
  const tooltip = [label, m.description?.trim(), [m.type, m.scope, age].filter(Boolean).join(' · '), m.path].filter(Boolean).join('\n');
  return { label, description, tooltip, path: m.path };
}

/** One group per scope that has memories, user → project → team; rows keep the server's order. */
export function groupMemories(memories: MemoryItem[]): MemoryGroup[] {
  const byScope = new Map<string, MemoryRow[]>();
  for (const m of memories) {
    const rows = byScope.get(m.scope) ?? [];
    rows.push(memoryRow(m));
    byScope.set(m.scope, rows);
  }
  const rank = (s: string): number => (SCOPE_ORDER.includes(s) ? SCOPE_ORDER.indexOf(s) : SCOPE_ORDER.length);
  return [...byScope.keys()]
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((scope) => ({ scope, label: SCOPE_LABEL[scope] ?? scope, rows: byScope.get(scope)! }));
}

/** The view's content: the groups, an empty-state hint, or the no-memory-support line. Other errors propagate. */
export async function loadMemoryTree(send: Send): Promise<MemoryTree> {
  let r: MemoryListResult;
  try {
    r = await send(requests.memoryList, {});
  } catch (err) {
    if (isMethodNotFound(err)) return { kind: 'message', text: NO_MEMORY_SUPPORT, icon: 'info' };
    throw err;
  }
  const groups = groupMemories(r.memories ?? []);
  return groups.length ? { kind: 'groups', groups } : { kind: 'message', text: NO_MEMORIES, icon: 'info' };
}

export type RememberOutcome =
  | { kind: 'saved'; result: MemoryRememberResult }
  | { kind: 'unsupported' }
  | { kind: 'refused'; message: string }
  | { kind: 'failed'; error: unknown };

/** Line-comment and block-comment markers by VS Code language id: what a convention written as a comment starts with. */
const HASH = ['#'];
const SLASH = ['///', '//', '/**', '/*', '*/', '*'];
const COMMENT_MARKERS: Record<string, string[]> = {
  python: HASH, shellscript: HASH, ruby: HASH, perl: HASH, r: HASH, yaml: HASH, toml: HASH, makefile: HASH, dockerfile: HASH, powershell: HASH, properties: HASH,
  javascript: SLASH, typescript: SLASH, javascriptreact: SLASH, typescriptreact: SLASH, java: SLASH, c: SLASH, cpp: SLASH, csharp: SLASH, go: SLASH,
  rust: SLASH, swift: SLASH, kotlin: SLASH, scala: SLASH, dart: SLASH, php: SLASH, jsonc: SLASH, css: SLASH, scss: SLASH, less: SLASH,
  sql: ['--'], lua: ['--'], haskell: ['--'],
  html: ['<!--', '-->'], xml: ['<!--', '-->'],
};

/**
 * What "Remember this convention" saves from a selection written as a comment in code
 * (`# Convention: timestamps are UTC`): the words without the comment markers and without a
 * leading "Convention:" label, so the memory and its name read as the rule itself. Text that is
 * not a comment in its language (Markdown's `#` is a heading) is kept as it is.
 */
export function conventionText(text: string, languageId: string | undefined): string {
  const markers = COMMENT_MARKERS[languageId ?? ''];
  const lines = text.split('\n');
  const commented = (l: string): boolean => !l.trim() || (markers ?? []).some((m) => l.trim().startsWith(m));
  if (!markers || !lines.every(commented)) return text;
  const bare = lines.map((l) => {
    let t = l.trim();
    for (const m of markers) if (t.startsWith(m)) t = t.slice(m.length);
    for (const m of markers) if (m !== '*' && t.endsWith(m)) t = t.slice(0, -m.length);
    return t.trim();
  });
  const out = bare.join('\n').trim().replace(/^(convention|rule|note)\s*:\s*/i, '');
  return out || text;
}

/** A selection to remember and, when the user said it, the convention in their own words (what is saved then). */
export interface ConventionSelection {
  text: string;
  uri?: string;
  convention?: string;
}

/**
 * Saves a selection as a project `feedback` memory: the user's words when given, else the
 * selection. Through the server's own command when it declares it (so the code action and the
 * menu do exactly the same thing), else through qwen/memory/remember with the same defaults.
 */
export async function rememberSelection(send: Send, serverCommands: readonly string[], sel: ConventionSelection): Promise<RememberOutcome> {
  try {
    const result = serverCommands.includes(REMEMBER_COMMAND)
      ? await send(commands.rememberSelection, { command: REMEMBER_COMMAND, arguments: [sel] })
      : await send(requests.memoryRemember, { text: sel.convention?.trim() || sel.text, type: 'feedback', scope: 'project' });
    return { kind: 'saved', result };
  } catch (err) {
    return rememberFailure(err);
  }
}

/** Refusals that protect the user (data.kind): shown as a warning with the server's reason, not as a failure. */
const REFUSALS: Record<string, string> = {
  secret: 'The text looks like it contains a secret.',
  memory_security: 'The team-memory folder leads out of the repository.',
};

/** A failed save: a missing method is a version gap; a secret-scanner or team-memory refusal keeps its reason and rule. */
export function rememberFailure(err: unknown): RememberOutcome {
  if (isMethodNotFound(err)) return { kind: 'unsupported' };
  const e = err as { message?: unknown; data?: { kind?: unknown; rule?: unknown } } | undefined;
  const kind = e?.data?.kind;
  if (typeof kind === 'string' && Object.hasOwn(REFUSALS, kind)) {
    const message = typeof e!.message === 'string' && e!.message ? e!.message : REFUSALS[kind];
    const rule = e!.data!.rule;
    const named = typeof rule === 'string' && rule && !message.includes(rule) ? ` (rule: ${rule})` : '';
    return { kind: 'refused', message: `Not remembered: ${message}${named}` };
  }
  return { kind: 'failed', error: err };
}

/**
 * The non-modal notice after a selection was saved ("Remember this convention", "Add to QWEN.md"):
 * a memory by its name (what recall and the Memory view will show) and the file it went to.
 */
export function savedNotice(what: 'memory' | 'rules', shownPath: string, scope?: string, name?: string): string {
  if (what === 'rules') return `Added to ${shownPath}.`;
  return `Remembered ${name ? `“${name}” ` : ''}as a ${scope ?? 'project'} memory in ${shownPath}.`;
}

/** The notice after Undo removed a just-remembered memory; a file the server kept is named as such. */
export function undoneNotice(name: string, removed: boolean): { severity: 'info' | 'warning'; text: string } {
  return removed ? { severity: 'info', text: `Forgot “${name}”.` } : { severity: 'warning', text: `“${name}” was not removed (the file is gone or outside the memory folders).` };
}

export interface CandidatePick {
  label: string;
  description: string;
  detail: string;
  path: string;
  picked: boolean;
}

/** Every candidate starts ticked (the user asked to forget what matches); the modal that follows names them all. */
export function candidatePicks(candidates: ForgetCandidate[], home: string): CandidatePick[] {
  return candidates.map((c) => ({
    label: c.name || baseName(c.path),
    description: c.reason ?? '',
    detail: [c.description, tildify(c.path, home)].filter(Boolean).join(' — '),
    path: c.path,
    picked: true,
  }));
}

/** The modal confirmation: the memories by name in the question, every file in the detail. */
export function forgetConfirmation(items: { label: string; path: string }[], home: string): { message: string; detail: string } {
  const names = items.map((i) => `“${i.label}”`);
  const message = items.length === 1 ? `Forget ${names[0]}?` : `Forget ${items.length} memories: ${names.join(', ')}?`;
  const files = items.map((i) => tildify(i.path, home)).join('\n');
  return { message, detail: `${items.length === 1 ? 'This file is' : 'These files are'} deleted and the memory index is updated:\n${files}` };
}

/** After forget: how many went, and which asked-for files the server did not remove. */
export function forgetSummary(asked: string[], removed: string[], home: string): { severity: 'info' | 'warning'; text: string } {
  const gone = new Set(removed);
  const kept = asked.filter((p) => !gone.has(p));
  const n = removed.length;
  const head = `Forgot ${n} ${n === 1 ? 'memory' : 'memories'}.`;
  if (!kept.length) return { severity: 'info', text: head };
  return { severity: 'warning', text: `${head} Not removed: ${kept.map((p) => tildify(p, home)).join(', ')}` };
}

export async function forgetCandidates(send: Send, query: string): Promise<ForgetCandidate[]> {
  const r = await send(requests.memoryForgetCandidates, { query });
  return r.candidates ?? [];
}

export async function forget(send: Send, paths: string[]): Promise<string[]> {
  const r = await send(requests.memoryForget, { paths });
  return r.removed ?? [];
}

const MAX_NAMES = 3;

function nameList(paths: string[]): string {
  const names = paths.map((p) => baseName(p));
  return names.length > MAX_NAMES ? `${names.slice(0, MAX_NAMES).join(', ')} +${names.length - MAX_NAMES} more` : names.join(', ');
}

/**
 * The chat notice for qwen/memoryChanged: which files were saved and which removed (a path that no
 * longer exists was removed), and the first saved file to open. The scope's MEMORY.md index is
 * left out: it changes with every memory and names nothing the user did.
 */
export function memoryNotice(change: MemoryChanged, exists: (path: string) => boolean): { text: string; path?: string } {
  const paths = (change.paths ?? []).filter((p) => baseName(p) !== 'MEMORY.md');
  const saved = paths.filter(exists);
  const removed = paths.filter((p) => !exists(p));
  const parts = [saved.length ? `saved ${nameList(saved)}` : '', removed.length ? `removed ${nameList(removed)}` : ''].filter(Boolean);
  const scope = change.scope ? ` (${change.scope})` : '';
  return { text: `Memory updated${scope}${parts.length ? `: ${parts.join('; ')}` : ''}`, path: saved[0] };
}
