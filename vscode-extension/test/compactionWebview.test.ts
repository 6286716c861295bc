// "Compact" in the chat webview (headless Chromium, the real bundle, CSS and CSP), driven as
// ChatController drives it: the header button posts the request and is keyboard-operable, the
// "Compacting…" status line renders without taking focus or locking the composer, the result
// replaces it in place with the conversation kept, and a turn that compacted first shows a note.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { ARTIFACTS, msg, snapshot, useWebview } from './webviewHarness';
import type { Panel } from './webviewHarness';
import { compactingText, compactResultText } from '../src/compaction';
import type { HostToWebview, TranscriptMessage } from '../src/shared/messages';

const web = useWebview();
before(() => mkdirSync(ARTIFACTS, { recursive: true }));

const CONVERSATION = (): TranscriptMessage[] => [
  msg('user', 'Refactor the session store to use one lock per session.'),
  msg('assistant', 'Done: `SessionStore` now keeps a lock per session id.\n\n```python\nlocks: dict[str, asyncio.Lock] = {}\n```'),
  msg('user', 'Now add tests for concurrent writers.'),
  msg('assistant', 'Added `test_concurrent_writers` with two writers racing on one session.'),
];

const state = (available: boolean, compacting: boolean): HostToWebview => ({ type: 'compactState', state: { available, compacting } });
const posted = async (p: Panel): Promise<any[]> => (await p.posted()).filter((m) => m.type !== 'ready');

/** What ChatController posts when Compact starts: the pending line, then the state. */
async function startCompacting(p: Panel, mode: 'full' | 'fast' = 'full'): Promise<TranscriptMessage> {
  const line: TranscriptMessage = { id: 'c1', role: 'status', text: compactingText(mode), tone: 'info', pending: true };
  await p.host([{ type: 'message', message: line }, state(true, true)]);
  return line;
}

test('Compact: disabled without a session; enabled with one, a click posts compact (full) once, and New chat is beside it', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const compact = p.page.getByRole('button', { name: 'Compact conversation' });
  assert.equal(await compact.isDisabled(), true, 'nothing to compact in an empty chat');
  await p.host(snapshot(CONVERSATION(), { compact: { available: true, compacting: false } }));
  assert.equal(await compact.isDisabled(), false);
  assert.match((await compact.getAttribute('title'))!, /conversation shown here is kept/);
  const headerOrder = await p.page.locator('.header button').evaluateAll((bs) => bs.map((b) => b.id));
  assert.deepEqual(headerOrder, ['new-chat', 'history', 'compact']);
  await compact.click();
  assert.deepEqual(await posted(p), [{ type: 'compact', mode: 'full' }]);
  await p.host(state(false, false));
  assert.equal(await compact.isDisabled(), true, 'New chat: no session, nothing to compact');
  await p.page.context().close();
});

test('Compact by keyboard: Tab reaches it, Enter and Space press it, and focus stays on it while it runs', async () => {
  const p = await web.open();
  await p.host(snapshot(CONVERSATION(), { compact: { available: true, compacting: false } }));
  await p.page.locator('#new-chat').focus();
  await p.page.keyboard.press('Tab');
  await p.page.keyboard.press('Tab');
  assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'compact');
  await p.page.keyboard.press('Enter');
  await startCompacting(p);
  assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'compact', 'focus is not dropped when it becomes busy');
  const btn = p.page.locator('#compact');
  assert.equal(await btn.textContent(), 'Compacting…');
  assert.equal(await btn.getAttribute('aria-disabled'), 'true');
  await p.page.keyboard.press('Enter');
  await btn.click({ force: true }); // Playwright waits for aria-disabled controls; a person's click still lands
  assert.deepEqual(await posted(p), [{ type: 'compact', mode: 'full' }], 'a second press while compacting posts nothing');
  await p.host(state(true, false));
  assert.equal(await btn.textContent(), 'Compact');
  await p.page.keyboard.press('Space');
  assert.deepEqual(await posted(p), [{ type: 'compact', mode: 'full' }, { type: 'compact', mode: 'full' }]);
  await p.page.context().close();
});

