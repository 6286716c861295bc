// The Memory view's and memory commands' pure logic (src/memory.ts): grouping by scope, rows,
// the -32601 fallback, which request "Remember this convention" sends, the secret refusal, the
// forget confirmation and summary, and the chat notice for qwen/memoryChanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseError } from 'vscode-jsonrpc/node';
import {
  candidatePicks,
  forgetConfirmation,
  forgetSummary,
  groupMemories,
  loadMemoryTree,
  memoryNotice,
  memoryRow,
  NO_MEMORIES,
  NO_MEMORY_SUPPORT,
  rememberSelection,
  conventionText,
  savedNotice,
  undoneNotice,
  tildify,
} from '../src/memory';
import type { Send } from '../src/rpc.generated';
import type { MemoryItem, MemoryScope } from '../src/shared/protocol';

const HOME = '/home/ann';
const P = `${HOME}/.qwen/projects/-w/memory`;
const mem = (scope: MemoryScope, name: string, extra: Partial<MemoryItem> = {}): MemoryItem => ({
  path: `${P}/feedback/${name}.md`,
  scope,
  type: 'feedback',
  name,
  description: `about ${name}`,
  age: 'today',
  ...extra,
});

/** A transport that records what was sent and answers from a table (a function to throw). */
function recorder(answers: Record<string, unknown | (() => never)>): { send: Send; sent: [string, unknown][] } {
  const sent: [string, unknown][] = [];
  const send: Send = async ({ method }, params) => {
    sent.push([method, params]);
    const a = answers[method];
    if (typeof a === 'function') return (a as () => never)();
    if (a === undefined) throw new ResponseError(-32601, `Unhandled method ${method}`);
    return a as never;
  };
  return { send, sent };
}

test('memory view: groups by scope in user → project → team order, unknown scopes last, rows in server order', () => {
  const groups = groupMemories([mem('team', 't1'), mem('project', 'p2'), mem('odd' as MemoryScope, 'o1'), mem('user', 'u1'), mem('project', 'p1')]);
  assert.deepEqual(groups.map((g) => [g.scope, g.label]), [['user', 'User'], ['project', 'Project'], ['team', 'Team'], ['odd', 'odd']]);
  assert.deepEqual(groups[1].rows.map((r) => r.label), ['p2', 'p1'], 'the server decides the order inside a scope');
  assert.deepEqual(groupMemories([]), []);
});

test('memory view: a row shows name, description and age, and opens the file', () => {
  const row = memoryRow(mem('project', 'no-db-mocks', { description: 'Tests never mock the database', age: '47 days ago' }));
  assert.equal(row.label, 'no-db-mocks');
  assert.equal(row.description, 'Tests never mock the database · 47 days ago');
  assert.equal(row.path, `${P}/feedback/no-db-mocks.md`);
  assert.equal(row.tooltip, `no-db-mocks\nTests never mock the database\nfeedback · project · 47 days ago\n${P}/feedback/no-db-mocks.md`);
  const unnamed = memoryRow(mem('user', '', { path: `${HOME}/.qwen/memories/user/prefers-tabs.md`, description: '', age: 'yesterday' }));
  assert.equal(unnamed.label, 'prefers-tabs', 'no name: the file name');
  assert.equal(unnamed.description, 'yesterday');
});

test('memory view: -32601 from qwen/memory/list becomes the friendly line; an empty list a hint; other errors propagate', async () => {
  const old = recorder({});
  assert.deepEqual(await loadMemoryTree(old.send), { kind: 'message', text: NO_MEMORY_SUPPORT, icon: 'info' });
  assert.equal(NO_MEMORY_SUPPORT, 'This server has no memory support yet (update qwen-lsp)');
  assert.deepEqual(await loadMemoryTree(recorder({ 'qwen/memory/list': { memories: [] } }).send), { kind: 'message', text: NO_MEMORIES, icon: 'info' });
  const full = await loadMemoryTree(recorder({ 'qwen/memory/list': { memories: [mem('project', 'a'), mem('user', 'b')] } }).send);
  assert.equal(full.kind, 'groups');
  assert.deepEqual(full.kind === 'groups' && full.groups.map((g) => g.scope), ['user', 'project']);
  const broken = recorder({ 'qwen/memory/list': () => { throw new ResponseError(-32603, 'boom', { kind: 'internal' }); } });
  await assert.rejects(loadMemoryTree(broken.send), /boom/);
});

