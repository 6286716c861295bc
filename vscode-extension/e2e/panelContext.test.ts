// The context as a picture, end to end in a real VS Code (code-server, e2e/workbench.ts): the chips
// under each answer say what its request gained (the skill the model loaded, the skill and the file
// the editor opened), a chip opens its file, the Context Picture view draws one bar per request the chat sent,
// and every number is checked against what the scripted endpoint (e2e/scripted_panel.py) logged of
// the requests it received. qwen.chat.showContextChanges hides the chips. Screenshots at 300 and
// 600 px, light and dark, go to e2e/screenshots/panel-context-*.png.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

let wb: Workbench;
let log: string;

before(async () => {
  const ws = tempDir('qwen-e2e-context-');
  mkdirSync(path.join(ws, 'src', 'api'), { recursive: true });
  writeFileSync(path.join(ws, 'src', 'api', 'users.py'), 'def get_user(user_id):\n    return {"id": user_id}\n');
  writeFileSync(path.join(ws, 'QWEN.md'), 'Project rules: keep handlers small.\n');
  mkdirSync(path.join(ws, '.qwen', 'skills', 'api-conventions'), { recursive: true });
  writeFileSync(
    path.join(ws, '.qwen', 'skills', 'api-conventions', 'SKILL.md'),
    '---\nname: api-conventions\ndescription: How API handlers are written here\n---\nEvery handler returns a typed UsersResponse; never a bare dict.\n',
  );
  // A conditional skill: listed once a file under src/api is open.
  mkdirSync(path.join(ws, '.qwen', 'skills', 'users-api'), { recursive: true });
  writeFileSync(path.join(ws, '.qwen', 'skills', 'users-api', 'SKILL.md'), '---\nname: users-api\ndescription: The users endpoints\npaths: ["src/api/**"]\n---\nUsers live in src/api.\n');
  log = path.join(tempDir('qwen-e2e-context-log-'), 'requests.jsonl');
  wb = await Workbench.open({
    workspace: ws,
    modelScript: 'scripted_panel.py',
    modelArgs: [log],
    userSettings: {
      'qwen.memory.autoExtract': false,
      'qwen.memory.autoDream': false,
      'qwen.ui.enableFollowupSuggestions': false,
      'qwen.model.contextWindow': 32_000,
    },
  });
});

after(async () => {
  await wb?.close();
});

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  e2eIn(() => wb, name, minutes, fn);
}

interface Logged {
  tokens: number;
  skill: boolean;
  editor: boolean;
  listed: boolean;
}

/** What the scripted endpoint logged of each chat request it received, in order. */
function logged(): Logged[] {
  return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Logged);
}

/** The chips under the last answer, as shown. */
async function lastChips(): Promise<string[]> {
  return wb.chat().locator('.msg.assistant').last().locator('.context-chip').allTextContents();
}

/** The Context Picture view's page (found by its content: it is written again on every change). */
async function picture(): Promise<Frame> {
  return waitFor(async () => {
    for (const f of wb.page.frames()) if (await f.locator('ol.requests').count().catch(() => 0)) return f;
    return undefined;
  }, 'the Context Picture view with its bars', LONG);
}

/** The bars' totals, once the view shows `n` of them. */
async function barTotals(n: number): Promise<number[]> {
  return waitFor(async () => {
    const totals = await (await picture()).locator('li.request').evaluateAll((li) => li.map((el) => Number(el.getAttribute('data-total'))));
    return totals.length === n ? totals : undefined;
  }, `${n} bars`, LONG);
}

e2e('chips say what each request gained, checked against the requests the endpoint received; a chip opens its file', 10, async () => {
  await wb.openQwen();
  await wb.setWidth(600);
  await wb.send('Write a users handler');
  await wb.chat().locator('.msg.assistant', { hasText: 'Handler written' }).waitFor({ timeout: LONG });
  await waitFor(async () => (await lastChips()).length > 0, 'the first answer\'s chips', LONG);
  assert.deepEqual(await lastChips(), ['skill api-conventions']);
  // The endpoint's side: the turn's first request had no instructions, its second (after the skill call) had them.
  assert.deepEqual(logged().map((l) => l.skill), [false, true]);

  await wb.openFile('users.py');
  await wb.send('Is this right?');
  await wb.chat().locator('.msg.assistant', { hasText: 'Looks right.' }).waitFor({ timeout: LONG });
  await waitFor(async () => (await lastChips()).length > 0, 'the second answer\'s chips', LONG);
  assert.deepEqual(await lastChips(), ['skill users-api (opened src/api/users.py)', 'editor: users.py'], 'the loaded skill is no news any more; the file and the skill it switched on are');
  const requests = logged();
  assert.deepEqual(requests.map((l) => [l.skill, l.editor, l.listed]), [[false, false, false], [true, false, false], [true, true, true]]);

  const skillChip = wb.chat().getByRole('button', { name: /^Skill: skill api-conventions/ });
  await skillChip.click();
  await wb.page.locator('.tab.active', { hasText: 'SKILL.md' }).waitFor({ timeout: 30_000 });
});

