// The chat webview in headless Chromium (the real bundle, CSS and CSP), driven as the host would
// drive it. Test names carry the number (B1–B15) of the panel behaviour they prove
// (docs/vscode-panel.md).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { ARTIFACTS, msg, snapshot, useWebview } from './webviewHarness';
import type { Panel } from './webviewHarness';
import type { HostToWebview } from '../src/shared/messages';

const web = useWebview();
before(() => mkdirSync(ARTIFACTS, { recursive: true }));

const ANSWER = [
  '# Plan\n\n',
  'First a paragraph with **bold** and `code`.\n\n',
  '```python\ndef hello():\n    return "hi"\n```\n\n',
  '- one\n- two\n- three\n\n',
  'Last paragraph.',
];

/** A running turn: the user's message and an empty streaming answer, as ChatController posts them. */
async function startTurn(p: Panel, prompt = 'Write hello'): Promise<string> {
  const user = msg('user', prompt);
  const a = msg('assistant', '', { streaming: true });
  await p.host([{ type: 'message', message: user }, { type: 'message', message: a }, { type: 'running', running: true }]);
  return a.id;
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function stream(p: Panel, id: string, parts: string[], perFrame = false): Promise<void> {
  for (const text of parts) {
    await p.host({ type: 'patches', patches: [{ op: 'append', id, text }] });
    if (perFrame) await p.frame();
  }
  await p.frame();
}

async function finish(p: Panel, id: string, text: string, extra: Record<string, unknown> = {}): Promise<void> {
  await p.host([{ type: 'message', message: { id, role: 'assistant', text, streaming: false, ...extra } } as HostToWebview, { type: 'running', running: false }]);
}

test('streamed Markdown renders in order (heading, paragraph, code block, list) with Copy and Insert on the code', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const id = await startTurn(p);
  await stream(p, id, chunks(ANSWER.join(''), 7), true);
  const body = p.page.locator(`[data-id="${id}"] .markdown`);
  assert.equal(await body.locator('h1').textContent(), 'Plan');
  assert.equal(await body.locator('strong').textContent(), 'bold');
  assert.equal(await body.locator('pre code').textContent(), 'def hello():\n    return "hi"\n');
  assert.deepEqual(await body.locator('li').allTextContents(), ['one', 'two', 'three']);
  const order = await body.evaluate((el) => Array.from(el.querySelectorAll('h1, p, pre, ul')).map((e) => e.tagName));
  assert.deepEqual(order, ['H1', 'P', 'PRE', 'UL', 'P']);
  await finish(p, id, ANSWER.join(''));
  assert.equal(await p.page.locator(`[data-id="${id}"]`).getAttribute('class'), 'msg assistant');
  await body.getByRole('button', { name: 'Copy code' }).click();
  await body.getByRole('button', { name: 'Insert at cursor code' }).click();
  const posted = await p.posted();
  assert.deepEqual(posted.filter((m) => m.type === 'copy' || m.type === 'insert'), [
    { type: 'copy', text: 'def hello():\n    return "hi"\n' },
    { type: 'insert', text: 'def hello():\n    return "hi"\n' },
  ]);
  assert.deepEqual(await p.page.evaluate(() => (window as any).__csp), [], 'no CSP violations');
  await p.page.context().close();
});

test('B6 incremental Markdown: finished messages and finished blocks keep their DOM nodes while the tail streams', async () => {
  const p = await web.open();
  const done = msg('assistant', ANSWER.join(''));
  await p.host(snapshot([msg('user', 'before'), done]));
  const id = await startTurn(p);
  await stream(p, id, [ANSWER[0], ANSWER[1]]);
  // Tag the finished blocks (and every block of the finished message above, and its text nodes);
  // a re-render would replace the elements and lose the tag.
  await p.page.evaluate(([i, d]) => {
    for (const el of Array.from(document.querySelectorAll(`[data-id="${i}"] .md-block`)).slice(0, 2)) (el as any).__probe = true;
    for (const el of Array.from(document.querySelectorAll(`[data-id="${d}"] .md-block, [data-id="${d}"] .md-block *`))) (el as any).__probe = true;
    (window as any).__changedAbove = 0;
    new MutationObserver((records) => ((window as any).__changedAbove += records.length)).observe(document.querySelector(`[data-id="${d}"]`)!, {
      childList: true, subtree: true, characterData: true, attributes: true,
    });
  }, [id, done.id]);
  await stream(p, id, chunks(ANSWER.slice(2).join(''), 5), true);
  const kept = await p.page.evaluate((i) => Array.from(document.querySelectorAll(`[data-id="${i}"] .md-block`)).map((el) => !!(el as any).__probe), id);
  assert.deepEqual(kept.slice(0, 2), [true, true], 'heading and first paragraph were never re-rendered');
  assert.equal(kept.length, 5);
  const above = await p.page.evaluate((d) => ({
    probed: Array.from(document.querySelectorAll(`[data-id="${d}"] .md-block, [data-id="${d}"] .md-block *`)).every((el) => (el as any).__probe === true),
    mutations: (window as any).__changedAbove as number,
  }), done.id);
  assert.deepEqual(above, { probed: true, mutations: 0 }, 'the finished message above was not touched at all');
  await p.page.context().close();
});

