// The protocol layer against the real Python server over stdio (vscode-jsonrpc, as the
// language client uses it): streaming, cancel with the partial answer kept, contextStatus,
// skillsChanged, sessions, errors keyed by data.kind, and memory through src/memory.ts as the
// extension runs it (remember → list → forget, or the friendly fallback on a server without memory).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CancellationTokenSource, ResponseError } from 'vscode-jsonrpc/node';
import { startScripted, startServer, tempDir, waitFor } from './support';
import type { Scripted, Server } from './support';
import { Transcript } from '../src/transcript';
import { describeError, isCancelled } from '../src/errors';
import { forget, forgetCandidates, isMethodNotFound, loadMemoryTree, memoryNotice, NO_MEMORY_SUPPORT, rememberSelection } from '../src/memory';
import type { MemoryTree } from '../src/memory';
import type { Send } from '../src/rpc.generated';
import type { ChatEvent, ChatResult, ContextResult, ContextStatus, MemoryChanged, SessionResumeResult, SkillsChanged, SkillsListResult } from '../src/shared/protocol';

const ANSWER = 'Here is code:\n\n```python\nprint("hi")\n```\n\nDone.';
let fast: Scripted;
let slow: Scripted;
const servers: Server[] = [];

function workspace(): string {
  const ws = tempDir('qwen-ws-');
  const skill = path.join(ws, '.qwen', 'skills', 'api-helper');
  mkdirSync(skill, { recursive: true });
  writeFileSync(path.join(skill, 'SKILL.md'), '---\nname: api-helper\ndescription: Helps with API handlers\npaths: ["src/api/**"]\n---\nSteps.\n');
  const broken = path.join(ws, '.qwen', 'skills', 'broken');
  mkdirSync(broken, { recursive: true });
  writeFileSync(path.join(broken, 'SKILL.md'), '---\nname: broken\ndescription: [unclosed\n---\nbody\n');
  mkdirSync(path.join(ws, 'src', 'api'), { recursive: true });
  writeFileSync(path.join(ws, 'src', 'api', 'users.py'), 'def users():\n    return []\n');
  return ws;
}

async function server(scripted: Scripted, ws = workspace()): Promise<Server> {
  const s = await startServer(ws, scripted.baseUrl);
  servers.push(s);
  return s;
}

const events = (s: Server): ChatEvent[] => s.notifications.filter((n) => n.method === 'qwen/chatEvent').map((n) => n.params);

before(async () => {
  fast = await startScripted(ANSWER);
  slow = await startScripted(Array.from({ length: 400 }, (_, i) => `word${i}`).join(' '), 0.05);
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  fast.stop();
  slow.stop();
});

test('qwen/chat streams text events in seq order; folded into the transcript they equal the result', async () => {
  const s = await server(fast);
  const t = new Transcript();
  t.begin('hello');
  s.listeners.push((m, ev: ChatEvent) => m === 'qwen/chatEvent' && void t.apply(ev));
  const r: ChatResult = await s.conn.sendRequest('qwen/chat', { prompt: 'hello' });
  assert.equal(r.text, ANSWER);
  assert.equal(r.finishReason, 'stop');
  const evs = events(s).filter((e) => e.turnId === r.turnId);
  assert.deepEqual(evs.map((e) => e.seq), evs.map((_, i) => i), 'seq counts from 0 without gaps');
  assert.equal(evs.filter((e) => e.kind === 'text').map((e) => e.text).join(''), ANSWER);
  assert.equal(t.messages[1].text, ANSWER, 'the reducer rebuilt the same text from the events');
  const status = await waitFor(() => s.notifications.find((n) => n.method === 'qwen/contextStatus')?.params as ContextStatus, 'contextStatus');
  assert.equal(status.sessionId, r.sessionId);
  assert.ok(status.window > 0 && status.percentLeft > 0 && status.percentLeft <= 100);
  assert.ok(['ok', 'warn', 'auto', 'hard'].includes(status.level));
  // the session resumes with both messages
  const resumed: SessionResumeResult = await s.conn.sendRequest('qwen/sessions/resume', { sessionId: r.sessionId });
  assert.deepEqual(resumed.messages.map((m) => m.role), ['user', 'assistant']);
  assert.equal(resumed.messages[1].text, ANSWER);
  const ctx: ContextResult = await s.conn.sendRequest('qwen/context', { sessionId: r.sessionId });
  assert.ok(ctx.sections.length > 0 && ctx.totalTokens > 0 && ctx.thresholds.hard > ctx.thresholds.warn);
});

