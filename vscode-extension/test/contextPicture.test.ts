// The context chips under an answer (the real webview bundle in headless Chromium) and the Context
// picture's HTML: what the server sent is what is shown, the chips open their files through the
// host, the setting hides them at once, and every bar's figures are there in words.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { ARTIFACTS, msg, snapshot, useWebview } from './webviewHarness';
import { Transcript } from '../src/transcript';
import { pictureHtml, PICTURE_ROWS } from '../src/contextPictureHtml';
import type { ContextChange, ContextResult } from '../src/shared/protocol';

const web = useWebview();
before(() => mkdirSync(ARTIFACTS, { recursive: true }));

const CHANGES: ContextChange[] = [
  { kind: 'skill', label: 'skill api-conventions', sources: ['/ws/.qwen/skills/api-conventions/SKILL.md'] },
  { kind: 'memory', label: '2 memories recalled', sources: ['/home/u/.qwen/memory/a.md', '/home/u/.qwen/memory/b.md'] },
  { kind: 'compression', label: 'history compressed 41k → 6k', sources: [] },
];

test('transcript: a contextChanges event puts its chips on the running answer, once, and only for its turn', () => {
  const t = new Transcript();
  const [, answer] = t.begin('hi');
  assert.deepEqual(t.apply({ sessionId: 's', turnId: 'T', seq: 0, kind: 'text', text: 'ok' }), { op: 'append', id: answer.id, text: 'ok' });
  assert.deepEqual(t.apply({ sessionId: 's', turnId: 'T', seq: 1, kind: 'contextChanges', changes: CHANGES }), { op: 'changes', id: answer.id, changes: CHANGES });
  assert.equal(t.apply({ sessionId: 's', turnId: 'other', seq: 2, kind: 'contextChanges', changes: CHANGES }), undefined);
  assert.deepEqual(t.changeSources(answer.id, 1), CHANGES[1].sources);
  assert.deepEqual(t.changeSources(answer.id, 2), []);
  assert.deepEqual(t.changeSources('nope', 0), []);
});

test('chips: under the answer, in order; a chip with files is a named button that posts openContextChange; the setting hides them', async () => {
  const p = await web.open();
  const answer = msg('assistant', 'Done.', { changes: CHANGES });
  await p.host(snapshot([msg('user', 'write a handler'), answer]));
  const chips = p.page.locator(`[data-id="${answer.id}"] .context-changes .context-chip`);
  assert.deepEqual(await chips.allTextContents(), CHANGES.map((c) => c.label));
  const skill = p.page.getByRole('button', { name: /^Skill: skill api-conventions\. Open its file/ });
  assert.equal(await skill.getAttribute('title'), `Open ${CHANGES[0].sources![0]}`);
  await skill.click();
  await p.page.getByRole('button', { name: /Memory: 2 memories recalled\. Open its 2 files/ }).click();
  assert.deepEqual((await p.posted()).filter((m) => m.type === 'openContextChange'), [
    { type: 'openContextChange', id: answer.id, index: 0 },
    { type: 'openContextChange', id: answer.id, index: 1 },
  ]);
  assert.equal(await p.page.locator('.context-chip.kind-compression').evaluate((el) => el.tagName), 'SPAN', 'nothing to open: plain text');
  await p.host({ type: 'showContextChanges', show: false });
  assert.equal(await chips.first().isVisible(), false);
  await p.host({ type: 'showContextChanges', show: true });
  assert.equal(await chips.first().isVisible(), true);
  await p.host(snapshot([answer], { showContextChanges: false }));
  assert.equal(await p.page.locator('.context-chip').first().isVisible(), false, 'a snapshot carries the setting too');
  await p.page.context().close();
});

test('chips: a streamed changes patch renders under the answer while it is still open', async () => {
  const p = await web.open();
  const answer = msg('assistant', '', { streaming: true });
  await p.host(snapshot([msg('user', 'q'), answer], { running: true }));
  await p.host({ type: 'patches', patches: [{ op: 'append', id: answer.id, text: 'ok' }, { op: 'changes', id: answer.id, changes: [CHANGES[2]] }] });
  assert.deepEqual(await p.page.locator('.context-chip').allTextContents(), ['history compressed 41k → 6k']);
  await p.page.context().close();
});

const REPORT: ContextResult = {
  sections: [],
  totalTokens: 0,
  window: 30_000,
  thresholds: { warn: 15_000, auto: 21_000, hard: 28_500 },
  requests: [
    { turnId: 'a', round: 1, totalTokens: 6_000, reportedTokens: 5_990, parts: PICTURE_ROWS.map((r, i) => ({ name: r.name, tokens: i === 5 ? 0 : 1_000 })) },
    { turnId: 'b', round: 1, totalTokens: 7_000, parts: PICTURE_ROWS.map((r) => ({ name: r.name, tokens: 1_000 })) },
    { turnId: 'b', round: 2, totalTokens: 7_000, parts: PICTURE_ROWS.map((r) => ({ name: r.name, tokens: 1_000 })) },
  ],
};

test('picture: one bar per request, a segment per part with its tokens on hover, the three marks, and the same figures in words and in a table', async () => {
  const html = pictureHtml(REPORT, 'vscode-resource:');
  assert.match(html, /default-src 'none'/);
  assert.doesNotMatch(html, /<script/i, 'no script: the host writes the page again');
  const p = await web.open();
  await p.page.setContent(html);
  const bars = p.page.locator('li.request');
  assert.equal(await bars.count(), 3);
  assert.deepEqual(await p.page.locator('.request-name').allTextContents(), ['Turn 1', 'Turn 2', 'Turn 2 · round 2']);
  // An empty part draws nothing; every other part is a segment whose title gives its tokens.
  assert.deepEqual(await bars.nth(0).locator('.seg').evaluateAll((s) => s.map((e) => e.getAttribute('data-part'))), ['system', 'context files', 'memory', 'skills', 'editor context', 'tools']);
  assert.equal(await bars.nth(1).locator('.seg[data-part="history"]').getAttribute('title'), 'Turn 2 · history: 1,000 tokens');
  assert.deepEqual(await bars.nth(0).locator('.mark').evaluateAll((m) => m.map((e) => e.getAttribute('title'))), ['Warns at 15,000 tokens', 'Compresses at 21,000 tokens', 'Full at 28,500 tokens']);
  const img = p.page.getByRole('img', { name: /^Turn 1: 6,000 of 30,000 tokens/ });
  assert.match((await img.getAttribute('aria-label'))!, /system 1,000, context files 1,000, memory 1,000, skills 1,000, editor context 1,000, tools 1,000; the endpoint counted 5,990/);
  const rows = await p.page.locator('.visually-hidden table tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((c) => c.textContent)));
  assert.deepEqual(rows[0], ['Request', ...PICTURE_ROWS.map((r) => r.name), 'Total']);
  assert.deepEqual(rows[3], ['Turn 2 · round 2', ...PICTURE_ROWS.map(() => '1,000'), '7,000']);
  await p.page.context().close();
});

test('picture: says why it is empty', () => {
  assert.match(pictureHtml({ ...REPORT, requests: [] }, 'x'), /No request sent in this chat yet/);
  assert.match(pictureHtml(undefined, 'x', 'The qwen-lsp server is not running'), /The qwen-lsp server is not running/);
});