test('B5 webview coalescing: 60 patch messages arriving within a frame cause at most a few DOM updates', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const id = await startTurn(p);
  const mutations = await p.page.evaluate(async (i) => {
    let batches = 0;
    const body = document.querySelector(`[data-id="${i}"] .markdown`)!;
    new MutationObserver(() => batches++).observe(body, { childList: true, subtree: true, characterData: true });
    // 60 messages, each its own task, posted back to back (faster than a frame).
    for (let k = 0; k < 60; k++) window.postMessage({ type: 'patches', patches: [{ op: 'append', id: i, text: `w${k} ` }] }, '*');
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return { batches, text: body.textContent };
  }, id);
  assert.match(mutations.text!, /^w0 w1 .* w59/);
  assert.ok(mutations.batches <= 4, `expected the 60 messages folded into a few frames, saw ${mutations.batches} DOM updates`);
  await p.page.context().close();
});

test('B1 Stop posts stop, keeps the partial answer, marks it interrupted, re-enables Send only when the host confirms', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const id = await startTurn(p);
  await stream(p, id, ['Partial ', 'answer ']);
  const send = p.page.locator('#send');
  const stop = p.page.locator('#stop');
  assert.equal(await send.isDisabled(), true);
  await stop.click();
  assert.ok((await p.posted()).some((m) => m.type === 'stop'), 'Stop posted the cancel message');
  assert.equal(await send.isDisabled(), true, 'Send stays disabled until the server confirms');
  await finish(p, id, 'Partial answer ', { interrupted: true });
  assert.equal(await send.isDisabled(), false);
  assert.equal(await stop.isDisabled(), true);
  const el = p.page.locator(`[data-id="${id}"]`);
  assert.equal((await el.locator('.markdown').textContent())?.trim(), 'Partial answer');
  assert.match((await el.locator('.badge').textContent())!, /Interrupted/);
  assert.equal(await p.page.locator('#live').textContent({ timeout: 2000 }).then(async () => {
    await p.page.waitForFunction(() => document.getElementById('live')!.textContent !== '');
    return p.page.locator('#live').textContent();
  }), 'Stopped');
  await p.page.context().close();
});

test('B2 composer keys: Enter sends, Shift+Enter adds a newline, Enter during IME composition never sends, Esc stops and keeps the draft', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const box = p.page.locator('#prompt');
  await box.click();
  await p.page.keyboard.type('line one');
  await p.page.keyboard.press('Shift+Enter');
  await p.page.keyboard.type('line two');
  assert.equal(await box.inputValue(), 'line one\nline two');
  // An Enter that belongs to an IME composition (isComposing, or keyCode 229 in Chromium/Safari).
  const sentBefore = (await p.posted()).filter((m) => m.type === 'send').length;
  await box.evaluate((el) => {
    el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', isComposing: true, bubbles: true, cancelable: true }));
    el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', keyCode: 229, bubbles: true, cancelable: true }));
  });
  assert.equal((await p.posted()).filter((m) => m.type === 'send').length, sentBefore, 'IME Enter did not send');
  await p.page.keyboard.press('Enter');
  assert.deepEqual((await p.posted()).filter((m) => m.type === 'send'), [{ type: 'send', prompt: 'line one\nline two' }]);
  assert.equal(await box.inputValue(), '');
  // While running, Esc stops generation and the draft stays.
  await startTurn(p);
  await p.page.keyboard.type('next question draft');
  await p.page.keyboard.press('Escape');
  assert.ok((await p.posted()).some((m) => m.type === 'stop'));
  assert.equal(await box.inputValue(), 'next question draft');
  await p.page.context().close();
});

