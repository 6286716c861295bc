// qwen/permission on the host, pure parts: the unified-diff applier behind the diff
// editor's "after", the request → card mapping, the card answer → decision mapping, the life of a
// request (answered, diff closed = deny, withdrawn by the server, queued), the declared client
// capability, and edit tool cards carrying the decision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyUnifiedDiff, diffStats, DiffError, splitLinesKeepEnds } from '../src/unifiedDiff';
import { approvalRequestFor, decisionFor, MAX_REASON_CHARS, PermissionBroker } from '../src/permission';
import type { Cancellation, PermissionUi } from '../src/permission';
import { qwenCapabilitiesFeature } from '../src/qwenCapabilities';
import { Transcript } from '../src/transcript';
import type { ApprovalRequest } from '../src/shared/messages';
import type { PermissionParams, PermissionAnswer } from '../src/shared/protocol';
import type { ClientCapabilities } from 'vscode-languageclient/node';

// ---- the diff applier (diffs as the server's difflib.unified_diff writes them) ----

test('diff: one hunk in the middle of a file', () => {
  const before = 'a\nb\nc\nd\ne\nf\ng\nh\n';
  const diff = '--- a/x.txt\n+++ b/x.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n';
  assert.equal(applyUnifiedDiff(before, diff), 'a\nb\nc\nd\nE\nf\ng\nh\n');
});

test('diff: several hunks, insertions and deletions, lines outside hunks kept', () => {
  const before = Array.from({ length: 20 }, (_, i) => `l${i + 1}\n`).join('');
  const diff = [
    '--- a/f\n+++ b/f\n',
    '@@ -1,4 +1,5 @@\n+top\n l1\n l2\n l3\n l4\n',
    '@@ -15,6 +16,5 @@\n l15\n l16\n l17\n-l18\n l19\n l20\n',
  ].join('');
  const want = 'top\n' + Array.from({ length: 20 }, (_, i) => `l${i + 1}\n`).filter((l) => l !== 'l18\n').join('');
  assert.equal(applyUnifiedDiff(before, diff), want);
});

test('diff: a new file (--- /dev/null, @@ -0,0) and an emptied file', () => {
  assert.equal(applyUnifiedDiff('', '--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n'), 'x = 1\ny = 2\n');
  assert.equal(applyUnifiedDiff('x\n', '--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-x\n'), '');
});

test('diff: "\\ No newline at end of file" on either side', () => {
  const diff = '--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n';
  assert.equal(applyUnifiedDiff('a\nb', diff), 'a\nb\n');
  const back = '--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n';
  assert.equal(applyUnifiedDiff('a\nb\n', back), 'a\nc');
});

test('diff: CRLF files and Python line boundaries (\\u2028) round-trip', () => {
  assert.equal(applyUnifiedDiff('a\r\nb\r\n', '--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n'), 'a\r\nB\r\n');
  assert.deepEqual(splitLinesKeepEnds('x\u2028y\r\nz\rw'), ['x\u2028', 'y\r\n', 'z\r', 'w']);
  assert.equal(applyUnifiedDiff('p\u2028q\n', '--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-p\u2028+P\u2028 q\n'), 'P\u2028q\n');
});

test('diff: a stale base, a cut diff, a wrong header count and garbage are DiffErrors, never a wrong "after"', () => {
  const diff = '--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n';
  assert.throws(() => applyUnifiedDiff('a\nX\n', diff), DiffError);
  assert.throws(() => applyUnifiedDiff('a\nb\n', diff.replace('+c\n', '+c\n... [diff cut at 200000 characters]\n')), DiffError);
  assert.throws(() => applyUnifiedDiff('a\nb\n', diff.replace('-1,2', '-1,3')), DiffError);
  assert.throws(() => applyUnifiedDiff('a\nb\n', 'hello\n' + diff), DiffError);
  assert.throws(() => applyUnifiedDiff('a\n', '--- a/f\n+++ b/f\n@@ -5,1 +5,1 @@\n-z\n+y\n'), DiffError, 'a hunk past the end');
});

test('diff: stats count hunk lines only, not the --- / +++ headers', () => {
  assert.deepEqual(diffStats('--- a/f\n+++ b/f\n@@ -1,3 +1,2 @@\n a\n-b\n-c\n+d\n'), { added: 1, removed: 2 });
  assert.deepEqual(diffStats(''), { added: 0, removed: 0 });
});

// ---- request → card, card → decision ----

const editParams = (extra: Partial<PermissionParams> = {}): PermissionParams => ({
  sessionId: 's1',
  turnId: 't1',
  toolCallId: 'e1',
  tool: 'edit',
  title: 'Edit src/api/x.py',
  path: '/ws/src/api/x.py',
  diff: '--- a/src/api/x.py\n+++ b/src/api/x.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n',
  ...extra,
});