/** For the screenshots: the Context Picture gets more of the side bar (the sash above the Context pane goes up by `px`). */
async function growPicture(px: number): Promise<void> {
  const header = (await wb.page.locator('.pane-header', { has: wb.page.locator('.title', { hasText: /^Context$/ }) }).boundingBox())!;
  const sash = await wb.page.evaluate((y) => {
    const near = [...document.querySelectorAll<HTMLElement>('.part.sidebar .monaco-sash.horizontal')]
      .map((el) => el.getBoundingClientRect())
      .filter((r) => r.width > 100 && Math.abs(r.top + r.height / 2 - y) < 6);
    return near[0] ? { x: near[0].left + near[0].width / 2, y: near[0].top + near[0].height / 2 } : undefined;
  }, header.y);
  if (!sash) return;
  await wb.page.mouse.move(sash.x, sash.y);
  await wb.page.mouse.down();
  await wb.page.mouse.move(sash.x, sash.y - px, { steps: 8 });
  await wb.page.mouse.up();
}

e2e('the Context Picture draws one bar per request, each the size the endpoint received, the parts adding up', 10, async () => {
  await wb.openQwen();
  await wb.page.locator('.pane-header', { hasText: 'Context Picture' }).click();
  const requests = logged();
  assert.equal(requests.length, 3);
  assert.deepEqual(await barTotals(3), requests.map((l) => l.tokens));
  const frame = await picture();
  const names = await frame.locator('.request-name').allTextContents();
  assert.deepEqual(names, ['Turn 1', 'Turn 1 · round 2', 'Turn 2']);
  // Every bar's segments add up to its total; the hover text gives each part's own figure.
  const sums = await frame.locator('li.request').evaluateAll((li) =>
    li.map((el) => [...el.querySelectorAll('.seg')].reduce((n, s) => n + Number(s.getAttribute('data-tokens')), 0)),
  );
  assert.deepEqual(sums, requests.map((l) => l.tokens));
  const skills = await frame.locator('li.request .seg[data-part="skills"]').evaluateAll((s) => s.map((e) => Number(e.getAttribute('data-tokens'))));
  assert.ok(skills[1] > skills[0], 'the loaded instructions count under skills');
  assert.match((await frame.locator('li.request').nth(2).locator('.seg[data-part="editor context"]').getAttribute('title'))!, /^Turn 2 · editor context: [\d,]+ tokens$/);
  assert.equal(await frame.locator('.mark').count(), 9, 'warn, auto and hard on every bar');
  assert.match((await frame.locator('.bar').first().getAttribute('aria-label'))!, new RegExp(`^Turn 1: ${requests[0].tokens.toLocaleString('en-US')} of 32,000 tokens`));
  assert.equal(await frame.locator('.visually-hidden table tr').count(), 4, 'a header and a row per request for screen readers');
  await growPicture(260);
  for (const theme of ['Dark Modern', 'Light Modern'] as const) {
    await wb.setTheme(theme);
    for (const px of [300, 600]) {
      await wb.setWidth(px);
      const sideways = await (await picture()).evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(sideways <= 0, `the picture fits ${px} px without scrolling sideways (${sideways} px over)`);
      await wb.shot(`panel-context-${theme.startsWith('Light') ? 'light' : 'dark'}-${px}`);
    }
  }
  await wb.setTheme('Dark Modern');
  // Collapsed again: the chat is then the only webview on screen (wb.chat() expects one).
  await wb.page.locator('.pane-header', { hasText: 'Context Picture' }).click();
  await waitFor(async () => (await wb.page.locator('iframe.webview.ready').count()) === 1, 'the picture collapsed', LONG);
});

/**
 * Clicks the Settings editor's checkbox of qwen.chat.showContextChanges, as a person turns it off or
 * on, and waits for `shown` (the chips' new state) before closing the editor: the editor writes the
 * setting a moment after the click, and closing it at once could drop the write.
 */
async function toggleShowContextChanges(shown: () => Promise<boolean>, what: string): Promise<void> {
  await wb.command('Preferences: Open Settings (UI)');
  const search = wb.page.locator('.settings-editor .search-container');
  await search.waitFor({ timeout: LONG });
  await search.click();
  await wb.page.keyboard.press('Control+A');
  await wb.page.keyboard.type('qwen.chat.showContextChanges');
  const item = wb.page.locator('.settings-editor .setting-item', { has: wb.page.locator('.setting-item-label', { hasText: 'Show Context Changes' }) }).first();
  await item.waitFor({ timeout: LONG });
  await item.locator('.setting-value-checkbox').click();
  await waitFor(shown, what, LONG);
  await wb.shot(`panel-context-setting-${what.replace(/\W+/g, '-')}`);
  await wb.page.keyboard.press('Control+W');
}

e2e('qwen.chat.showContextChanges off hides the chips at once; on shows them again', 6, async () => {
  await wb.openQwen();
  const chip = wb.chat().locator('.context-chip').first();
  await chip.waitFor({ timeout: LONG });
  await toggleShowContextChanges(async () => !(await chip.isVisible()), 'the chips hidden');
  assert.equal(await wb.chat().locator('.msg.assistant', { hasText: 'Looks right.' }).count(), 1, 'the answers stay');
  await toggleShowContextChanges(() => chip.isVisible(), 'the chips shown again');
});