async function longTranscript(p: Panel): Promise<string> {
  const earlier = Array.from({ length: 30 }, (_, i) => msg(i % 2 ? 'assistant' : 'user', `Message ${i}\n\n${'Some text. '.repeat(30)}`));
  await p.host(snapshot(earlier));
  return startTurn(p, 'go on');
}

const scrollState = (p: Panel) =>
  p.page.locator('#transcript').evaluate((el) => ({ top: el.scrollTop, max: el.scrollHeight - el.clientHeight }));

/** Waits until a (possibly animated) wheel or drag scroll has come to rest. */
async function settle(p: Panel): Promise<void> {
  let last = -1;
  for (let i = 0; i < 50; i++) {
    await p.page.waitForTimeout(60);
    const { top } = await scrollState(p);
    if (top === last) return;
    last = top;
  }
}

test('B3 auto-scroll follows at the bottom, pauses on one wheel tick up and on PageUp, resumes at the bottom', async () => {
  const p = await web.open();
  const id = await longTranscript(p);
  await stream(p, id, Array.from({ length: 10 }, (_, i) => `Line ${i}.\n\n`));
  let s = await scrollState(p);
  assert.ok(s.max - s.top <= 2, 'pinned to the bottom while streaming');
  await p.page.locator('#transcript').hover();
  await p.page.mouse.wheel(0, -40); // one small wheel tick
  await settle(p);
  const readerTop = (await scrollState(p)).top;
  await stream(p, id, Array.from({ length: 10 }, (_, i) => `More ${i}.\n\n`));
  s = await scrollState(p);
  assert.equal(s.top, readerTop, 'the reader was not yanked back');
  assert.ok(s.max - s.top > 100, 'content kept growing below');
  assert.equal(await p.page.locator('#jump').isVisible(), true, 'a Jump to latest pill is offered');
  // Scrolling back down to the bottom resumes following.
  await p.page.mouse.wheel(0, 100_000);
  await settle(p);
  await stream(p, id, ['Tail.\n\n']);
  s = await scrollState(p);
  assert.ok(s.max - s.top <= 2, 'following again after reaching the bottom');
  // PageUp from the keyboard also pauses.
  await p.page.locator('#transcript').focus();
  await p.page.keyboard.press('PageUp');
  await settle(p);
  const top2 = (await scrollState(p)).top;
  await stream(p, id, ['After PageUp.\n\n']);
  assert.equal((await scrollState(p)).top, top2);
  await p.page.locator('#jump').click();
  s = await scrollState(p);
  assert.ok(s.max - s.top <= 2, 'Jump to latest goes to the bottom');
  await p.page.context().close();
});

test('B3 a scrollbar drag upward pauses auto-scroll', async () => {
  const p = await web.open();
  const id = await longTranscript(p);
  await stream(p, id, ['Start.\n\n']);
  const box = (await p.page.locator('#transcript').boundingBox())!;
  // Drag the scrollbar thumb (at the bottom of the right edge) upwards.
  await p.page.mouse.move(box.x + box.width - 4, box.y + box.height - 10);
  await p.page.mouse.down();
  await p.page.mouse.move(box.x + box.width - 4, box.y + box.height / 2, { steps: 5 });
  await p.page.mouse.up();
  await settle(p);
  const top = (await scrollState(p)).top;
  await stream(p, id, ['Streamed after the drag.\n\n']);
  const s = await scrollState(p);
  assert.equal(s.top, top);
  assert.ok(s.max - s.top > 50);
  await p.page.context().close();
});

test('B4 no jumps: streamed chunks scroll instantly; sending while scrolled up does not teleport the reader', async () => {
  const p = await web.open();
  const id = await longTranscript(p);
  assert.equal(await p.page.locator('#transcript').evaluate((el) => getComputedStyle(el).scrollBehavior), 'auto');
  await stream(p, id, ['Answer.\n\n']);
  await finish(p, id, 'Answer.\n\n');
  await p.page.locator('#transcript').hover();
  await p.page.mouse.wheel(0, -300);
  await settle(p);
  const top = (await scrollState(p)).top;
  await p.page.locator('#prompt').fill('another question');
  await p.page.keyboard.press('Enter');
  await startTurn(p, 'another question'); // the host echoes the new turn
  await stream(p, id, []);
  assert.equal((await scrollState(p)).top, top, 'the reader stays where they were');
  assert.equal(await p.page.locator('#jump').isVisible(), true);
  await p.page.context().close();
});