test('Stop: cancelling through the token answers -32800 and the partial answer is kept and resumable', async () => {
  const s = await server(slow);
  const t = new Transcript();
  t.begin('long please');
  s.listeners.push((m, ev: ChatEvent) => m === 'qwen/chatEvent' && void t.apply(ev));
  const cts = new CancellationTokenSource();
  const pending = s.conn.sendRequest('qwen/chat', { prompt: 'long please' }, cts.token);
  await waitFor(() => t.messages[1].text.length > 20, 'some streamed text');
  t.stop();
  cts.cancel();
  const err = await pending.then(
    () => assert.fail('a cancelled chat must not succeed'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ResponseError);
  assert.equal((err as ResponseError<unknown>).code, -32800);
  assert.ok(isCancelled(err));
  const final = t.end({ cancelled: true })!;
  assert.equal(final.interrupted, true);
  assert.ok(final.text.startsWith('word0 word1'), 'the partial answer stays');
  assert.ok(!final.text.includes('word399'), 'the answer was cut short');
  const sessionId = events(s)[0].sessionId;
  const resumed: SessionResumeResult = await s.conn.sendRequest('qwen/sessions/resume', { sessionId });
  assert.ok(resumed.messages.some((m) => m.role === 'assistant' && m.text.startsWith('word0')), 'the interrupted answer was recorded');
});

test('opening a file under paths: sends qwen/skillsChanged naming the skill and the trigger; skills/list shows errors', async () => {
  const ws = workspace();
  const s = await server(fast, ws);
  const list: SkillsListResult = await s.conn.sendRequest('qwen/skills/list', {});
  assert.ok(list.skills.some((k) => k.name === 'api-helper' && k.conditional && !k.active));
  assert.ok(list.errors.some((e) => e.path.includes('broken')), 'the broken skill is reported with its path');
  const file = path.join(ws, 'src', 'api', 'users.py');
  await s.conn.sendNotification('textDocument/didOpen', { textDocument: { uri: `file://${file}`, languageId: 'python', version: 1, text: 'def users():\n    return []\n' } });
  const change = await waitFor(
    () => s.notifications.find((n) => n.method === 'qwen/skillsChanged' && (n.params as SkillsChanged).activated.includes('api-helper'))?.params as SkillsChanged,
    'skillsChanged',
  );
  assert.equal(change.trigger, `file://${file}`);
});

test('errors carry data.kind: a dead endpoint maps to Open settings, an unknown session to not_found', async () => {
  const ws = workspace();
  // Nothing listens on this port: a connect error, keyed by kind.
  const s = await startServer(ws, 'http://127.0.0.1:9/v1');
  servers.push(s);
  const err = await s.conn.sendRequest('qwen/chat', { prompt: 'x' }).then(
    () => assert.fail('must fail'),
    (e: unknown) => e,
  );
  const inline = describeError(err);
  assert.equal(inline.kind, 'connect');
  assert.deepEqual(inline.actions, ['configureModel', 'openSettings', 'retry']);
  // The setting is named as the editor has it (the server says model.baseUrl, as ~/.qwen/settings.json spells it).
  assert.match(inline.message, /qwen\.model\.baseUrl/);
  assert.doesNotMatch(inline.message, /(?<![\w.])model\.baseUrl/);
  const unknown = await s.conn.sendRequest('qwen/sessions/resume', { sessionId: 'nope' }).then(
    () => assert.fail('must fail'),
    (e: unknown) => e,
  );
  assert.equal(describeError(unknown).kind, 'not_found');
});

const memoryPaths = (tree: MemoryTree): string[] => (tree.kind === 'groups' ? tree.groups.flatMap((g) => g.rows.map((r) => r.path)) : []);

test('memory: "Remember this convention" → Memory view → forget round trip; a server without memory gets the friendly line', async () => {
  const ws = workspace();
  const s = await server(fast, ws);
  const send: Send = (type, params) => s.conn.sendRequest(type, params);
  const commands: string[] = s.initializeResult?.capabilities?.executeCommandProvider?.commands ?? [];
  const sel = { text: 'Tests in this repository never mock the database; they use the sqlite fixture in tests/conftest.py.', uri: `file://${path.join(ws, 'src', 'api', 'users.py')}` };
  const supported = await s.conn.sendRequest('qwen/memory/list', {}).then(
    () => true,
    (err: unknown) => {
      assert.ok(isMethodNotFound(err), `qwen/memory/list failed with something other than -32601: ${String(err)}`);
      return false;
    },
  );
  if (!supported) {
    // Today's server: the view shows one friendly line and the command says the same, no error.
    assert.deepEqual(await loadMemoryTree(send), { kind: 'message', text: NO_MEMORY_SUPPORT, icon: 'info' });
    assert.deepEqual(await rememberSelection(send, commands, sel), { kind: 'unsupported' });
    return;
  }
  const changes = (): MemoryChanged[] => s.notifications.filter((n) => n.method === 'qwen/memoryChanged').map((n) => n.params);
  const outcome = await rememberSelection(send, commands, sel);
  assert.equal(outcome.kind, 'saved', `remember failed: ${JSON.stringify(outcome)}`);
  const saved = outcome.kind === 'saved' ? outcome.result : assert.fail();
  assert.equal(saved.scope, 'project');
  assert.equal(saved.type, 'feedback');
  assert.ok(existsSync(saved.path), 'the memory file exists');
  const written = await waitFor(() => changes().find((c) => c.paths.includes(saved.path)), 'qwen/memoryChanged for the saved file');
  assert.equal(written.scope, 'project');
  assert.equal(memoryNotice(written, existsSync).path, saved.path, 'the chat notice opens the saved file');
  const tree = await loadMemoryTree(send);
  assert.ok(tree.kind === 'groups' && tree.groups.some((g) => g.scope === 'project' && g.rows.some((r) => r.path === saved.path)), 'listed under Project');
  const candidates = await forgetCandidates(send, 'mock the database');
  assert.ok(candidates.some((c) => c.path === saved.path), 'forgetCandidates finds it');
  assert.deepEqual(await forget(send, [saved.path]), [saved.path]);
  assert.ok(!existsSync(saved.path), 'the file is gone');
  const removed = await waitFor(() => changes().find((c) => c !== written && c.paths.includes(saved.path)), 'qwen/memoryChanged for the removal');
  assert.match(memoryNotice(removed, existsSync).text, /removed/);
  assert.ok(!memoryPaths(await loadMemoryTree(send)).includes(saved.path), 'no longer listed');
});
