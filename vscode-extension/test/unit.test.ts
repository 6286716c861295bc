// Pure modules of the extension host: transcript reducer, frame coalescer, error mapping,
// settings mapping, server-command resolution, meter, webview HTML.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Transcript, toolDetail } from '../src/transcript';
import { FrameCoalescer, mergePatches } from '../src/coalesce';
import type { Timer } from '../src/coalesce';
import { describeError, isCancelled } from '../src/errors';
import { buildServerSettings, explicitValue, SERVER_SETTINGS } from '../src/settings';
import { compareVersions, resolveServerCommand, ServerNotFound, staleServerWarning } from '../src/serverCommand';
import type { Probes } from '../src/serverCommand';
import { figureOfReport, figureWords, meterView } from '../src/meter';
import { chatHtml } from '../src/html';
import { linkTarget } from '../src/links';
import type { ChatEvent } from '../src/shared/protocol';
import type { StreamPatch } from '../src/shared/messages';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { EXT_ROOT } from './support';

const manifest = JSON.parse(readFileSync(path.join(EXT_ROOT, 'package.json'), 'utf8'));

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
  assert.deepEqual(call, { op: 'tool', id: a.id, card: { id: 'c1', key: '0', at: 0, name: 'read_file', detail: 'src/a.ts', args: '{\n  "path": "src/a.ts"\n}' } });
  const res = t.apply(ev(1, 'toolResult', { text: 'Read 10 lines\nmore', tool: { id: 'c1', name: 'read_file', isError: false } }));
  assert.equal(res?.op === 'tool' && res.card.result, 'Read 10 lines more');
  assert.equal(t.messages[1].tools?.length, 1);
  assert.equal(toolDetail({ pattern: 'x'.repeat(300) }).length, 120);
});

