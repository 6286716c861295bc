// The chat webview's rendering in a narrow side bar, in headless Chromium (the real bundle, CSS
// and CSP): tables and long tokens, highlighted code blocks with a toolbar that stays reachable,
// multi-round tool calls in the order they happened, and a reopened chat rendered as it was live.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { msg, snapshot, useWebview } from './webviewHarness';
import type { Panel } from './webviewHarness';
import { Transcript } from '../src/transcript';
import type { ChatEvent } from '../src/shared/protocol';
import type { StreamPatch } from '../src/shared/messages';

const web = useWebview();

/** A side bar about 250 px wide, as the report measured. */
async function narrowPanel(theme: 'dark' | 'light' = 'dark'): Promise<Panel> {
  const p = await web.open({ theme });
  await p.page.setViewportSize({ width: 250, height: 600 });
  return p;
}

const TABLE = [
  '| Endpoint | Method | Handler | Auth | Rate limit | Notes |',
  '|---|---|---|---|---|---|',
  '| /api/users | GET | list_users | token | 100/min | paginated by cursor |',
  '| /api/users/{id} | DELETE | delete_user | admin | 10/min | soft delete only |',
].join('\n');
const WORD = 'Supercalifragilisticexpialidocious'.repeat(4);
const URL_TEXT = 'https://example.com/a/very/long/path/that/does/not/break/anywhere/by/itself/index.html?query=1234567890';

test('4 narrow side bar: a wide table scrolls sideways in its own box, long words and URLs wrap, nothing is clipped', async () => {
  const p = await narrowPanel();
  await p.host(snapshot([msg('user', `Explain ${WORD}`), msg('assistant', `${TABLE}\n\n${WORD}\n\nSee ${URL_TEXT}`)]));
  const m = await p.page.evaluate(() => {
    const box = document.querySelector<HTMLElement>('.table-scroll')!;
    const table = box.querySelector('table')!;
    const transcript = document.getElementById('transcript')!;
    const overflowing = Array.from(document.querySelectorAll<HTMLElement>('.msg .body, .msg p')).filter((el) => el.scrollWidth > el.clientWidth + 1).length;
    box.scrollLeft = box.scrollWidth;
    const last = table.querySelector('tr:first-child th:last-child')!.getBoundingClientRect();
    const boxRect = box.getBoundingClientRect();
    return {
      body: document.body.clientWidth,
      tableWidth: table.scrollWidth,
      boxWidth: box.clientWidth,
      boxScrolls: getComputedStyle(box).overflowX,
      lastColumnReachable: last.right <= boxRect.right + 1 && last.left >= boxRect.left - 1,
      transcriptOverflow: transcript.scrollWidth - transcript.clientWidth,
      overflowing,
      focusable: box.tabIndex,
    };
  });
  assert.ok(m.body <= 250, `body ${m.body}px`);
  assert.ok(m.tableWidth > m.boxWidth, `the table (${m.tableWidth}px) is wider than the side bar (${m.boxWidth}px): the case under test`);
  assert.equal(m.boxScrolls, 'auto');
  assert.ok(m.lastColumnReachable, 'scrolled to the end, the last column is fully inside the box');
  assert.equal(m.focusable, 0, 'the scroll box is reachable by keyboard');
  assert.ok(m.transcriptOverflow <= 0, `the transcript itself does not scroll sideways (${m.transcriptOverflow}px)`);
  assert.equal(m.overflowing, 0, 'no message body or paragraph is wider than the side bar (long word and URL wrap)');
  await p.page.screenshot({ path: 'test-artifacts/narrow-table.png' }).catch(() => undefined);
  await p.page.context().close();
});

const LONG_CODE = ['```python', 'import os', '', 'def handler(event):', '    """Say hello."""', '    return "hi" + str(42)', ...Array.from({ length: 80 }, (_, i) => `x${i} = ${i}  # line ${i}`), '```'].join('\n');

