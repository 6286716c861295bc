// Finding your way around the panel, end to end in a real VS Code (code-server, e2e/workbench.ts):
// the keyboard reaches the composer (Qwen: Focus Chat Input and "Focus on Chat View"), the
// status bar, the Context view and the panel show one context figure (also after a reload, and
// the Context view without clicking the meter), History is a quick pick that fits any side-bar
// width, and New chat / History / Compact are not offered twice. The model is e2e/scripted_e2e.py.
// Screenshots go to e2e/screenshots/*.png.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

let wb: Workbench;

before(async () => {
  const ws = tempDir('qwen-e2e-nav-');
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  writeFileSync(path.join(ws, 'src', 'notes.py'), '# notes\nVALUE = 1\n');
  writeFileSync(path.join(ws, 'src', 'clock.py'), '# Convention: timestamps are UTC everywhere\nimport time\n');
  wb = await Workbench.open({
    workspace: ws,
    modelScript: 'scripted_e2e.py',
    // Every model request is one this file makes: no memory extraction, consolidation or suggestions.
    userSettings: { 'qwen.memory.autoExtract': false, 'qwen.memory.autoDream': false, 'qwen.ui.enableFollowupSuggestions': false },
  });
});

after(async () => {
  await wb?.close();
});

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  e2eIn(() => wb, name, minutes, fn);
}

/**
 * Puts the caret in notes.py's editor (focus leaves the panel), after a click on the transcript:
 * what the panel had focused is then the transcript, not the composer.
 */
async function focusEditor(): Promise<void> {
  await wb.chat().locator('#transcript').click({ position: { x: 20, y: 20 } });
  await waitFor(async () => (await wb.chat().locator('#transcript').evaluate((el) => el === document.activeElement)), 'the transcript focused', 15_000);
  await wb.openFile('notes.py');
  await wb.page.locator('.editor-instance .view-lines').first().click();
  await wb.page.waitForFunction(() => !!document.activeElement?.closest('.monaco-editor'), undefined, { timeout: 15_000 });
}

/** Waits for the keyboard focus to be in the composer, types `text`, and checks it went there and not to notes.py. */
async function typeIntoComposer(text: string): Promise<void> {
  const prompt = wb.chat().locator('#prompt');
  await prompt.evaluate((el: HTMLTextAreaElement) => (el.value = '')); // empty, without moving the focus
  const focused = (): Promise<boolean> => wb.chat().locator('#prompt').evaluate((el) => document.hasFocus() && document.activeElement === el);
  await waitFor(focused, 'the caret in the composer', 15_000);
  await wb.page.keyboard.type(text);
  await waitFor(async () => (await prompt.inputValue()) === text, `"${text}" typed into the composer`, 15_000);
  // Monaco renders spaces as no-break spaces.
  const editor = ((await wb.page.locator('.editor-group-container.active .monaco-editor .view-lines').first().textContent()) ?? '').replace(/\u00a0/g, ' ');
  assert.ok(editor.includes('VALUE = 1') && !editor.includes(text), `nothing went to the editor: ${editor}`);
  await prompt.evaluate((el: HTMLTextAreaElement) => (el.value = ''));
}

async function send(text: string): Promise<void> {
  const prompt = wb.chat().locator('#prompt');
  await prompt.click();
  await prompt.fill(text);
  await prompt.press('Enter');
  await wb.chat().locator('.msg.user', { hasText: text }).waitFor({ timeout: LONG });
  await wb.chat().locator('#send:not([disabled])').waitFor({ timeout: LONG });
}

/** The status bar's context meter: "Qwen 92% left" → 92 (undefined while it shows only "Qwen"). */
async function meterPercent(): Promise<number | undefined> {
  const texts = await wb.page.locator('.statusbar-item').allTextContents();
  const m = texts.map((t) => /Qwen (\d+)% left/.exec(t)).find(Boolean);
  return m ? Number(m[1]) : undefined;
}