test('B4 no jumps: expanding or collapsing a Thinking row keeps it where it is on screen, also while following the bottom', async () => {
  const p = await web.open();
  const earlier = Array.from({ length: 20 }, (_, i) => msg(i % 2 ? 'assistant' : 'user', `Message ${i}\n\n${'Some text. '.repeat(30)}`));
  const thinking = msg('assistant', 'The answer.', { thought: Array.from({ length: 30 }, (_, i) => `Reasoning step ${i}.`).join('\n') });
  await p.host(snapshot([...earlier, msg('user', 'Why?'), thinking]));
  const summary = p.page.locator(`[data-id="${thinking.id}"] summary`);
  const s0 = await scrollState(p);
  assert.ok(s0.max - s0.top <= 2, 'following the bottom before the toggle');
  const top = async () => (await summary.boundingBox())!.y;
  const before = await top();
  await summary.click(); // expands 30 lines below the row
  await p.frame();
  assert.equal(await p.page.locator(`[data-id="${thinking.id}"] details`).evaluate((d) => (d as HTMLDetailsElement).open), true);
  assert.ok(Math.abs((await top()) - before) <= 1, `the expanded row stayed put (${await top()} vs ${before})`);
  const s1 = await scrollState(p);
  assert.ok(s1.max - s1.top > 100, 'the thought grew below the row instead of pulling the view down');
  // New content does not yank the reader to the bottom either: following paused at the toggle.
  const a = msg('assistant', '', { streaming: true });
  await p.host([{ type: 'message', message: msg('user', 'next') }, { type: 'message', message: a }, { type: 'running', running: true }]);
  await stream(p, a.id, ['More.\n\n']);
  assert.ok(Math.abs((await top()) - before) <= 1, 'still put after more content arrived');
  // Collapsing (keyboard: Enter on the focused summary) keeps the row in place too.
  await summary.focus();
  await p.page.keyboard.press('Enter');
  await p.frame();
  assert.equal(await p.page.locator(`[data-id="${thinking.id}"] details`).evaluate((d) => (d as HTMLDetailsElement).open), false);
  assert.ok(Math.abs((await top()) - before) <= 1, `the collapsed row stayed put (${await top()} vs ${before})`);
  await p.page.context().close();
});

test('B9 state survives reload: draft, scroll position and the transcript snapshot come back', async () => {
  const p = await web.open();
  const earlier = Array.from({ length: 30 }, (_, i) => msg(i % 2 ? 'assistant' : 'user', `Message ${i}\n\n${'Some text. '.repeat(30)}`));
  await p.host(snapshot(earlier));
  await p.page.locator('#prompt').fill('half-written question');
  await p.page.locator('#transcript').hover();
  await p.page.mouse.wheel(0, -800);
  await settle(p);
  const top = (await scrollState(p)).top;
  await p.reload();
  // After a reload (or hide/show) the host answers 'ready' with its snapshot again.
  await p.host(snapshot(earlier));
  assert.equal(await p.page.locator('#prompt').inputValue(), 'half-written question');
  assert.equal(await p.page.locator('.msg').count(), 30);
  const s = await scrollState(p);
  assert.ok(Math.abs(s.top - top) <= 2, `scroll restored (${s.top} vs ${top})`);
  await p.page.context().close();
});

test('B9 a stream that arrived while hidden is shown: a running snapshot continues streaming after show', async () => {
  const p = await web.open();
  const a = msg('assistant', 'Written while the view was hidden. ', { streaming: true });
  await p.host(snapshot([msg('user', 'q'), a], { running: true }));
  await stream(p, a.id, ['And more after show.']);
  assert.equal((await p.page.locator(`[data-id="${a.id}"] .markdown`).textContent())?.trim(), 'Written while the view was hidden. And more after show.');
  assert.equal(await p.page.locator('#stop').isDisabled(), false);
  await p.page.context().close();
});

test('B10 no focus stealing: typing in the composer continues while an answer, notices and errors arrive', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const id = await startTurn(p);
  await p.page.locator('#prompt').click();
  await p.page.keyboard.type('abc');
  await stream(p, id, ['Some ', 'answer']);
  await p.host({ type: 'notices', notices: [{ id: 'n1', text: 'Activated api-helper — triggered by src/api/users.py', uri: 'file:///w/src/api/users.py' }] });
  await p.page.keyboard.type('def');
  await finish(p, id, 'Some answer', { error: { kind: 'auth', message: 'The API key was rejected', actions: ['setApiKey'] } });
  await p.page.keyboard.type('ghi');
  assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'prompt');
  assert.equal(await p.page.locator('#prompt').inputValue(), 'abcdefghi');
  await p.page.context().close();
});