test('10 code blocks: tokens coloured from the theme, the Copy / Insert bar stays reachable on a long block, "Copied" shows', async () => {
  for (const theme of ['dark', 'light'] as const) {
    const p = await narrowPanel(theme);
    await p.host(snapshot([msg('user', 'code please'), msg('assistant', `Here:\n\n${LONG_CODE}\n\nDone.`)]));
    const colours = await p.page.evaluate(() => {
      const root = getComputedStyle(document.documentElement);
      const probe = document.createElement('span');
      document.body.append(probe);
      const resolve = (v: string): string => {
        probe.style.color = root.getPropertyValue(v).trim();
        return getComputedStyle(probe).color;
      };
      const colour = (sel: string): string | undefined => {
        const el = document.querySelector(`.code-block ${sel}`);
        return el ? getComputedStyle(el).color : undefined;
      };
      return {
        keyword: [colour('.hljs-keyword'), resolve('--vscode-debugTokenExpression-boolean')],
        string: [colour('.hljs-string'), resolve('--vscode-debugTokenExpression-string')],
        number: [colour('.hljs-number'), resolve('--vscode-debugTokenExpression-number')],
        fn: [colour('.hljs-title.function_'), resolve('--vscode-symbolIcon-functionForeground')],
      };
    });
    for (const [token, [shown, wanted]] of Object.entries(colours)) assert.equal(shown, wanted, `${theme}: ${token} in the theme's colour`);

    // Scroll to the middle of the 85-line block: its toolbar is still on screen and clickable.
    const reachable = await p.page.evaluate(() => {
      const box = document.getElementById('transcript')!;
      const block = document.querySelector<HTMLElement>('.code-block')!;
      box.scrollTop += block.getBoundingClientRect().top - box.getBoundingClientRect().top + block.offsetHeight / 2;
      const bar = block.querySelector('.code-actions')!.getBoundingClientRect();
      const view = box.getBoundingClientRect();
      const copy = block.querySelector<HTMLElement>('[data-code-action="copy"]')!.getBoundingClientRect();
      const hit = document.elementFromPoint(copy.left + copy.width / 2, copy.top + copy.height / 2);
      return { blockTopAbove: block.getBoundingClientRect().top < view.top, barInView: bar.top >= view.top - 1 && bar.bottom <= view.bottom, hit: (hit as HTMLElement | null)?.dataset?.codeAction };
    });
    assert.ok(reachable.blockTopAbove, 'the block starts above the visible area (the case under test)');
    assert.ok(reachable.barInView, `${theme}: the toolbar stays in view`);
    assert.equal(reachable.hit, 'copy', 'nothing covers the Copy button');
    await p.page.locator('[data-code-action="copy"]').click();
    assert.equal(await p.page.locator('[data-code-action="copy"]').textContent(), 'Copied');
    const copied = (await p.posted()).find((m) => m.type === 'copy');
    assert.ok(copied?.text.startsWith('import os\n\ndef handler(event):'), 'the plain source is copied, not the highlighted markup');
    await p.page.waitForFunction(() => document.querySelector('[data-code-action="copy"]')?.textContent === 'Copy');
    await p.page.context().close();
  }
});

let seqN = 0;
function ev(kind: ChatEvent['kind'], o: Partial<ChatEvent> = {}): ChatEvent {
  return { sessionId: 's1', turnId: 't1', seq: seqN++, kind, ...o } as ChatEvent;
}

/** Two rounds that both call `call_0`, as several OpenAI-compatible servers number tool calls. */
const ROUNDS: ChatEvent[] = [
  ev('text', { text: 'first.' }),
  ev('toolCall', { tool: { id: 'call_0', name: 'read_file', args: { absolute_path: '/w/src/users.py' } } }),
  ev('toolResult', { text: 'Read 2 lines', tool: { id: 'call_0', name: 'read_file', isError: false, output: 'def list_users():\n    return db.all()' } }),
  ev('text', { text: 'list_users() reads the table.' }),
  ev('toolCall', { tool: { id: 'call_0', name: 'grep', args: { pattern: 'list_users' } } }),
  ev('toolResult', { text: 'src/api.py:3', tool: { id: 'call_0', name: 'grep', isError: false } }),
  ev('text', { text: 'It is called once.' }),
];