e2e('"Focus on Chat View" puts the caret in the composer, not on the webview page', 5, async () => {
  await wb.openQwen();
  await focusEditor();
  await wb.command('Qwen: Focus on Chat View');
  await typeIntoComposer('asked from the keyboard');
});

e2e('Qwen: Focus Chat Input has a default keybinding (Ctrl+Alt+Q) that puts the caret in the composer from the editor', 4, async () => {
  await focusEditor();
  await wb.page.keyboard.press('Control+Alt+Q');
  await typeIntoComposer('and once more');
});

e2e('the status bar, the Context view and the panel show one context figure; the Context view is filled without clicking the meter; a reload keeps the figure', 8, async () => {
  // Before any message the meter already has a figure (what the first request would hold).
  await waitFor(async () => (await meterPercent()) !== undefined, 'a figure on the meter before the first message', LONG);
  await send('Write a greeting function');
  const figure = wb.chat().locator('#context-figure');
  await figure.waitFor({ timeout: LONG });
  // The Context view, opened by its header (not through the meter): its first row is the server's count of the
  // next request, with the endpoint's count of the last one beside it: that one is the meter's figure.
  const header = wb.page.locator('.pane-header', { has: wb.page.locator('.title', { hasText: /^Context$/ }) });
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
  const rows = wb.page.locator('.pane', { has: header }).locator('.pane-body .monaco-list-row');
  await rows.first().waitFor({ timeout: LONG });
  let agreed = '';
  await waitFor(async () => {
    const bar = await meterPercent();
    const panel = /Context: (\d+)% left/.exec((await figure.textContent()) ?? '')?.[1];
    const top = (await rows.first().textContent()) ?? '';
    const m = /Next request: [\d,]+ tokens\D*?\d+% left of ([\d,]+) · the endpoint counted ([\d,]+) for the last request/.exec(top);
    const num = (x: string): number => Number(x.replace(/,/g, ''));
    const view = m ? String(Math.round(Math.round(1000 * (1 - num(m[2]) / num(m[1]))) / 10)) : undefined;
    agreed = `status bar ${bar}%, panel ${panel}%, Context view "${top}"`;
    return bar !== undefined && String(bar) === panel && panel === view;
  }, 'one figure everywhere', 60_000).catch(() => assert.fail(`the figures disagree: ${agreed}`));
  const all = (await rows.allTextContents()).join(' | ');
  assert.ok((await rows.count()) > 2, `the parts of the request are listed: ${all}`);
  for (const pct of all.match(/\d+(?=%)/g) ?? []) assert.ok(Number(pct) <= 100, `no percentage over 100 in the Context view: ${all}`);
  assert.match(all, /history[\d,]+ tokens/, 'a history row, so the parts add up to the headline');
  assert.doesNotMatch(all, /% used/, 'one wording: "% left", as the status bar');
  const before = await meterPercent();
  await wb.shot('context-figure');
  // After a reload the meter shows the figure again, without a new message.
  await wb.command('Developer: Reload Window');
  await wb.page.waitForSelector('.monaco-workbench .statusbar', { timeout: LONG });
  await wb.chat().locator('.msg.user', { hasText: 'Write a greeting function' }).waitFor({ timeout: LONG });
  await waitFor(async () => (await meterPercent()) === before, `the meter shows ${before}% left after the reload`, LONG);
  await wb.chat().locator('#context-figure', { hasText: `Context: ${before}% left` }).waitFor({ timeout: LONG });
});

const LONG_TITLE = 'Explain how the billing service retries failed payment webhooks across regions';