test('errors inline with the fixing action: auth offers Set API key and posts it', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const id = await startTurn(p);
  await finish(p, id, '', { error: { kind: 'auth', message: 'The API key was rejected by http://x/v1 (HTTP 401).', actions: ['setApiKey', 'retry'] } });
  const err = p.page.locator(`[data-id="${id}"] .error`);
  assert.equal(await err.getAttribute('role'), 'alert');
  assert.match((await err.textContent())!, /API key was rejected/);
  await err.getByRole('button', { name: 'Set API key' }).click();
  assert.ok((await p.posted()).some((m) => m.type === 'action' && m.action === 'setApiKey'));
  await p.page.context().close();
});

test('tool calls render as compact cards (tool, path, one-line result)', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const id = await startTurn(p);
  await p.host({ type: 'patches', patches: [{ op: 'tool', id, card: { id: 'c1', key: '0', at: 0, name: 'read_file', detail: 'src/app.py' } }] });
  await p.frame();
  assert.equal(await p.page.locator('.tool .tool-result').textContent(), '…');
  await p.host({ type: 'patches', patches: [{ op: 'tool', id, card: { id: 'c1', key: '0', at: 0, name: 'read_file', detail: 'src/app.py', result: 'Read 42 lines', isError: false } }] });
  await p.frame();
  assert.equal(await p.page.locator('.tool').count(), 1);
  assert.deepEqual(await p.page.locator('.tool summary span').allTextContents(), ['read_file', 'src/app.py', 'Read 42 lines']);
  await p.page.context().close();
});

test('an edit tool card shows how it was approved (denied in the error colour)', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const id = await startTurn(p);
  const edit = { id: 'e1', key: '0', at: 0, name: 'edit', detail: '/w/src/x.py' };
  await p.host({ type: 'patches', patches: [{ op: 'tool', id, card: { ...edit, result: 'Declined: edit src/x.py', isError: true, decision: 'deny' } }] });
  await p.host({ type: 'patches', patches: [{ op: 'tool', id, card: { id: 'e2', key: '1', at: 0, name: 'write_file', detail: '/w/new.py', result: 'Created new.py', decision: 'allowAlways' } }] });
  await p.frame();
  assert.deepEqual(await p.page.locator('[data-tool-id="e1"] summary span').allTextContents(), ['edit', '/w/src/x.py', 'Declined: edit src/x.py', 'denied']);
  assert.equal(await p.page.locator('[data-tool-id="e2"] .tool-decision').textContent(), 'allowed always');
  assert.equal(await p.page.locator('.tool-decision.decision-deny').count(), 1);
  await p.page.context().close();
});

test('notices, attachment chips, History and the context figure post the right messages', async () => {
  const p = await web.open();
  await p.host(snapshot([], {
    attachments: [{ uri: 'file:///w/a.py', label: 'a.py' }, { uri: 'file:///w/b.py', label: 'b.py:1-3', range: { start: { line: 0, character: 0 }, end: { line: 2, character: 4 } } }],
    notices: [{ id: 'n1', text: 'Activated api-helper — triggered by src/api/users.py', uri: 'file:///w/src/api/users.py' }],
  }));
  await p.page.getByRole('button', { name: 'Remove attachment b.py:1-3' }).click();
  await p.page.getByRole('button', { name: /Open the file that triggered/ }).click();
  await p.page.getByRole('button', { name: 'Dismiss notice' }).click();
  // History is the host's quick pick (it fits the side bar); the figure line opens the Context view.
  await p.page.locator('#history').click();
  assert.equal(await p.page.locator('#context-figure').isHidden(), true, 'no figure until the host has one');
  await p.host({ type: 'contextFigure', figure: { left: '92% left', title: 'Context: 9,858 of 131,072 tokens, 92% left.', level: 'ok' } });
  await p.page.getByRole('button', { name: /Context: 9,858 of 131,072 tokens/ }).click();
  assert.equal(await p.page.locator('#context-figure').textContent(), 'Context: 92% left');
  const posted = (await p.posted()).filter((m) => m.type !== 'ready');
  assert.deepEqual(posted, [
    { type: 'removeAttachment', index: 1 },
    { type: 'openNotice', id: 'n1' },
    { type: 'dismissNotice', id: 'n1' },
    { type: 'showHistory' },
    { type: 'showContext' },
  ]);
  await p.page.context().close();
});