test('transcript: tool-call ids reused every round (call_0) cannot collide: each result lands on its own round\'s card', () => {
  const t = new Transcript();
  const [, a] = t.begin('q');
  let seq = 0;
  t.apply(ev(seq++, 'text', { text: 'first.' }));
  t.apply(ev(seq++, 'toolCall', { tool: { id: 'call_0', name: 'read_file', args: { path: '/w/a.py' } } }));
  t.apply(ev(seq++, 'toolResult', { text: 'round one', tool: { id: 'call_0', name: 'read_file', isError: false, output: 'round one\nin full' } }));
  t.apply(ev(seq++, 'text', { text: 'list_users()' }));
  const call2 = t.apply(ev(seq++, 'toolCall', { tool: { id: 'call_0', name: 'grep', args: { pattern: 'def' } } }));
  const res2 = t.apply(ev(seq++, 'toolResult', { text: 'round two', tool: { id: 'call_0', name: 'grep', isError: false } }));
  t.apply(ev(seq++, 'text', { text: 'done' }));
  assert.ok(call2?.op === 'tool' && res2?.op === 'tool' && call2.card.key === res2.card.key, 'the result patch replaces round two\'s card');
  const final = t.end({ text: 'done' })!;
  assert.equal(final.id, a.id);
  assert.deepEqual(
    final.tools!.map((c) => [c.key, c.id, c.name, c.at, c.result, c.output]),
    [['0', 'call_0', 'read_file', 6, 'round one', 'round one\nin full'], ['1', 'call_0', 'grep', 18, 'round two', 'round two']],
  );
  assert.equal(final.tools![0].path, '/w/a.py', 'an absolute path is offered as a link');
  assert.equal(final.text, 'first.list_users()done', 'rows are placed by offset in the streamed text, kept over the last round\'s text');
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

test('transcript: a resumed session with a recap shows it as a recap line after its messages', () => {
  const t = new Transcript();
  t.load({ sessionId: 'abc', messages: [{ role: 'user', text: 'u' }, { role: 'assistant', text: 'a' }], promptTokens: 5, recap: 'Fixing CI. Next: rerun.' });
  assert.deepEqual(t.messages.map((m) => [m.role, m.text, m.tone]), [['user', 'u', undefined], ['assistant', 'a', undefined], ['status', 'Recap: Fixing CI. Next: rerun.', 'recap']]);
  t.load({ sessionId: 'abc', messages: [{ role: 'user', text: 'u' }], promptTokens: 5 });
  assert.deepEqual(t.messages.map((m) => m.role), ['user']);
});

test('transcript: a reopened failed turn shows its recorded error with the live actions, and Retry sends its prompt again', () => {
  const message = 'The model server at http://127.0.0.1:9/v1 failed (HTTP 500). Server said: upstream exploded';
  const t = new Transcript();
  t.load({
    sessionId: 'abc',
    messages: [
      { role: 'user', text: 'an old one' },
      { role: 'assistant', text: '', error: 'No answer was recorded for this message.' },
      { role: 'user', text: 'why is it slow?' },
      { role: 'assistant', text: '', error: message, errorKind: 'server' },
    ],
    promptTokens: 5,
  });
  const live = describeError({ message, data: { kind: 'server' } });
  assert.deepEqual(t.messages[3].error, live);
  assert.deepEqual(live.actions, ['retry']);
  // A file written before errors were recorded: the generic line, no actions.
  assert.deepEqual(t.messages[1].error, { kind: 'noAnswer', message: 'No answer was recorded for this message.', actions: [] });
  assert.equal(t.takeBackFailedTurn(), 'why is it slow?');
  assert.deepEqual(t.messages.map((m) => m.text), ['an old one', '']);
  assert.equal(t.takeBackFailedTurn(), undefined, 'the generic line offers no Retry');

  // Chat History resumes with a recap: its line after the failed turn does not make that turn an older one.
  t.load({ sessionId: 'abc', messages: [{ role: 'user', text: 'why is it slow?' }, { role: 'assistant', text: '', error: message, errorKind: 'server' }], promptTokens: 5, recap: 'Looking at a slow query.' });
  assert.equal(t.messages.at(-1)?.role, 'status');
  assert.equal(t.takeBackFailedTurn(), 'why is it slow?');
  assert.deepEqual(t.messages.map((m) => m.text), ['Recap: Looking at a slow query.']);

  t.load({ sessionId: 'abc', messages: [{ role: 'user', text: 'u' }, { role: 'assistant', text: '', error: 'rejected', errorKind: 'auth' }], promptTokens: 5 });
  assert.deepEqual(t.messages[1].error, { kind: 'auth', message: 'rejected', actions: ['setApiKey', 'retry'] });
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
  c.push({ op: 'tool', id: 'm', card: { id: 't', key: '0', at: 3, name: 'glob', detail: '*' } });
  c.push({ op: 'append', id: 'm', text: 'd' });
  assert.equal(batches.length, 0, 'nothing is sent before the frame ends');
  timer.fire();
  assert.deepEqual(batches, [[{ op: 'append', id: 'm', text: 'abc' }, { op: 'tool', id: 'm', card: { id: 't', key: '0', at: 3, name: 'glob', detail: '*' } }, { op: 'append', id: 'm', text: 'd' }]]);
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

test('B5 coalescer: the host batches for one frame (16 ms) from the first patch, and a steady stream sends one batch per frame', () => {
  const delays: number[] = [];
  let fn: (() => void) | undefined;
  const timer: Timer = { set: (f, ms) => (delays.push(ms), (fn = f), 1), clear: () => (fn = undefined) };
  const batches: StreamPatch[][] = [];
  const c = new FrameCoalescer((b) => batches.push(b), undefined, timer);
  // Three frames of a fast model: 20 tokens each, the timer firing between them.
  for (let frame = 0; frame < 3; frame++) {
    for (let k = 0; k < 20; k++) c.push({ op: 'append', id: 'm', text: `${frame}.${k} ` });
    const f = fn;
    fn = undefined;
    f?.();
  }
  assert.deepEqual(delays, [16, 16, 16], 'one timer per frame, armed by the first patch, never re-armed by later ones');
  assert.equal(batches.length, 3);
  assert.ok(batches.every((b) => b.length === 1), 'each frame is one merged append');
});

test('B9 a stream that arrives while no view can be posted to is in the next snapshot, still running', () => {
  const t = new Transcript();
  const [, a] = t.begin('q');
  // The host keeps folding qwen/chatEvent while the view is hidden (ChatController.detachHidden).
  for (const [i, w] of ['Written ', 'while ', 'hidden.'].entries()) t.apply(ev(i, 'text', { text: w }));
  t.apply(ev(3, 'toolCall', { tool: { id: 'c', name: 'glob', args: { pattern: '*.py' } } }));
  const snap = t.snapshot({ attachments: [], notices: [] });
  assert.equal(snap.running, true, 'the shown view continues the stream');
  const shown = snap.messages.find((m) => m.id === a.id)!;
  assert.equal(shown.text, 'Written while hidden.');
  assert.equal(shown.streaming, true);
  assert.deepEqual(shown.tools, [{ id: 'c', key: '0', at: 21, name: 'glob', detail: '*.py', args: '{\n  "pattern": "*.py"\n}' }]);
});

test('errors: keyed on data.kind, not the numeric code', () => {
  const auth = describeError({ code: -31002, message: 'The API key was rejected', data: { kind: 'auth' } });
  assert.equal(auth.kind, 'auth');
  assert.ok(auth.actions.includes('setApiKey'));
  const oldCode = describeError({ code: -32002, message: 'x', data: { kind: 'config' } });
  assert.deepEqual(oldCode.actions, ['configureModel', 'setApiKey', 'retry']);
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

test('settings: the approval mode comes from user settings; a workspace or folder value only makes it stricter', () => {
  const mode = (inspected: { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }) =>
    buildServerSettings((k) => (k === 'tools.approvalMode' ? inspected : undefined));
  // a repository's (or the model's) .vscode/settings.json cannot loosen it
  assert.deepEqual(mode({ workspaceValue: 'yolo' }), {});
  assert.deepEqual(mode({ globalValue: 'default', workspaceValue: 'yolo', workspaceFolderValue: 'auto-edit' }), { tools: { approvalMode: 'default' } });
  assert.deepEqual(mode({ globalValue: 'auto-edit', workspaceFolderValue: 'yolo' }), { tools: { approvalMode: 'auto-edit' } });
  // but it may tighten it
  assert.deepEqual(mode({ globalValue: 'yolo', workspaceValue: 'default' }), { tools: { approvalMode: 'default' } });
  assert.deepEqual(mode({ workspaceValue: 'plan' }), { tools: { approvalMode: 'plan' } });
  assert.deepEqual(mode({ globalValue: 'auto-edit', workspaceValue: 'plan', workspaceFolderValue: 'default' }), { tools: { approvalMode: 'plan' } });
  assert.deepEqual(mode({ globalValue: 'auto-edit', workspaceValue: 'nonsense' }), { tools: { approvalMode: 'auto-edit' } });
});

test('settings: an untrusted workspace sends folderTrust: false and reads user settings only; a trusted one sends no folderTrust', () => {
  const values: Record<string, { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }> = {
    'model.name': { globalValue: 'user-model', workspaceValue: 'repo-model' },
    'memory.autoExtract': { workspaceFolderValue: true },
    'tools.approvalMode': { globalValue: 'auto-edit', workspaceValue: 'plan' },
  };
  assert.deepEqual(buildServerSettings((k) => values[k], false), { folderTrust: false, model: { name: 'user-model' }, tools: { approvalMode: 'plan' } });
  assert.deepEqual(buildServerSettings((k) => values[k], true), { model: { name: 'repo-model' }, memory: { autoExtract: true }, tools: { approvalMode: 'plan' } });
  const restricted = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations as string[];
  for (const { key } of SERVER_SETTINGS) assert.ok(restricted.includes(`qwen.${key}`), `qwen.${key} is a restricted setting`);
  assert.ok(restricted.includes('qwen.server.path'));
});

test('settings: every server key of the README editor settings is contributed under qwen.* with a description and the scope the mapping reads', () => {
  const props = manifest.contributes.configuration.properties as Record<string, Record<string, unknown>>;
  const keys = [
    'model.name', 'model.baseUrl', 'model.contextWindow', 'model.maxOutputTokens', 'compression.threshold', 'memory.enabled', 'memory.autoExtract', 'memory.autoDream',
    'skills.enabled', 'editorContext.enabled', 'memory.enableAutoSkill', 'ui.enableFollowupSuggestions', 'ui.enableSpeculation', 'tools.approvalMode',
  ];
  assert.deepEqual(SERVER_SETTINGS.map((s) => s.key), keys);
  for (const { key, scope } of SERVER_SETTINGS) {
    const p = props[`qwen.${key}`];
    assert.ok(p, `qwen.${key} is contributed`);
    assert.equal(p.scope, scope === 'stricter' ? 'resource' : scope, `qwen.${key}: the manifest's scope is the one the mapping reads`);
    assert.ok(typeof (p.description ?? p.markdownDescription) === 'string', `qwen.${key} has a description`);
  }
  for (const key of ['memory.enabled', 'memory.autoExtract', 'memory.autoDream']) {
    assert.equal(props[`qwen.${key}`].type, 'boolean');
    assert.equal(props[`qwen.${key}`].default, true, `qwen.${key} defaults to on`);
  }
  assert.deepEqual([props['qwen.compression.threshold'].type, props['qwen.compression.threshold'].minimum, props['qwen.compression.threshold'].maximum], [['number', 'null'], 0, 1]);
  // Each background feature that costs tokens has one switch, defaulting as Qwen Code 0.24.4 does.
  for (const [key, on] of [['memory.enableAutoSkill', false], ['ui.enableFollowupSuggestions', true], ['ui.enableSpeculation', false]] as const) {
    assert.equal(props[`qwen.${key}`].type, 'boolean');
    assert.equal(props[`qwen.${key}`].default, on, `qwen.${key} defaults as in Qwen Code`);
  }
  assert.deepEqual(props['qwen.tools.approvalMode'].enum, ['default', 'plan', 'auto-edit', 'auto', 'yolo']);
});

test('settings: memory switches and the compression threshold reach the server nested under memory / compression, false included', () => {
  const values: Record<string, { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown }> = {
    'memory.enabled': { globalValue: true },
    'memory.autoExtract': { workspaceValue: false },
    'memory.autoDream': { globalValue: true, workspaceFolderValue: false },
    'compression.threshold': { globalValue: 0.5 },
  };
  assert.deepEqual(buildServerSettings((k) => values[k]), {
    memory: { enabled: true, autoExtract: false, autoDream: false },
    compression: { threshold: 0.5 },
  });
  // Left unset, they are not sent at all: the project's .qwen/settings.json (lower precedence) then decides.
  assert.deepEqual(buildServerSettings((k) => (k === 'memory.autoDream' ? {} : undefined)), {});
});

test('B13 keybindings carry when clauses and do not shadow core chat keys (Ctrl+Shift+L, Cmd+L, Ctrl+L)', () => {
  const bindings = manifest.contributes.keybindings as { command: string; key: string; mac?: string; when?: string }[];
  assert.ok(bindings.length > 0);
  for (const b of bindings) {
    assert.match(b.when ?? '', /\S/, `${b.command} has a when clause`);
    for (const k of [b.key, b.mac].filter(Boolean)) assert.ok(!['ctrl+shift+l', 'cmd+l', 'ctrl+l', 'tab'].includes(k!.toLowerCase()), `${b.command} does not take ${k}`);
  }
  const esc = bindings.find((b) => b.key === 'escape')!;
  assert.match(esc.when!, /focusedView == qwen\.chat/, 'Esc stops only while the chat view has focus');
});

/** Removes var(...) calls (nested ones too), leaving what a rule sets outside the theme's tokens. */
function withoutVars(value: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < value.length; i++) {
    if (depth === 0 && value.startsWith('var(', i)) {
      depth = 1;
      i += 3;
    } else if (depth > 0) {
      if (value[i] === '(') depth++;
      else if (value[i] === ')') depth--;
    } else out += value[i];
  }
  return out;
}

test('B14 the webview stylesheet takes every colour from --vscode-* tokens (no literal colours outside var() fallbacks)', () => {
  const css = readFileSync(path.join(EXT_ROOT, 'webview', 'style.css'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const colourProps = /^(color|background(-color)?|border(-\w+)*(-color)?|outline(-color)?|fill|stroke|caret-color|box-shadow|text-decoration-color)$/;
  const literal = /#[0-9a-f]{3,8}\b|\b(rgba?|hsla?)\(|\b(white|black|red|green|blue|gray|grey|yellow|orange)\b/i;
  const offenders: string[] = [];
  let checked = 0;
  for (const decl of css.split(/[;{}]/)) {
    const m = /^\s*([\w-]+)\s*:\s*([^]*)$/.exec(decl);
    if (!m || !colourProps.test(m[1])) continue;
    checked++;
    if (literal.test(withoutVars(m[2]))) offenders.push(decl.trim());
  }
  assert.ok(checked > 40, `found the colour declarations (${checked})`);
  assert.deepEqual(offenders, []);
  // Reduced motion switches off every animation, transition and smooth scroll.
  const reduced = /@media \(prefers-reduced-motion: reduce\)\s*\{([^}]*)\}/.exec(css)?.[1] ?? '';
  for (const rule of ['animation: none !important', 'transition: none !important', 'scroll-behavior: auto !important']) assert.ok(reduced.includes(rule), rule);
});

function probes(over: Partial<Probes> & { exec?: string[]; pkg?: string[]; unfit?: Record<string, string> }): Probes {
  return {
    isExecutable: async (f) => (over.exec ?? []).includes(f),
    hasPackage: async (p) => (over.pkg ?? []).includes(p),
    pythonInterpreter: over.pythonInterpreter ?? (async () => undefined),
    bundledLauncher: over.bundledLauncher,
    bundleUnfit: async (p) => over.unfit?.[p],
    env: over.env ?? { PATH: '/a:/b' },
    platform: over.platform ?? 'linux',
  };
}

const LAUNCHER = '/ext/bundled/launch.py';

test('server command: setting, then the Python extension interpreter, then PATH (a build without the bundle)', async () => {
  assert.deepEqual(await resolveServerCommand('/opt/qwen-lsp', probes({ exec: ['/opt/qwen-lsp'] })), { command: '/opt/qwen-lsp', args: ['serve', '--stdio'], source: 'setting' });
  assert.deepEqual(await resolveServerCommand('/v/bin/python3', probes({ exec: ['/v/bin/python3'], pkg: ['/v/bin/python3'] })), {
    command: '/v/bin/python3',
    args: ['-P', '-m', 'qwen_lsp', 'serve', '--stdio'],
    source: 'setting',
  });
  const py = probes({ pythonInterpreter: async () => '/env/python', pkg: ['/env/python'], exec: ['/b/qwen-lsp'] });
  assert.equal((await resolveServerCommand('', py)).source, 'python-extension');
  const noPkg = probes({ pythonInterpreter: async () => '/env/python', exec: ['/b/qwen-lsp'] });
  assert.deepEqual(await resolveServerCommand(undefined, noPkg), { command: '/b/qwen-lsp', args: ['serve', '--stdio'], source: 'path' });
});

test('server command: the bundled server comes right after the setting, run by the Python extension interpreter, else python3, else python on PATH', async () => {
  // The setting still overrides the bundle.
  assert.equal((await resolveServerCommand('/opt/qwen-lsp', probes({ exec: ['/opt/qwen-lsp'], bundledLauncher: LAUNCHER }))).source, 'setting');
  // The bundle wins over a qwen_lsp in the Python extension's interpreter and a qwen-lsp on PATH.
  const all = { bundledLauncher: LAUNCHER, pythonInterpreter: async () => '/env/bin/python', pkg: ['/env/bin/python'], exec: ['/a/python3', '/b/python', '/b/qwen-lsp'] };
  assert.deepEqual(await resolveServerCommand('', probes(all)), { command: '/env/bin/python', args: ['-P', LAUNCHER, 'serve', '--stdio'], source: 'bundled' });
  // An interpreter that does not fit (too old, no native libraries for its version) is skipped.
  const old = probes({ ...all, unfit: { '/env/bin/python': 'the server needs Python 3.11 or newer; found /env/bin/python 3.9.1' } });
  assert.deepEqual(await resolveServerCommand(undefined, old), { command: '/a/python3', args: ['-P', LAUNCHER, 'serve', '--stdio'], source: 'bundled' });
  const onlyPython = probes({ ...all, pythonInterpreter: async () => undefined, exec: ['/b/python'] });
  assert.equal((await resolveServerCommand(undefined, onlyPython)).command, '/b/python');
  const win = probes({ bundledLauncher: LAUNCHER, platform: 'win32', env: { Path: 'C:\\Py311;C:\\x' }, exec: [path.join('C:\\Py311', 'python.exe')] });
  assert.equal((await resolveServerCommand(undefined, win)).source, 'bundled');
});

test('server command: clear messages with the exact fix when nothing is found, naming no package the project does not publish', async () => {
  await assert.rejects(resolveServerCommand('/missing', probes({})), (e: Error) => e instanceof ServerNotFound && /not an executable/.test(e.message));
  await assert.rejects(resolveServerCommand('/v/python', probes({ exec: ['/v/python'], bundledLauncher: LAUNCHER })), /has no qwen_lsp package \(or is older than Python 3\.11\)\. Clear the setting to use the server bundled with the extension/);
  await assert.rejects(resolveServerCommand('/v/python', probes({ exec: ['/v/python'] })), /has no qwen_lsp package \(or is older than Python 3\.11\)\. Set it to a qwen-lsp built from source/);
  // No bundle (a development build) and nothing found: the one step that works.
  await assert.rejects(resolveServerCommand('', probes({})), /carries no server.*code --install-extension qwen-lsp-<target>\.vsix.*qwen\.server\.path/);
  // Bundle, but no Python fits: the minimum version, what was found, and how to go on.
  const tooOld = probes({ bundledLauncher: LAUNCHER, exec: ['/a/python3'], unfit: { '/a/python3': 'the server needs Python 3.11 or newer (CPython 3.11, 3.12, 3.13); found /a/python3 3.10.12' } });
  await assert.rejects(resolveServerCommand('', tooOld), (e: Error) => e instanceof ServerNotFound && /needs Python 3\.11 or newer\. Found: .*3\.10\.12\..*Restart Server/.test(e.message));
  await assert.rejects(resolveServerCommand('', probes({ bundledLauncher: LAUNCHER })), /needs Python 3\.11 or newer\. No python3 or python was found on PATH/);
  for (const over of [{}, { bundledLauncher: LAUNCHER }, { pythonInterpreter: async () => '/e/python' }]) {
    await assert.rejects(resolveServerCommand('', probes(over)), (e: Error) => !/pipx? install/.test(e.message));
  }
});

test('server version: a server the extension did not bring that is older than the extension gets a warning; the bundled one never', () => {
  assert.ok(compareVersions('0.1.0', '0.2.0') < 0);
  assert.ok(compareVersions('0.10.0', '0.9.1') > 0);
  assert.equal(compareVersions('1.0', '1.0.0'), 0);
  const setting = { command: '/opt/qwen-lsp', args: ['serve', '--stdio'], source: 'setting' as const };
  assert.match(staleServerWarning(setting, '0.0.9', '0.1.0')!, /qwen\.server\.path points at qwen-lsp 0\.0\.9 .*older than this extension \(0\.1\.0\).*Clear qwen\.server\.path/);
  assert.match(staleServerWarning(setting, undefined, '0.1.0')!, /version unknown/);
  assert.equal(staleServerWarning(setting, '0.1.0', '0.1.0'), undefined);
  assert.equal(staleServerWarning(setting, '0.2.0', '0.1.0'), undefined);
  assert.equal(staleServerWarning({ ...setting, source: 'bundled' }, '0.0.1', '0.1.0'), undefined);
});

test('server version: the extension, pyproject.toml and qwen_lsp.__version__ carry one version, so the check above compares like with like', () => {
  const ext = JSON.parse(readFileSync(path.join(EXT_ROOT, 'package.json'), 'utf8')).version;
  const repo = path.join(EXT_ROOT, '..');
  assert.equal(/^version = "([^"]+)"/m.exec(readFileSync(path.join(repo, 'pyproject.toml'), 'utf8'))?.[1], ext);
  assert.equal(/^__version__ = "([^"]+)"/m.exec(readFileSync(path.join(repo, 'qwen_lsp', '__init__.py'), 'utf8'))?.[1], ext);
});

test('meter: percent left, warning colour at warn and auto, error colour at hard', () => {
  const base = { sessionId: 's', promptTokens: 1000, window: 10000, percentLeft: 90, thresholds: { warn: 6000, auto: 7000, hard: 9000 } };
  assert.equal(meterView({ ...base, level: 'ok' }).text, '$(dashboard) Qwen 90% left');
  assert.equal(meterView({ ...base, level: 'ok' }).background, undefined);
  assert.equal(meterView({ ...base, level: 'warn', percentLeft: 25 }).background, 'statusBarItem.warningBackground');
  assert.equal(meterView({ ...base, level: 'auto' }).background, 'statusBarItem.warningBackground');
  const hard = meterView({ ...base, level: 'hard', percentLeft: 3.4 });
  assert.equal(hard.background, 'statusBarItem.errorBackground');
  assert.match(hard.text, /3% left/);
  assert.match(hard.tooltip, /1,000 of 10,000 tokens/);
});

test('one context figure: a qwen/context report gives the percent and level the server would; every surface words it alike, thresholds in tokens', () => {
  const report = { sections: [], totalTokens: 9858, window: 131072, thresholds: { warn: 78072, auto: 98072, hard: 108072 } };
  const f = figureOfReport(report);
  assert.deepEqual(f, { promptTokens: 9858, window: 131072, percentLeft: 92.5, level: 'ok', thresholds: report.thresholds });
  assert.equal(figureOfReport(report, 100000).level, 'auto', "a resumed chat's recorded prompt size wins over the estimate");
  assert.equal(figureOfReport(report, 108072).level, 'hard');
  const w = figureWords(f);
  assert.deepEqual(w, {
    left: '93% left',
    tokens: '9,858 of 131,072 tokens',
    compresses: 'compresses at 98,072 tokens',
    limits: 'Warns at 78,072 tokens, compresses at 98,072, full at 108,072.',
  });
  assert.equal(meterView(f).text, `$(dashboard) Qwen ${w.left}`);
  assert.match(meterView(f).tooltip, /9,858 of 131,072 tokens used, 93% left/);
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

test('B15 links from model output: only http(s) and mailto open externally, file links in the editor, every other scheme is ignored', () => {
  assert.equal(linkTarget('https'), 'external');
  assert.equal(linkTarget('HTTP'), 'external');
  assert.equal(linkTarget('mailto'), 'external');
  assert.equal(linkTarget('file'), 'file');
  for (const scheme of ['javascript', 'command', 'vscode', 'vscode-insiders', 'data', 'blob', 'ftp', 'toString', '__proto__', '']) assert.equal(linkTarget(scheme), undefined, scheme);
});