e2e('History is a quick pick that fits: whole titles, a Delete button on each chat, no horizontal scrolling; picking one resumes it', 6, async () => {
  await wb.openQwen();
  await wb.chat().locator('#new-chat').click();
  await send(LONG_TITLE);
  await wb.chat().locator('#new-chat').click();
  await send('Another chat to delete');
  const chats = path.join(wb.projectStateDir(), 'chats');
  const files = (): string[] => readdirSync(chats).filter((f) => f.endsWith('.jsonl'));
  assert.equal(files().length, 3);
  await wb.chat().locator('#history').click();
  const picker = wb.page.locator('.quick-input-widget');
  await picker.locator('.quick-input-title', { hasText: 'Chat History' }).waitFor({ timeout: LONG });
  const list = picker.locator('.quick-input-list');
  const row = (title: string) => list.locator('.monaco-list-row', { hasText: title }).first();
  await row(LONG_TITLE).waitFor({ timeout: LONG });
  await row('Write a greeting function').waitFor({ timeout: LONG });
  // The whole title shows (not squeezed to a letter) and nothing scrolls sideways.
  const label = row(LONG_TITLE).locator('.label-name');
  assert.equal(await label.evaluate((el) => el.textContent), LONG_TITLE);
  assert.ok(await label.evaluate((el) => el.scrollWidth <= el.clientWidth + 1), 'the title is not cut');
  assert.ok(await list.evaluate((el) => el.scrollWidth <= el.clientWidth + 1), 'no horizontal scrolling');
  await wb.shot('history-quick-pick');
  // Delete is on the row (shown on hover, as VS Code's own lists) and keeps the list open.
  const doomed = row('Another chat to delete');
  await doomed.hover();
  await doomed.locator('.action-label[aria-label="Delete chat"]').click();
  await doomed.waitFor({ state: 'detached', timeout: LONG });
  await waitFor(() => files().length === 2, 'the deleted chat\'s file is gone', 30_000);
  // A row also opens its chat in an editor tab, by a button: picking the row asks nothing more.
  await row('Write a greeting function').hover();
  await row('Write a greeting function').locator('.action-label[aria-label="Open in Editor Tab"]').waitFor();
  await row('Write a greeting function').click();
  await picker.waitFor({ state: 'hidden', timeout: 15_000 });
  await wb.chat().locator('.msg.user', { hasText: 'Write a greeting function' }).waitFor({ timeout: LONG });
  assert.equal(await wb.chat().locator('.msg.user', { hasText: LONG_TITLE }).count(), 0, 'the picked chat replaced the one shown');
});

e2e('New chat, History and Compact are offered once (in the panel), not again in the view title; Jump to latest is an opaque pill', 3, async () => {
  const sidebar = wb.page.locator('.part.sidebar');
  assert.ok((await sidebar.locator('[aria-label^="Open Chat in Editor Tab"]').count()) > 0, 'the view title still has its own action');
  // "New Chat in Editor Tab" is another action (a chat of its own in a tab); "New Chat" itself is the panel's.
  for (const title of ['New Chat', 'Chat History', 'Compact Conversation']) {
    const same = sidebar.locator(`.actions-container [aria-label="${title}"], .actions-container [aria-label^="${title} ("]`);
    assert.equal(await same.count(), 0, `${title} is not in the view title too`);
  }
  await wb.chat().locator('#new-chat').waitFor();
  await wb.chat().locator('#history').waitFor();
  await wb.chat().locator('#compact').waitFor();
  const bg = await wb.chat().locator('#jump').evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.doesNotMatch(bg, /rgba\(0, 0, 0, 0\)|transparent/, `the pill has a background of its own: ${bg}`);
});