test('notices sit in the transcript where they happened: after two notices and a streamed answer the whole answer is in view, and a reload puts them back', async () => {
  const p = await web.open({ height: 560 });
  const first = [msg('user', 'Where are the API handlers?'), msg('assistant', 'In `src/api/`.')];
  await p.host(snapshot(first));
  const skill = { id: 'n1', at: 2, text: 'Activated api-helper — triggered by src/api/users.py', uri: 'file:///w/src/api/users.py' };
  const memory = { id: 'n2', at: 2, text: 'Memory updated (project): saved no-db-mocks.md', uri: 'file:///h/.qwen/projects/-w/memory/no-db-mocks.md', openLabel: 'Open memory' };
  await p.host({ type: 'notices', notices: [skill] });
  await p.host({ type: 'notices', notices: [skill, memory] });
  const id = await startTurn(p, 'Add a users endpoint');
  await stream(p, id, chunks(ANSWER.join(''), 9), true);
  await finish(p, id, ANSWER.join(''));
  const order = () => p.page.locator('#messages > *').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.noticeId ?? (e.classList.contains('user') ? 'user' : 'assistant')));
  const expected = ['user', 'assistant', 'n1', 'n2', 'user', 'assistant'];
  assert.deepEqual(await order(), expected, 'each notice is a line between the exchange before it and the one after');
  assert.equal(await p.page.locator('.notice').count(), 2, 'no other copy of the notices (nothing above the transcript)');
  const box = (await p.page.locator('#transcript').boundingBox())!;
  const header = (await p.page.locator('.header').boundingBox())!;
  assert.ok(box.y - (header.y + header.height) < 2, 'the transcript starts right under the header: notices take no room above it');
  const answer = (await p.page.locator(`[data-id="${id}"]`).boundingBox())!;
  assert.ok(answer.y >= box.y && answer.y + answer.height <= box.y + box.height + 1, `the whole answer is in view (answer ${answer.y}..${answer.y + answer.height}, transcript ${box.y}..${box.y + box.height})`);
  await p.page.screenshot({ path: path.join(ARTIFACTS, 'notices-inline-dark.png') });
  await p.page.getByRole('button', { name: 'Open memory: Memory updated (project): saved no-db-mocks.md' }).click();
  await p.page.getByRole('button', { name: /Open the file that triggered: Activated api-helper/ }).click();
  assert.deepEqual((await p.posted()).filter((m) => m.type === 'openNotice'), [{ type: 'openNotice', id: 'n2' }, { type: 'openNotice', id: 'n1' }]);
  await p.reload();
  const messages = [...first, { id: 'u2', role: 'user' as const, text: 'Add a users endpoint' }, { id, role: 'assistant' as const, text: ANSWER.join('') }];
  await p.host(snapshot(messages, { notices: [skill, memory] }));
  assert.deepEqual(await order(), expected, 'the snapshot puts each notice back at its place');
  await p.host({ type: 'notices', notices: [memory] });
  assert.deepEqual(await order(), ['user', 'assistant', 'n2', 'user', 'assistant'], 'a dismissed notice goes, the other stays where it is');
  await p.page.context().close();
});

test('qwen/memoryChanged notice: "Memory updated" names the file, opens it by notice id, and leaves the composer alone', async () => {
  const p = await web.open({ theme: 'light' });
  await p.host(snapshot([msg('user', 'Remember that tests never mock the database'), msg('assistant', 'Noted.')]));
  const composer = p.page.locator('textarea');
  await composer.click();
  await p.page.keyboard.type('next que');
  await p.host({
    type: 'notices',
    notices: [
      { id: 'n3', text: 'Activated api-helper — triggered by src/api/users.py', uri: 'file:///w/src/api/users.py' },
      { id: 'n4', text: 'Memory updated (project): saved no-db-mocks.md', uri: 'file:///home/u/.qwen/projects/-w/memory/feedback/no-db-mocks.md', openLabel: 'Open memory' },
    ],
  });
  await p.page.keyboard.type('stion');
  assert.equal(await composer.inputValue(), 'next question', 'the notice did not take the keystrokes');
  const notice = p.page.locator('#messages .notice[data-notice-id=n4]');
  assert.equal(await notice.locator('.notice-text').textContent(), 'Memory updated (project): saved no-db-mocks.md');
  await p.page.screenshot({ path: path.join(ARTIFACTS, 'memory-notice-light.png') });
  await p.page.getByRole('button', { name: 'Open memory: Memory updated (project): saved no-db-mocks.md' }).click();
  await notice.getByRole('button', { name: 'Dismiss notice' }).click();
  const posted = (await p.posted()).filter((m) => m.type !== 'ready');
  assert.deepEqual(posted, [
    { type: 'openNotice', id: 'n4' },
    { type: 'dismissNotice', id: 'n4' },
  ], 'the webview names the notice; the host decides which file that opens');
  await p.page.context().close();
});