test('card: an edit shows its title, the relative path with +/− counts; a command shows the command and no path', () => {
  const rel = (p: string) => p.replace('/ws/', '');
  const card = approvalRequestFor('perm0', editParams(), rel);
  assert.equal(card.title, 'Edit src/api/x.py');
  assert.equal(card.detail, 'src/api/x.py (+1 −1), shown in the diff editor');
  assert.deepEqual(card.options.map((o) => [o.id, o.kind]), [['allow', 'allow'], ['allowAlways', 'allow'], ['deny', 'reject']]);
  const shell = approvalRequestFor('perm1', { sessionId: 's1', turnId: 't1', toolCallId: 'c1', tool: 'run_shell_command', title: 'Run a shell command', command: 'npm test' }, rel);
  assert.equal(shell.detail, '$ npm test');
});

test('card: a command is its own title (not the model\'s description), hidden characters written out, multi-line flagged', () => {
  const base = { sessionId: 's1', turnId: 't1', toolCallId: 'c1', tool: 'run_shell_command' };
  const hidden = 'git status' + '\n'.repeat(12) + 'touch X # \u202eevil\u200b';
  const card = approvalRequestFor('p1', { ...base, title: 'Run: git status', command: hidden });
  assert.ok(card.title.startsWith('Run: git status⏎⏎'), card.title);
  assert.ok(card.title.includes('touch X # \\u202eevil\\u200b') && card.title.endsWith('[multi-line: 13 lines]'), card.title);
  assert.equal(card.detail!.split('\n').at(-1), 'touch X # \\u202eevil\\u200b');
  assert.ok(!/[\u202e\u200b\r\x1b]/.test(card.title + card.detail));
  const redraw = approvalRequestFor('p2', { ...base, title: 'Run: ls', command: 'touch X\r\x1b[2K$ git status' });
  assert.equal(redraw.detail, '$ touch X\\r\\x1b[2K$ git status');
  assert.equal(redraw.title, 'Run: touch X\\r\\x1b[2K$ git status');
  const edit = approvalRequestFor('p3', { ...base, tool: 'write_file', title: 'Write a\u202etxt.exe', path: '/ws/a\u202etxt.exe' }, (p) => p.replace('/ws/', ''));
  assert.equal(edit.title, 'Write a\\u202etxt.exe');
  assert.equal(edit.detail, 'a\\u202etxt.exe');
  const long = approvalRequestFor('p4', { ...base, title: 'x', command: 'ls ' + 'a'.repeat(500) + ' ; rm -rf x' });
  assert.ok(long.title.length <= 200 && /\[\+\d+ characters\]/.test(long.title), long.title);
});

test('decision: allow/allowAlways pass; deny and anything unknown deny; only a deny keeps a (trimmed, capped) reason', () => {
  assert.deepEqual(decisionFor('allow', 'ignored'), { decision: 'allow' });
  assert.deepEqual(decisionFor('allowAlways'), { decision: 'allowAlways' });
  assert.deepEqual(decisionFor('deny', '  use return 3  '), { decision: 'deny', reason: 'use return 3' });
  assert.deepEqual(decisionFor('deny', '   '), { decision: 'deny' });
  assert.deepEqual(decisionFor('maybe'), { decision: 'deny' });
  assert.equal(decisionFor('deny', 'x'.repeat(5000)).reason!.length, MAX_REASON_CHARS);
});

// ---- the life of a request, with a fake UI ----

class FakeUi implements PermissionUi {
  cards: (ApprovalRequest | null)[] = [];
  opened: PermissionParams[] = [];
  closedByUs = 0;
  private userClose: (() => void)[] = [];
  card(r: ApprovalRequest | null): void {
    this.cards.push(r);
  }
  async openDiff(params: PermissionParams, onClosed: () => void) {
    this.opened.push(params);
    this.userClose.push(onClosed);
    return { close: () => void this.closedByUs++ };
  }
  /** The user closes the n-th diff tab. */
  userCloses(n: number): void {
    this.userClose[n]();
  }
  get shown(): ApprovalRequest | null | undefined {
    return this.cards[this.cards.length - 1];
  }
}

class Token implements Cancellation {
  isCancellationRequested = false;
  private listeners: (() => void)[] = [];
  onCancellationRequested(l: () => void) {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  }
  cancel(): void {
    this.isCancellationRequested = true;
    for (const l of this.listeners) l();
  }
}

const tick = () => new Promise((r) => setImmediate(r));

test('broker: the card and the diff open together; the card answer resolves the request, removes the card and closes the diff', async () => {
  const ui = new FakeUi();
  const b = new PermissionBroker(ui);
  const answer = b.ask(editParams());
  await tick();
  assert.equal(ui.opened.length, 1, 'the diff editor opened');
  const card = ui.shown!;
  assert.equal(b.current, card, 'a snapshot carries the card');
  assert.equal(b.reply(card.id, 'allow'), true);
  assert.deepEqual(await answer, { decision: 'allow' });
  assert.equal(ui.shown, null, 'the card is gone');
  assert.equal(ui.closedByUs, 1, 'the diff closed');
  assert.equal(b.reply(card.id, 'deny'), false, 'a second answer is ignored');
});