test('remember: uses the server command qwen.rememberSelection when declared, else qwen/memory/remember as a project feedback memory', async () => {
  const saved = { path: `${P}/feedback/x.md`, scope: 'project', type: 'feedback', name: 'x', description: 'x' };
  const sel = { text: 'Never mock the database', uri: 'file:///w/tests/test_db.py' };
  const viaCommand = recorder({ 'workspace/executeCommand': saved });
  assert.deepEqual(await rememberSelection(viaCommand.send, ['qwen.addToProjectRules', 'qwen.rememberSelection'], sel), { kind: 'saved', result: saved });
  assert.deepEqual(viaCommand.sent, [['workspace/executeCommand', { command: 'qwen.rememberSelection', arguments: [sel] }]]);
  const viaRequest = recorder({ 'qwen/memory/remember': saved });
  assert.deepEqual(await rememberSelection(viaRequest.send, ['qwen.addToProjectRules'], sel), { kind: 'saved', result: saved });
  assert.deepEqual(viaRequest.sent, [['qwen/memory/remember', { text: sel.text, type: 'feedback', scope: 'project' }]]);
  // The user's words: sent with the selection to the server's command, instead of it to qwen/memory/remember.
  const worded = { ...sel, text: 'db = connect()', convention: 'Tests here never mock the database' };
  const wordsViaCommand = recorder({ 'workspace/executeCommand': saved });
  await rememberSelection(wordsViaCommand.send, ['qwen.rememberSelection'], worded);
  assert.deepEqual(wordsViaCommand.sent, [['workspace/executeCommand', { command: 'qwen.rememberSelection', arguments: [worded] }]]);
  const wordsViaRequest = recorder({ 'qwen/memory/remember': saved });
  await rememberSelection(wordsViaRequest.send, [], worded);
  assert.deepEqual(wordsViaRequest.sent, [['qwen/memory/remember', { text: 'Tests here never mock the database', type: 'feedback', scope: 'project' }]]);
  assert.equal(savedNotice('memory', '~/.qwen/projects/-w/memory/feedback/x.md', 'project'), 'Remembered as a project memory in ~/.qwen/projects/-w/memory/feedback/x.md.');
  assert.equal(savedNotice('memory', '~/m/x.md', 'project', 'Tests never mock the DB'), 'Remembered “Tests never mock the DB” as a project memory in ~/m/x.md.');
  assert.deepEqual(undoneNotice('x', true), { severity: 'info', text: 'Forgot “x”.' });
  assert.equal(undoneNotice('x', false).severity, 'warning');
  assert.equal(savedNotice('rules', 'QWEN.md'), 'Added to QWEN.md.', '"Add to QWEN.md" reports the same way');
});

test('remember: -32601 is "no memory support", a secret refusal names its rule, anything else is a failure', async () => {
  const sel = { text: 'token ghp_x' };
  assert.deepEqual(await rememberSelection(recorder({}).send, [], sel), { kind: 'unsupported' });
  const secret = recorder({ 'qwen/memory/remember': () => { throw new ResponseError(-31010, 'Refused: the text matches the secret rule github-pat', { kind: 'secret', rule: 'github-pat' }); } });
  assert.deepEqual(await rememberSelection(secret.send, [], sel), { kind: 'refused', message: 'Not remembered: Refused: the text matches the secret rule github-pat' });
  const ruleOnlyInData = recorder({ 'qwen/memory/remember': () => { throw new ResponseError(-31010, 'Refused: secret', { kind: 'secret', rule: 'aws-access-token' }); } });
  assert.deepEqual(await rememberSelection(ruleOnlyInData.send, [], sel), { kind: 'refused', message: 'Not remembered: Refused: secret (rule: aws-access-token)' });
  const symlinked = recorder({ 'qwen/memory/remember': () => { throw new ResponseError(-31011, '', { kind: 'memory_security' }); } });
  assert.deepEqual(await rememberSelection(symlinked.send, [], sel), { kind: 'refused', message: 'Not remembered: The team-memory folder leads out of the repository.' });
  const other = recorder({ 'qwen/memory/remember': () => { throw new ResponseError(-32602, 'Invalid params — text: too short'); } });
  const r = await rememberSelection(other.send, [], sel);
  assert.equal(r.kind, 'failed');
});