test('B15 model output cannot run script: <img onerror>, <script>, javascript: links and raw HTML stay inert', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const id = await startTurn(p);
  const evil = [
    '<img src=x onerror="window.__xss=1">\n\n',
    '<script>window.__xss=2</script>\n\n',
    '[click me](javascript:window.__xss=3)\n\n',
    '<a href="javascript:window.__xss=4">raw link</a>\n\n',
    '![img](javascript:window.__xss=5)\n\n',
    '<svg onload="window.__xss=6"></svg>\n\n',
    '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)\n\n',
    '<iframe src="javascript:window.__xss=7"></iframe>\n\n',
    '[ok](https://example.com/docs)',
  ].join('');
  await stream(p, id, chunks(evil, 9), true);
  await finish(p, id, evil);
  await p.page.waitForTimeout(200);
  const body = p.page.locator(`[data-id="${id}"] .markdown`);
  assert.equal(await p.page.evaluate(() => (window as any).__xss), undefined, 'nothing executed');
  assert.equal(await body.locator('script, img, svg, iframe, [onerror], [onload]').count(), 0, 'no active elements made it into the DOM');
  const hrefs = await body.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(hrefs, ['https://example.com/docs'], 'only the safe link is a link');
  assert.match((await body.textContent())!, /<script>window.__xss=2<\/script>/, 'raw HTML is shown as text');
  // Clicking every link goes through the host (which allow-lists the scheme), never navigates.
  await body.locator('a').click();
  assert.ok((await p.posted()).some((m) => m.type === 'openLink' && m.href === 'https://example.com/docs'));
  assert.equal(p.page.url(), `${web.origin}/`);
  await p.page.context().close();
});

test('B15 the page runs under the strict CSP: an injected inline script is blocked', async () => {
  const p = await web.open();
  await p.page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.appendChild(s);
    // A string timer needs 'unsafe-eval'; the CSP has none.
    (window as any).setTimeout('window.__evaluated = 1', 0);
  });
  await p.page.waitForTimeout(100);
  const ran = await p.page.evaluate(() => ({ inline: (window as any).__inline, evaluated: (window as any).__evaluated, violations: (window as any).__csp as string[] }));
  assert.equal(ran.inline, undefined, 'inline script blocked');
  assert.equal(ran.evaluated, undefined, 'eval blocked');
  assert.ok(ran.violations.some((v) => v.startsWith('script-src')), `violations reported: ${ran.violations.join(', ')}`);
  await p.page.context().close();
});

test('B13 keyboard-only: every control is a named <button>, Tab moves out of the composer, Stop is reachable', async () => {
  const p = await web.open();
  await p.host(snapshot([msg('user', 'q'), msg('assistant', '```js\nx()\n```')], { notices: [{ id: 'n', text: 'Activated x' }], attachments: [{ uri: 'file:///a', label: 'a' }] }));
  await p.host({ type: 'running', running: true });
  const unnamed = await p.page.evaluate(() =>
    Array.from(document.querySelectorAll('[data-action], [data-code-action], #app button, #app [onclick]'))
      .filter((el) => el.tagName !== 'BUTTON' || !(el.getAttribute('aria-label') || el.textContent?.trim()))
      .map((el) => el.outerHTML),
  );
  assert.deepEqual(unnamed, []);
  await p.page.locator('#prompt').focus();
  const seen: string[] = [];
  for (let i = 0; i < 4; i++) {
    await p.page.keyboard.press('Tab');
    seen.push(await p.page.evaluate(() => document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || ''));
  }
  assert.notEqual(seen[0], 'prompt', 'Tab is not trapped in the composer');
  assert.ok(seen.includes('stop'), `Stop is reachable by Tab (saw ${seen.join(', ')})`);
  await p.page.keyboard.press('Shift+Tab');
  await p.page.locator('#stop').focus();
  await p.page.keyboard.press('Enter');
  assert.ok((await p.posted()).some((m) => m.type === 'stop'), 'Enter on the focused Stop button stops');
  await p.page.context().close();
});