test('broker: closing the diff tab is a Deny and removes the card', async () => {
  const ui = new FakeUi();
  const b = new PermissionBroker(ui);
  const answer = b.ask(editParams());
  await tick();
  ui.userCloses(0);
  assert.deepEqual(await answer, { decision: 'deny' });
  assert.equal(ui.shown, null);
  assert.equal(ui.closedByUs, 0, 'nothing left to close');
});

test('broker: a withdrawn request ($/cancelRequest) removes the card and closes the diff; an already cancelled one never shows', async () => {
  const ui = new FakeUi();
  const b = new PermissionBroker(ui);
  const token = new Token();
  const answer = b.ask(editParams(), token);
  await tick();
  token.cancel();
  assert.deepEqual(await answer, { decision: 'deny' });
  assert.equal(ui.shown, null);
  assert.equal(ui.closedByUs, 1);
  assert.equal(b.current, undefined);
  const gone = new Token();
  gone.cancel();
  const cards = ui.cards.length;
  assert.deepEqual(await b.ask(editParams(), gone), { decision: 'deny' });
  assert.equal(ui.cards.length, cards, 'no card for a request withdrawn before it arrived');
});

test('broker: a diff that opens after the request was settled is closed at once', async () => {
  let release!: () => void;
  let closed = 0;
  const cards: (ApprovalRequest | null)[] = [];
  const b = new PermissionBroker({
    card: (r) => void cards.push(r),
    openDiff: () => new Promise((resolve) => (release = () => resolve({ close: () => void closed++ }))),
  });
  const answer = b.ask(editParams());
  b.reply(cards[0]!.id, 'deny', 'no');
  assert.deepEqual(await answer, { decision: 'deny', reason: 'no' });
  release();
  await tick();
  assert.equal(closed, 1);
});

test('broker: a shell command shows the card only (no diff editor); requests queue and show one at a time; denyAll clears them', async () => {
  const ui = new FakeUi();
  const b = new PermissionBroker(ui);
  const first = b.ask({ sessionId: 's1', turnId: 't1', toolCallId: 'c1', tool: 'run_shell_command', title: 'Run a shell command', command: 'ls' });
  const second = b.ask(editParams({ toolCallId: 'e2' }));
  await tick();
  assert.equal(ui.opened.length, 0, 'no diff editor for a command, nor for the waiting edit');
  assert.equal(ui.shown!.detail, '$ ls');
  b.reply(ui.shown!.id, 'allowAlways');
  assert.deepEqual(await first, { decision: 'allowAlways' });
  await tick();
  assert.equal(ui.shown!.title, 'Edit src/api/x.py', 'the next one is shown');
  assert.equal(ui.opened.length, 1);
  const third = b.ask(editParams({ toolCallId: 'e3' }));
  b.denyAll();
  assert.deepEqual(await Promise.all([second, third]), [{ decision: 'deny' }, { decision: 'deny' }] satisfies PermissionAnswer[]);
  assert.equal(ui.shown, null);
});

// ---- the capability, and tool cards ----

test('capabilities: the client declares experimental.qwen.permissionRequests and keeps other experimental keys', () => {
  const caps: ClientCapabilities = { experimental: { other: 1, qwen: { x: true } } };
  qwenCapabilitiesFeature.fillClientCapabilities(caps);
  assert.deepEqual(caps.experimental, { other: 1, qwen: { x: true, permissionRequests: true } });
  const empty: ClientCapabilities = {};
  qwenCapabilitiesFeature.fillClientCapabilities(empty);
  assert.deepEqual(empty.experimental, { qwen: { permissionRequests: true } });
});

test('tool cards: an edit shows its workspace-relative path and one-line result, and the decision from toolResult', () => {
  const t = new Transcript((p) => p.replace(/^\/ws\//, ''));
  const [, a] = t.begin('fix it');
  const base = { sessionId: 's1', turnId: 't1' };
  t.apply({ ...base, seq: 0, kind: 'toolCall', tool: { id: 'e1', name: 'edit', args: { file_path: '/ws/src/x.py', old_string: 'a', new_string: 'b' } } });
  const patch = t.apply({ ...base, seq: 1, kind: 'toolResult', text: 'Declined: edit src/x.py', tool: { id: 'e1', name: 'edit', isError: true, decision: 'deny' } });
  assert.ok(patch && patch.op === 'tool' && patch.id === a.id);
  const { id, name, detail, result, isError, decision } = patch.card;
  assert.deepEqual({ id, name, detail, result, isError, decision }, { id: 'e1', name: 'edit', detail: 'src/x.py', result: 'Declined: edit src/x.py', isError: true, decision: 'deny' });
  const read = t.apply({ ...base, seq: 2, kind: 'toolResult', text: 'ok', tool: { id: 'r1', name: 'read_file' } });
  assert.ok(read && read.op === 'tool' && !('decision' in read.card), 'a read has no decision');
});