/** The answer's body in document order: text parts and tool rows. */
async function bodyOrder(p: Panel): Promise<string[]> {
  return p.page.evaluate(() =>
    Array.from(document.querySelectorAll('.msg.assistant .answer > .markdown, .msg.assistant .answer > .tools > .tool')).flatMap((el) =>
      el.classList.contains('tool')
        ? [`tool ${el.querySelector('.tool-name')!.textContent} ${el.querySelector('.tool-result')!.textContent}`]
        : el.textContent!.trim() ? [`text ${el.textContent!.trim()}`] : [],
    ),
  );
}

const IN_ORDER = [
  'text first.',
  'tool read_file Read 2 lines',
  'text list_users() reads the table.',
  'tool grep src/api.py:3',
  'text It is called once.',
];

test('5 multi-round tool calls with a reused id: rows between the texts in the order they ran, none stuck at "…", expandable with a file link', async () => {
  const p = await narrowPanel();
  await p.host(snapshot([]));
  const t = new Transcript((x) => x.replace('/w/', ''));
  const [user, answer] = t.begin('who calls list_users?');
  await p.host([{ type: 'message', message: user }, { type: 'message', message: answer }, { type: 'running', running: true }]);
  for (const e of ROUNDS) {
    const patch = t.apply(e) as StreamPatch;
    await p.host({ type: 'patches', patches: [patch] });
  }
  await p.frame();
  assert.deepEqual(await bodyOrder(p), IN_ORDER);
  await p.host([{ type: 'message', message: t.end({ text: 'It is called once.' })! }, { type: 'running', running: false }]);
  assert.deepEqual(await bodyOrder(p), IN_ORDER, 'the settled answer keeps the order');

  const row = p.page.locator('.tool', { hasText: 'read_file' });
  await row.locator('summary').click();
  assert.match((await row.locator('.tool-args').textContent())!, /"absolute_path": "\/w\/src\/users.py"/);
  assert.equal(await row.locator('.tool-output').textContent(), 'def list_users():\n    return db.all()');
  await row.locator('a.tool-file').click();
  assert.ok((await p.posted()).some((m) => m.type === 'openLink' && m.href === 'file:///w/src/users.py'), 'the row links to its file');
  await p.page.context().close();
});

test('6 a reopened chat renders as it was live: rows in order, the failed turn\'s error, "Interrupted" on a stopped answer', async () => {
  const p = await narrowPanel();
  const t = new Transcript((x) => x.replace('/w/', ''));
  // What qwen/sessions/resume returns for the turn above and a stopped one.
  t.load({
    sessionId: 's1',
    promptTokens: 0,
    messages: [
      { role: 'user', text: 'who calls list_users?' },
      {
        role: 'assistant',
        text: 'first.list_users() reads the table.It is called once.',
        tools: [
          { id: 'call_0', name: 'read_file', at: 6, args: { absolute_path: '/w/src/users.py' }, result: 'def list_users():\n    return db.all()', display: 'Read 2 lines', isError: false },
          { id: 'call_0', name: 'grep', at: 35, args: { pattern: 'list_users' }, result: 'src/api.py:3', isError: false },
        ],
      },
      { role: 'user', text: 'and the tests?' },
      { role: 'assistant', text: '', error: 'No answer was recorded for this message.' },
      { role: 'user', text: 'and more?' },
      { role: 'assistant', text: 'Partial answ', interrupted: true },
    ],
  });
  await p.host(snapshot(t.messages));
  assert.deepEqual(await bodyOrder(p).then((o) => o.slice(0, 5)), IN_ORDER);
  assert.equal(await p.page.locator('.msg.assistant').nth(1).locator('[role="alert"] .error-text').textContent(), 'No answer was recorded for this message.');
  assert.equal(await p.page.locator('.msg.assistant').nth(2).locator('.badge').textContent(), 'Interrupted — stopped before the answer was complete.');
  const row = p.page.locator('.tool', { hasText: 'grep' });
  await row.locator('summary').click();
  assert.equal(await row.locator('.tool-output').textContent(), 'src/api.py:3', 'a reopened row expands to its output like a live one');
  await p.page.context().close();
});