test('Compacting…: a quiet status line, the composer keeps focus and can send; the result replaces it and the conversation stays (screenshot)', async () => {
  const p = await web.open();
  const conversation = CONVERSATION();
  await p.host(snapshot(conversation, { compact: { available: true, compacting: false } }));
  const composer = p.page.locator('#prompt');
  await composer.click();
  await p.page.keyboard.type('Next: document the ');
  const line = await startCompacting(p);
  await p.page.keyboard.type('lock order');
  assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'prompt', 'the status line did not take focus');
  assert.equal(await composer.inputValue(), 'Next: document the lock order');
  const row = p.page.locator(`[data-id="${line.id}"]`);
  assert.equal(await row.getAttribute('class'), 'status-line tone-info pending');
  assert.equal(await row.getAttribute('aria-busy'), 'true');
  assert.equal(await row.locator('.status-text').textContent(), compactingText('full'));
  assert.equal(await row.locator('.role').count(), 0, 'a status line is not a message from You or Qwen');
  assert.equal(await p.page.locator('#send').isDisabled(), false, 'the composer is not locked while compacting');
  await p.page.screenshot({ path: path.join(ARTIFACTS, 'compacting-dark.png') });
  await p.applyTheme('light');
  await p.page.screenshot({ path: path.join(ARTIFACTS, 'compacting-light.png') });

  const result = compactResultText({ status: 'compressed', tokensBefore: 48210, tokensAfter: 9877 });
  await p.host([{ type: 'message', message: { ...line, text: result.text, tone: result.tone, pending: undefined } }, state(true, false)]);
  assert.equal(await p.page.locator(`[data-id="${line.id}"]`).count(), 1, 'settled in place, not added again');
  assert.equal(await row.getAttribute('class'), 'status-line tone-info');
  assert.equal(await row.locator('.status-text').textContent(), 'Compacted: 48,210 → 9,877 tokens. Your conversation stays in this panel; only the model’s copy was summarized.');
  await p.page.waitForFunction((t) => document.getElementById('live')!.textContent === t, result.text);
  const ids = await p.page.locator('#messages > [data-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
  assert.deepEqual(ids, [...conversation.map((m) => m.id), line.id], 'every message is still shown, the result line after them');
  await p.page.screenshot({ path: path.join(ARTIFACTS, 'compacted-light.png') });

  await p.page.keyboard.press('Enter');
  assert.deepEqual((await posted(p)).filter((m) => m.type === 'send'), [{ type: 'send', prompt: 'Next: document the lock order' }]);
  await p.page.context().close();
});

test('Compaction failures and the old-server line render as quiet status lines with their tone, from the snapshot', async () => {
  const p = await web.open();
  const failed = compactResultText({ status: 'failed_empty_summary', tokensBefore: 100, tokensAfter: 100 });
  const lines: TranscriptMessage[] = [
    { id: 's1', role: 'status', text: failed.text, tone: failed.tone },
    { id: 's2', role: 'status', text: 'This server cannot compact yet (update qwen-lsp). Nothing was changed.', tone: 'info' },
    { id: 's3', role: 'status', text: 'Compaction failed: Nothing is listening. Nothing was lost.', tone: 'error' },
  ];
  await p.host(snapshot([...CONVERSATION(), ...lines], { compact: { available: true, compacting: false } }));
  assert.deepEqual(await p.page.locator('.status-line:visible').evaluateAll((els) => els.map((e) => e.className)), [
    'status-line tone-warning',
    'status-line tone-info',
    'status-line tone-error',
  ]);
  assert.equal(await p.page.locator('[data-id=s1] .status-text').textContent(), 'Compaction failed: the model returned an empty summary. Nothing was lost: the conversation and the model’s history are unchanged.');
  const colours = await p.page.evaluate(() => {
    const css = getComputedStyle(document.documentElement);
    return { line: getComputedStyle(document.querySelector('[data-id=s2]')!).color, desc: css.getPropertyValue('--vscode-descriptionForeground').trim() };
  });
  const hex = (rgb: string) => '#' + rgb.match(/\d+/g)!.slice(0, 3).map((n) => Number(n).toString(16).padStart(2, '0')).join('');
  assert.equal(hex(colours.line), colours.desc.toLowerCase(), 'the line is quiet: the theme’s description colour');
  await p.applyTheme('hc-dark');
  await p.page.screenshot({ path: path.join(ARTIFACTS, 'compaction-lines-hc-dark.png') });
  await p.page.context().close();
});

test('a turn that compacted first: the server’s status note shows at the top of the answer, streamed and from a snapshot', async () => {
  const p = await web.open();
  await p.host(snapshot(CONVERSATION(), { compact: { available: true, compacting: false } }));
  const user = msg('user', 'And the docs?');
  const a = msg('assistant', '', { streaming: true });
  await p.host([{ type: 'message', message: user }, { type: 'message', message: a }, { type: 'running', running: true }]);
  await p.page.locator('#prompt').click();
  const note = 'Compressed the conversation history: 48,210 → 9,877 tokens.';
  await p.host({ type: 'patches', patches: [{ op: 'note', id: a.id, text: note }, { op: 'append', id: a.id, text: 'Updated the docs.' }] });
  await p.frame();
  const answer = p.page.locator(`[data-id="${a.id}"]`);
  assert.deepEqual(await answer.locator('.note').allTextContents(), [note]);
  const order = await answer.evaluate((el) => Array.from(el.children).map((c) => c.className.split(' ')[0]));
  assert.deepEqual(order.slice(0, 2), ['role', 'notes'], 'the note comes before the answer text');
  assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'prompt', 'the note did not take focus');
  await p.host([{ type: 'message', message: { ...a, text: 'Updated the docs.', streaming: false, notes: [note] } }, { type: 'running', running: false }]);
  assert.deepEqual(await answer.locator('.note').allTextContents(), [note], 'the final message keeps one note');
  await p.reload();
  await p.host(snapshot([{ ...a, text: 'Updated the docs.', notes: [note] }]));
  assert.deepEqual(await p.page.locator(`[data-id="${a.id}"] .note`).allTextContents(), [note]);
  await p.page.context().close();
});