test('forget: candidates as pick items, a confirmation naming every file, a summary of what was not removed', () => {
  const picks = candidatePicks([{ path: `${P}/feedback/a.md`, name: 'a', description: 'about a', reason: 'mentions mocks' }, { path: '/elsewhere/b.md', name: '', description: '', reason: '' }], HOME);
  assert.deepEqual(picks, [
    { label: 'a', description: 'mentions mocks', detail: 'about a — ~/.qwen/projects/-w/memory/feedback/a.md', path: `${P}/feedback/a.md`, picked: true },
    { label: 'b.md', description: '', detail: '/elsewhere/b.md', path: '/elsewhere/b.md', picked: true },
  ]);
  const one = forgetConfirmation([picks[0]], HOME);
  assert.equal(one.message, 'Forget “a”?');
  assert.equal(one.detail, 'This file is deleted and the memory index is updated:\n~/.qwen/projects/-w/memory/feedback/a.md');
  const two = forgetConfirmation(picks, HOME);
  assert.equal(two.message, 'Forget 2 memories: “a”, “b.md”?');
  assert.ok(two.detail.endsWith('~/.qwen/projects/-w/memory/feedback/a.md\n/elsewhere/b.md'));
  assert.deepEqual(forgetSummary(['/x/a.md'], ['/x/a.md'], HOME), { severity: 'info', text: 'Forgot 1 memory.' });
  assert.deepEqual(forgetSummary([`${HOME}/a.md`, `${HOME}/b.md`], [`${HOME}/a.md`], HOME), { severity: 'warning', text: 'Forgot 1 memory. Not removed: ~/b.md' });
  assert.deepEqual([tildify(HOME, HOME), tildify(`${HOME}x/a`, HOME), tildify('/a', '')], ['~', `${HOME}x/a`, '/a']);
});

test('memoryChanged notice: names saved and removed files, leaves out MEMORY.md, opens the first saved file', () => {
  const a = `${P}/feedback/no-db-mocks.md`;
  const gone = `${P}/project/old-deadline.md`;
  const exists = (p: string) => p !== gone;
  assert.deepEqual(memoryNotice({ scope: 'project', paths: [a, `${P}/MEMORY.md`] }, exists), { text: 'Memory updated (project): saved no-db-mocks.md', path: a });
  assert.deepEqual(memoryNotice({ scope: 'project', paths: [gone] }, exists), { text: 'Memory updated (project): removed old-deadline.md', path: undefined });
  assert.deepEqual(memoryNotice({ scope: 'project', paths: [a, gone] }, exists).text, 'Memory updated (project): saved no-db-mocks.md; removed old-deadline.md');
  const many = ['a', 'b', 'c', 'd', 'e'].map((n) => `${P}/user/${n}.md`);
  assert.equal(memoryNotice({ scope: 'user', paths: many }, () => true).text, 'Memory updated (user): saved a.md, b.md, c.md +2 more');
  assert.equal(memoryNotice({ scope: 'team', paths: [`${P}/MEMORY.md`] }, () => true).text, 'Memory updated (team)');
});

test('remember: a convention written as a comment is saved without its markers or its "Convention:" label; other text as it is', () => {
  assert.equal(conventionText('# Convention: timestamps are UTC everywhere', 'python'), 'timestamps are UTC everywhere');
  assert.equal(conventionText('  // Rule: no default exports\n  // in src/api', 'typescript'), 'no default exports\nin src/api');
  assert.equal(conventionText('/** Convention: one class per file */', 'java'), 'one class per file');
  assert.equal(conventionText('-- keep migrations reversible', 'sql'), 'keep migrations reversible');
  assert.equal(conventionText('# Testing\n\nNever mock the database', 'markdown'), '# Testing\n\nNever mock the database', 'a Markdown heading is not a comment');
  assert.equal(conventionText('x = 1  # keep', 'python'), 'x = 1  # keep', 'code with a trailing comment is kept whole');
  assert.equal(conventionText('#', 'python'), '#', 'nothing left: the text as it was');
});
