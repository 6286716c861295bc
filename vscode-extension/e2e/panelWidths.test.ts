// The panel at the widths a side bar really has (240, 300 and 600 px), end to end in a real VS Code
// (code-server, e2e/workbench.ts): the composer fits at 240 px, a click on Send leaves the caret in
// the composer, and a failed request offers "Set up model" beside "Open settings", which opens the
// Settings editor where this window's qwen.model.baseUrl is (the Remote tab in code-server); a tool
// row shows its path or command whole while the tool runs. The model is e2e/scripted_e2e.py. Screenshots go to e2e/screenshots/*.png.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

let wb: Workbench;

before(async () => {
  const ws = tempDir('qwen-e2e-widths-');
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  writeFileSync(path.join(ws, 'src', 'notes.py'), '# notes\nVALUE = 1\n');
  wb = await Workbench.open({
    workspace: ws,
    modelScript: 'scripted_e2e.py',
    modelArgs: [ws], // for the nested file's absolute path
    userSettings: { 'qwen.memory.autoExtract': false, 'qwen.memory.autoDream': false, 'qwen.ui.enableFollowupSuggestions': false },
  });
});

after(async () => {
  await wb?.close();
});

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  e2eIn(() => wb, name, minutes, fn);
}

/** Every part of the footer lies inside the panel: nothing is cut off or scrolls sideways. */
async function footerFits(): Promise<void> {
  const overflow = await wb.chat().locator('.footer').evaluate((footer) => {
    const right = document.documentElement.clientWidth;
    const out = [...footer.querySelectorAll<HTMLElement>('button:not([hidden]), textarea, .composer-row')]
      .filter((el) => el.offsetParent !== null)
      .filter((el) => el.getBoundingClientRect().right > right + 0.5)
      .map((el) => `${el.id || el.className} ends at ${Math.round(el.getBoundingClientRect().right)}`);
    if (document.documentElement.scrollWidth > right) out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${right})`);
    return out;
  });
  assert.deepEqual(overflow, []);
}

e2e('the composer fits at 240, 300 and 600 px: its buttons wrap instead of running out of the panel', 8, async () => {
  await wb.openQwen();
  for (const px of [240, 300, 600]) {
    await wb.setWidth(px);
    await footerFits();
    await wb.shot(`widths-composer-${px}`);
  }
});

e2e('a click on Send leaves the caret in the composer, at every width', 8, async () => {
  await wb.openQwen();
  for (const px of [600, 300, 240]) {
    await wb.setWidth(px);
    await wb.send(`hello at ${px}`);
    const focused = () => wb.chat().locator('#prompt').evaluate((el) => document.activeElement === el);
    await waitFor(focused, 'the caret back in the composer after Send', 10_000);
    await wb.page.keyboard.type('next');
    assert.equal(await wb.chat().locator('#prompt').inputValue(), 'next', 'typing goes on in the composer');
    await wb.chat().locator('#prompt').fill('');
    await wb.shot(`widths-send-focus-${px}`);
  }
});

e2e('a refused request offers "Set up model", and "Open settings" shows the window\'s own qwen.model settings', 8, async () => {
  await wb.openQwen();
  await wb.setWidth(300);
  await wb.send('this one fails');
  const error = wb.chat().locator('.msg.assistant .error').last();
  await error.waitFor({ timeout: LONG });
  const labels = await error.locator('.error-actions button').allTextContents();
  assert.ok(labels.includes('Set up model'), `the error offers Set up model: ${labels.join(', ')}`);
  assert.ok(labels.includes('Open settings'), `and Open settings: ${labels.join(', ')}`);
  await wb.shot('widths-error-actions-300');
  await error.locator('button', { hasText: 'Open settings' }).click();
  // code-server is a remote window: qwen.model.baseUrl (machine-scoped) is in its Remote settings,
  // and the Settings editor opens there, filtered to the model's settings, showing the value in use.
  const editor = wb.page.locator('.settings-editor');
  await editor.waitFor({ timeout: 30_000 });
  const selectedTab = (): Promise<string> => editor.locator('.settings-tabs-widget .checked').first().textContent({ timeout: 5_000 }).then((t) => t ?? '', () => '');
  await waitFor(async () => /Remote/.test(await selectedTab()), 'the Remote tab selected', 15_000);
  const row = editor.locator('.setting-item-contents').filter({ has: wb.page.locator('.setting-item-label', { hasText: /^Base Url$/ }) }).first();
  await row.waitFor({ timeout: 15_000 });
  assert.equal(await row.locator('input').first().inputValue(), wb.baseUrl, 'the base URL this window uses is shown');
  await wb.shot('widths-open-settings-remote');
  await wb.page.keyboard.press('Escape');
});

/**
 * While a tool runs (its card asks first, so the row stays live), its row shows `detail` whole at
 * 240, 300 and 600 px: the full text, wrapped, nothing cut by the row or the panel. Then Deny.
 */
async function liveRowShowsWhole(name: string, detail: string): Promise<void> {
  const chat = wb.chat();
  const row = chat.locator('.tool', { has: chat.locator('.tool-result', { hasText: /^…$/ }) }).last();
  await row.waitFor({ timeout: LONG });
  const card = chat.locator('.approval');
  await card.waitFor({ timeout: LONG });
  for (const px of [240, 300, 600]) {
    await wb.setWidth(px);
    const m = await row.locator('.tool-detail').evaluate((el) => {
      const box = el.getBoundingClientRect();
      const summary = el.closest('summary')!.getBoundingClientRect();
      return { text: el.textContent, cut: el.scrollWidth > el.clientWidth + 1, right: box.right, rowRight: summary.right, page: document.documentElement.clientWidth };
    });
    assert.equal(m.text, detail, `the row holds the whole ${name}`);
    assert.ok(!m.cut && m.right <= m.rowRight + 1 && m.right <= m.page + 1, `at ${px} px the ${name} is not cut: ${JSON.stringify(m)}`);
    await row.scrollIntoViewIfNeeded();
    await wb.shot(`widths-live-${name}-${px}`);
  }
  await wb.page.waitForTimeout(700); // past the card's arming delay
  await card.locator('button[data-option="deny"]').click();
  await chat.locator('#send:not([disabled])').waitFor({ timeout: LONG });
}

e2e('while a tool runs its row shows the path or the command whole, wrapped, at 240, 300 and 600 px', 10, async () => {
  await wb.openQwen();
  const prompt = wb.chat().locator('#prompt');
  await prompt.fill('write the nested file');
  await prompt.press('Enter');
  await liveRowShowsWhole('path', 'src/services/customer_accounts/billing_reconciliation/adapters/quarterly_statement_generator.py');
  await prompt.fill('run the long command');
  await prompt.press('Enter');
  await liveRowShowsWhole('command', 'touch build/reports/customer_accounts/billing_reconciliation/quarterly_statement_generator_output.txt && echo generated');
});
