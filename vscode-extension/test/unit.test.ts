// Pure modules of the extension host: transcript reducer, frame coalescer, error mapping,
// settings mapping, server-command resolution, meter, webview HTML.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Transcript, toolDetail } from '../src/transcript';
import { FrameCoalescer, mergePatches } from '../src/coalesce';
import type { Timer } from '../src/coalesce';
import { describeError, isCancelled } from '../src/errors';
import { buildServerSettings, explicitValue } from '../src/settings';
import { resolveServerCommand, ServerNotFound } from '../src/serverCommand';
import type { Probes } from '../src/serverCommand';
import { meterView } from '../src/meter';
import { chatHtml } from '../src/html';
import type { ChatEvent } from '../src/shared/protocol';
import type { StreamPatch } from '../src/shared/messages';

const ev = (seq: number, kind: ChatEvent['kind'], extra: Partial<ChatEvent> = {}): ChatEvent => ({ sessionId: 's1', turnId: 't1', seq, kind, ...extra });

test('transcript: a streamed turn accumulates text in order, drops duplicate seq, ends with the full text', () => {
  const t = new Transcript();
  const [user, a] = t.begin('hi');
  assert.equal(user.text, 'hi');
  assert.deepEqual(t.apply(ev(0, 'text', { text: 'Hel' })), { op: 'append', id: a.id, text: 'Hel' });
  assert.equal(t.apply(ev(0, 'text', { text: 'Hel' })), undefined, 'a repeated seq is ignored');
  t.apply(ev(1, 'text', { text: 'lo' }));
  assert.equal(t.apply(ev(2, 'text', { turnId: 'other', text: 'X' })), undefined, 'another turn is ignored');
  assert.equal(t.sessionId, 's1');
  const final = t.end({ sessionId: 's1', text: 'Hello' })!;
  assert.equal(final.text, 'Hello');
  assert.equal(final.streaming, false);
  assert.equal(final.interrupted, undefined);
  assert.equal(t.running, false);
});

test('transcript: Stop keeps the partial answer, marks it interrupted and discards late chunks', () => {
  const t = new Transcript();
  t.begin('q');
  t.apply(ev(0, 'text', { text: 'partial ' }));
  t.stop();
  assert.equal(t.running, true, 'still running until the server confirms');
  assert.equal(t.apply(ev(1, 'text', { text: 'late' })), undefined);
  const final = t.end({ cancelled: true })!;
  assert.equal(final.text, 'partial ');
  assert.equal(final.interrupted, true);
});

test('transcript: tool calls become compact cards updated by their result', () => {
  const t = new Transcript();
  const [, a] = t.begin('q');
  const call = t.apply(ev(0, 'toolCall', { tool: { id: 'c1', name: 'read_file', args: { path: 'src/a.ts' } } }));
  assert.deepEqual(call, { op: 'tool', id: a.id, card: { id: 'c1', name: 'read_file', detail: 'src/a.ts' } });
  const res = t.apply(ev(1, 'toolResult', { text: 'Read 10 lines\nmore', tool: { id: 'c1', name: 'read_file', isError: false } }));
  assert.equal(res?.op === 'tool' && res.card.result, 'Read 10 lines more');
  assert.equal(t.messages[1].tools?.length, 1);
  assert.equal(toolDetail({ pattern: 'x'.repeat(300) }).length, 120);
});

test('transcript: an error keeps what streamed and carries the inline error', () => {
  const t = new Transcript();
  t.begin('q');
  t.apply(ev(0, 'text', { text: 'so far' }));
  const final = t.end({ error: { kind: 'auth', message: 'bad key', actions: ['setApiKey'] } })!;
  assert.equal(final.text, 'so far');
  assert.equal(final.error?.kind, 'auth');
});

test('transcript: load replaces the messages from a resumed session', () => {
  const t = new Transcript();
  t.begin('x');
  t.load({ sessionId: 'abc', messages: [{ role: 'user', text: 'u' }, { role: 'assistant', text: 'a' }], promptTokens: 5 });
  assert.equal(t.sessionId, 'abc');
  assert.equal(t.running, false);
  assert.deepEqual(t.messages.map((m) => m.text), ['u', 'a']);
});

function fakeTimer(): Timer & { fire(): void; pending: number } {
  let fn: (() => void) | undefined;
  return {
    set: (f) => ((fn = f), 1),
    clear: () => (fn = undefined),
    fire() {
      const f = fn;
      fn = undefined;
      f?.();
    },
    get pending() {
      return fn ? 1 : 0;
    },
  };
}

test('coalescer: patches within one frame go out as one merged batch, in order', () => {
  const timer = fakeTimer();
  const batches: StreamPatch[][] = [];
  const c = new FrameCoalescer((b) => batches.push(b), 16, timer);
  for (const s of ['a', 'b', 'c']) c.push({ op: 'append', id: 'm', text: s });
  c.push({ op: 'tool', id: 'm', card: { id: 't', name: 'glob', detail: '*' } });
  c.push({ op: 'append', id: 'm', text: 'd' });
  assert.equal(batches.length, 0, 'nothing is sent before the frame ends');
  timer.fire();
  assert.deepEqual(batches, [[{ op: 'append', id: 'm', text: 'abc' }, { op: 'tool', id: 'm', card: { id: 't', name: 'glob', detail: '*' } }, { op: 'append', id: 'm', text: 'd' }]]);
  c.push({ op: 'append', id: 'm', text: 'e' });
  c.flush();
  assert.equal(batches.length, 2);
  assert.equal(timer.pending, 0, 'flush cancels the frame timer');
  c.push({ op: 'append', id: 'm', text: 'f' });
  c.discard();
  timer.fire();
  assert.equal(batches.length, 2, 'discarded patches are never sent');
  assert.deepEqual(mergePatches([{ op: 'append', id: 'a', text: '1' }, { op: 'append', id: 'b', text: '2' }]).length, 2);
});