test('B14 accessibility: aria-live announces completion and errors; reduced motion turns animation off', async () => {
  const p = await web.open({ reducedMotion: 'reduce' });
  await p.host(snapshot([]));
  const id = await startTurn(p);
  const anim = await p.page.locator(`[data-id="${id}"] .markdown`).evaluate((el) => getComputedStyle(el, '::after').animationName);
  assert.equal(anim, 'none', 'the streaming cursor does not blink under reduced motion');
  assert.equal(await p.page.locator('#messages').getAttribute('role'), 'log');
  await finish(p, id, 'Done');
  await p.page.waitForFunction(() => document.getElementById('live')!.textContent === 'Response complete');
  const id2 = await startTurn(p);
  await finish(p, id2, '', { error: { kind: 'connect', message: 'Nothing is listening', actions: ['openSettings'] } });
  await p.page.waitForFunction(() => document.getElementById('live')!.textContent === 'Error: Nothing is listening');
  const p2 = await web.open({ reducedMotion: 'no-preference' });
  await p2.host(snapshot([]));
  const id3 = await startTurn(p2);
  assert.equal(await p2.page.locator(`[data-id="${id3}"] .markdown`).evaluate((el) => getComputedStyle(el, '::after').animationName), 'blink');
  await p.page.context().close();
  await p2.page.context().close();
});

test('B14 themes: light, dark, high-contrast dark and light take every colour from --vscode-* variables (screenshots)', async () => {
  for (const theme of ['light', 'dark', 'hc-dark', 'hc-light'] as const) {
    const p = await web.open({ theme });
    await p.host(snapshot([
      msg('user', 'How do I greet in Python?'),
      msg('assistant', 'Use a function:\n\n```python\ndef hello(name):\n    return f"Hello, {name}!"\n```\n\nThen call `hello("Qwen")`. See [the docs](https://docs.python.org/3/).'),
      msg('user', 'And read a file?'),
      msg('assistant', 'Partial answ', { interrupted: true, tools: [{ id: 't', key: '0', at: 0, name: 'read_file', detail: 'src/app.py', result: 'Read 42 lines' }] }),
    ], { notices: [{ id: 'n', text: 'Activated api-helper — triggered by src/api/users.py', uri: 'file:///w/src/api/users.py' }], attachments: [{ uri: 'file:///w/a.py', label: 'app.py:3-9' }] }));
    const colors = await p.page.evaluate(() => {
      const css = getComputedStyle(document.documentElement);
      return {
        body: getComputedStyle(document.body).color,
        fg: css.getPropertyValue('--vscode-foreground').trim(),
        send: getComputedStyle(document.getElementById('send')!).backgroundColor,
        btn: css.getPropertyValue('--vscode-button-background').trim(),
      };
    });
    const hex = (rgb: string) => '#' + rgb.match(/\d+/g)!.slice(0, 3).map((n) => Number(n).toString(16).padStart(2, '0')).join('');
    assert.equal(hex(colors.body), colors.fg.toLowerCase(), `${theme}: text colour comes from --vscode-foreground`);
    assert.equal(hex(colors.send), colors.btn.toLowerCase(), `${theme}: the Send button uses --vscode-button-background`);
    await p.page.screenshot({ path: path.join(ARTIFACTS, `webview-${theme}.png`) });
    await p.page.context().close();
  }
});

test('mode picker: shows the approval mode from the snapshot and host, and a choice posts setApprovalMode (Qwen Code 0.24.4 labels)', async () => {
  const p = await web.open();
  await p.host(snapshot([], { approvalMode: 'plan' }));
  const picker = p.page.locator('#approval-mode');
  assert.equal(await picker.inputValue(), 'plan');
  assert.deepEqual(await picker.locator('option').allTextContents(), ['Ask permissions', 'Plan', 'Auto Edit', 'Auto', 'YOLO']);
  await picker.selectOption('auto');
  assert.ok((await p.posted()).some((m) => m.type === 'setApprovalMode' && m.mode === 'auto'), 'the choice reached the host');
  await p.host({ type: 'approvalMode', mode: 'yolo' });
  assert.equal(await picker.inputValue(), 'yolo');
  await p.page.context().close();
});