e2e('"Remember this convention" on a comment asks for the rule in words, prefilled without the comment marker or the "Convention:" label; Open opens the memory', 4, async () => {
  await wb.openFile('clock.py');
  await wb.page.locator('.monaco-editor .view-line', { hasText: 'timestamps are UTC' }).waitFor({ timeout: 15_000 });
  await wb.page.locator('.editor-instance .view-lines').first().click();
  await wb.page.keyboard.press('Control+Home');
  await wb.page.keyboard.press('Shift+End');
  await wb.page.locator('.monaco-editor .selected-text').first().waitFor({ timeout: 15_000 });
  await wb.command('Qwen: Remember this convention');
  const box = await wb.inputBox('Remember this convention', 'timestamps are UTC everywhere');
  await wb.shot('remember-input-prefilled');
  await box.press('Enter');
  const toast = wb.page.locator('.notifications-toasts .notification-toast', { hasText: 'Remembered “timestamps are UTC everywhere” as a project memory' });
  await toast.waitFor({ timeout: LONG });
  const file = path.join(wb.projectStateDir(), 'memory', 'feedback', 'timestamps-are-utc-everywhere.md');
  assert.match((await toast.textContent())!, /in ~\/\.qwen\/projects\/[^/]+\/memory\/feedback\/timestamps-are-utc-everywhere\.md/, 'the notice names the file');
  await waitFor(() => existsSync(file), `the memory at ${file}`, 30_000).catch(() => assert.fail(`saved as ${readdirSync(path.dirname(file)).join(', ')}`));
  assert.equal(readFileSync(file, 'utf8'), '---\nname: timestamps are UTC everywhere\ndescription: timestamps are UTC everywhere\ntype: feedback\n---\n\ntimestamps are UTC everywhere\n');
  await toast.locator('a.monaco-button', { hasText: 'Open' }).click();
  await wb.page.locator('.tab.active', { hasText: 'timestamps-are-utc-everywhere.md' }).waitFor({ timeout: LONG });
});

e2e('"Remember this convention" on a code line: Escape saves nothing; the words typed are saved, named in the notice, and Undo removes them again', 5, async () => {
  const folder = path.join(wb.projectStateDir(), 'memory', 'feedback');
  const before = readdirSync(folder).sort();
  await wb.openFile('clock.py');
  await wb.page.locator('.monaco-editor .view-line', { hasText: 'import time' }).waitFor({ timeout: 15_000 });
  await wb.page.locator('.editor-instance .view-lines').first().click();
  await wb.page.keyboard.press('Control+Home');
  await wb.page.keyboard.press('ArrowDown');
  await wb.page.keyboard.press('Home');
  await wb.page.keyboard.press('Shift+End');
  await wb.page.locator('.monaco-editor .selected-text').first().waitFor({ timeout: 15_000 });
  // The code line is only the prefill: Escape leaves no memory behind.
  await wb.command('Qwen: Remember this convention');
  await (await wb.inputBox('Remember this convention', 'import time')).press('Escape');
  await wb.page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 15_000 });
  await wb.command('Qwen: Remember this convention');
  const box = await wb.inputBox('Remember this convention', 'import time');
  const words = 'Durations are measured with time.monotonic()';
  await box.fill(words);
  await wb.shot('remember-input-words');
  await box.press('Enter');
  const toast = wb.page.locator('.notifications-toasts .notification-toast', { hasText: `Remembered “${words}” as a project memory` });
  await toast.waitFor({ timeout: LONG });
  const slug = 'durations-are-measured-with-time-monotonic.md';
  assert.match((await toast.textContent())!, new RegExp(`memory/feedback/${slug.replace(/\./g, '\\.')}`), 'the notice names the file');
  await wb.shot('remember-saved-notice');
  const file = path.join(folder, slug);
  await waitFor(() => existsSync(file), `the memory at ${file}`, 30_000);
  assert.equal(readFileSync(file, 'utf8'), `---\nname: ${words}\ndescription: ${words}\ntype: feedback\n---\n\n${words}\n`);
  // Escape saved nothing: the folder holds what it held before plus the one memory saved with words.
  assert.deepEqual(readdirSync(folder).sort(), [...before, slug].sort());
  await toast.locator('a.monaco-button', { hasText: 'Undo' }).click();
  await wb.page.locator('.notifications-toasts .notification-toast', { hasText: `Forgot “${words}”.` }).waitFor({ timeout: LONG });
  await waitFor(() => !existsSync(file), 'the memory file removed by Undo', 30_000);
  assert.deepEqual(readdirSync(folder).sort(), before, 'Undo removed just that memory');
  await wb.shot('remember-undone');
});