test('errors: keyed on data.kind, not the numeric code', () => {
  const auth = describeError({ code: -31002, message: 'The API key was rejected', data: { kind: 'auth' } });
  assert.equal(auth.kind, 'auth');
  assert.ok(auth.actions.includes('setApiKey'));
  const oldCode = describeError({ code: -32002, message: 'x', data: { kind: 'config' } });
  assert.deepEqual(oldCode.actions, ['setApiKey', 'openSettings']);
  assert.equal(describeError({ code: -32002, message: 'no data' }).kind, 'unknown', 'a code alone says nothing');
  assert.equal(describeError(new Error('Client is not running')).kind, 'server_down');
  assert.ok(isCancelled({ code: -32800, message: 'cancelled' }));
  assert.ok(!isCancelled({ code: -31000, message: 'x' }));
});

test('settings: only explicitly set values are sent, nested; machine keys only from user settings', () => {
  const values: Record<string, { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }> = {
    'model.name': { globalValue: 'g', workspaceValue: 'w' },
    'model.baseUrl': { workspaceValue: 'https://evil.example/v1' },
    'model.contextWindow': { workspaceFolderValue: 32768, globalValue: 1 },
    'tools.approvalMode': { globalValue: 'plan' },
    'memory.enabled': { globalValue: false },
  };
  const out = buildServerSettings((k) => values[k]);
  assert.deepEqual(out, { model: { name: 'w', contextWindow: 32768 }, tools: { approvalMode: 'plan' }, memory: { enabled: false } });
  assert.equal(explicitValue({ globalValue: 'https://ok/v1', workspaceValue: 'https://evil/v1' }, 'machine'), 'https://ok/v1');
  assert.deepEqual(buildServerSettings(() => undefined), {});
});

function probes(over: Partial<Probes> & { exec?: string[]; pkg?: string[] }): Probes {
  return {
    isExecutable: async (f) => (over.exec ?? []).includes(f),
    hasPackage: async (p) => (over.pkg ?? []).includes(p),
    pythonInterpreter: over.pythonInterpreter ?? (async () => undefined),
    env: over.env ?? { PATH: '/a:/b' },
    platform: 'linux',
  };
}

test('server command: setting, then the Python extension interpreter, then PATH', async () => {
  assert.deepEqual(await resolveServerCommand('/opt/qwen-lsp', probes({ exec: ['/opt/qwen-lsp'] })), { command: '/opt/qwen-lsp', args: ['serve', '--stdio'], source: 'setting' });
  assert.deepEqual(await resolveServerCommand('/v/bin/python3', probes({ exec: ['/v/bin/python3'], pkg: ['/v/bin/python3'] })), {
    command: '/v/bin/python3',
    args: ['-m', 'qwen_lsp', 'serve', '--stdio'],
    source: 'setting',
  });
  const py = probes({ pythonInterpreter: async () => '/env/python', pkg: ['/env/python'], exec: ['/b/qwen-lsp'] });
  assert.equal((await resolveServerCommand('', py)).source, 'python-extension');
  const noPkg = probes({ pythonInterpreter: async () => '/env/python', exec: ['/b/qwen-lsp'] });
  assert.deepEqual(await resolveServerCommand(undefined, noPkg), { command: '/b/qwen-lsp', args: ['serve', '--stdio'], source: 'path' });
});

test('server command: clear messages with the fix when nothing is found', async () => {
  await assert.rejects(resolveServerCommand('/missing', probes({})), (e: Error) => e instanceof ServerNotFound && /not an executable/.test(e.message));
  await assert.rejects(resolveServerCommand('/v/python', probes({ exec: ['/v/python'] })), /-m pip install qwen-lsp/);
  await assert.rejects(resolveServerCommand('', probes({})), /pipx install qwen-lsp.*qwen\.server\.path/);
  await assert.rejects(resolveServerCommand('', probes({ pythonInterpreter: async () => '/e/python' })), /"\/e\/python" -m pip install qwen-lsp/);
});

test('meter: percent left, warning colour at warn and auto, error colour at hard', () => {
  const base = { sessionId: 's', promptTokens: 1000, window: 10000, percentLeft: 90 };
  assert.equal(meterView({ ...base, level: 'ok' }).text, '$(dashboard) Qwen 90% left');
  assert.equal(meterView({ ...base, level: 'ok' }).background, undefined);
  assert.equal(meterView({ ...base, level: 'warn', percentLeft: 25 }).background, 'statusBarItem.warningBackground');
  assert.equal(meterView({ ...base, level: 'auto' }).background, 'statusBarItem.warningBackground');
  const hard = meterView({ ...base, level: 'hard', percentLeft: 3.4 });
  assert.equal(hard.background, 'statusBarItem.errorBackground');
  assert.match(hard.text, /3% left/);
  assert.match(hard.tooltip, /1,000 of 10,000 tokens/);
});

test('html: strict CSP with the nonce on the one script, no unsafe-inline or eval', () => {
  const html = chatHtml({ cspSource: 'https://x.vscode-cdn.net', nonce: 'abc123', scriptUri: 'https://x/w.js', styleUri: 'https://x/w.css' });
  const csp = /content="([^"]+)"/.exec(html)![1];
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'nonce-abc123'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal((html.match(/<script /g) ?? []).length, 1);
  assert.match(html, /<script nonce="abc123" src="https:\/\/x\/w.js">/);
});
