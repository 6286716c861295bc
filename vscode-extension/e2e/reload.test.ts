// A window reload with a chat open, end to end in a real VS Code (code-server, e2e/workbench.ts):
// while the server starts again the panel is not blank — the header, the composer and "Opening the
// last chat…" show at once — and then the chat comes back. The server is made slow to start (a
// wrapper named by qwen.server.path waits before it starts the real one), so the panel's first
// paint is seen before the server could have answered. The model is e2e/scripted_e2e.py.
// A failed turn reopened after a reload or from History is retried in place; after Restart Server the
// chat goes on. Screenshots go to e2e/screenshots/*.png.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { python, tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';
import type { Locator } from 'playwright-core';

let wb: Workbench;

before(async () => {
  const ws = tempDir('qwen-e2e-reload-');
  writeFileSync(path.join(ws, 'README.md'), '# A project\n');
  wb = await Workbench.open({
    workspace: ws,
    modelScript: 'scripted_e2e.py',
    userSettings: { 'qwen.memory.autoExtract': false, 'qwen.memory.autoDream': false, 'qwen.ui.enableFollowupSuggestions': false },
  });
});

after(async () => {
  await wb?.close();
});

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  e2eIn(() => wb, name, minutes, fn);
}

const starts = (): number => (wb.qwenLog().match(/\[qwen\] starting the server/g) ?? []).length;
const resumesAnswered = (): number => (wb.qwenLog().match(/Received response 'qwen\/sessions\/resume/g) ?? []).length;

e2e('after a reload the panel shows the header, the composer and "Opening the last chat…" while the server starts, then the chat', 8, async () => {
  await wb.openQwen();
  const chat = wb.chat();
  const prompt = chat.locator('#prompt');
  await prompt.fill('Write a greeting function');
  await prompt.press('Enter');
  await chat.locator('.msg.assistant:not(.streaming) .markdown', { hasText: 'Here is a greeting function' }).waitFor({ timeout: LONG });

  // A server that takes a while to start, as a cold Python start on a busy machine does.
  const wrapper = path.join(wb.profile, 'slow-qwen-lsp.sh');
  writeFileSync(wrapper, `#!/bin/sh\nsleep 8\nexec "${path.join(path.dirname(python()), 'qwen-lsp')}" "$@"\n`);
  chmodSync(wrapper, 0o755);
  const machineFile = path.join(wb.profile, 'data', 'Machine', 'settings.json');
  const before = starts();
  writeFileSync(machineFile, JSON.stringify({ ...JSON.parse(readFileSync(machineFile, 'utf8')), 'qwen.server.path': wrapper }));
  await waitFor(() => starts() > before, 'the server restarted through the wrapper', LONG);

  const resumed = resumesAnswered();
  await wb.command('Developer: Reload Window');
  await wb.page.waitForSelector('.monaco-workbench .statusbar', { timeout: LONG });
  await wb.openQwen();
  const opening = chat.locator('#restoring:not([hidden])');
  await opening.waitFor({ timeout: 30_000 });
  assert.equal(resumesAnswered(), resumed, 'the panel painted before the server answered sessions/resume');
  assert.equal(await chat.locator('#new-chat').isVisible(), true, 'the header is there');
  assert.equal(await chat.locator('#welcome').isHidden(), true, 'no welcome for a chat that is coming back');
  await wb.shot('reload-opening-last-chat');

  await chat.locator('.msg.user', { hasText: 'Write a greeting function' }).waitFor({ timeout: LONG });
  await chat.locator('#restoring').waitFor({ state: 'hidden', timeout: LONG });
  assert.ok(resumesAnswered() > resumed, 'the chat came back through sessions/resume');
  await wb.shot('reload-chat-back');
});

/** Reloads the window and waits for the open chat to be back (`shown` is a message of it). */
async function reloadUntil(shown: string): Promise<void> {
  await wb.command('Developer: Reload Window');
  await wb.page.waitForSelector('.monaco-workbench .statusbar', { timeout: LONG });
  await wb.openQwen();
  await wb.chat().locator('.msg.user', { hasText: shown }).first().waitFor({ timeout: LONG });
}

/** Clicks Retry on the failed turn `failed` and waits for its answer; the prompt `asked` is then shown once and no error is left. */
async function retryAnswers(failed: Locator, asked: string): Promise<void> {
  const chat = wb.chat();
  await failed.locator('.error-actions button', { hasText: 'Retry' }).click();
  await chat.locator('.msg.assistant:not(.streaming) .markdown', { hasText: 'Call it with' }).last().waitFor({ timeout: LONG });
  await chat.locator('#send:not([disabled])').waitFor({ timeout: LONG });
  assert.equal(await chat.locator('.msg.user', { hasText: asked }).count(), 1, `"${asked}" is shown once`);
  assert.equal(await chat.locator('.msg.assistant .error').count(), 0, 'no failed turn is left');
  assert.doesNotMatch((await chat.locator('.msg.assistant').last().textContent())!, /reached the model \d+ times/, 'the model got the prompt once');
}

e2e('a failed turn reopened after a reload or from History: Retry answers it with the prompt shown once; after Restart Server the chat goes on', 12, async () => {
  await wb.openQwen();
  const chat = wb.chat();
  const prompt = chat.locator('#prompt');
  const ask = async (text: string): Promise<void> => {
    await prompt.fill(text);
    await prompt.press('Enter');
    await chat.locator('.msg.assistant .error', { hasText: 'fresh try' }).waitFor({ timeout: LONG });
    await chat.locator('#send:not([disabled])').waitFor({ timeout: LONG });
  };
  const FIRST = 'Answer this, it fails once';
  await ask(FIRST);
  await reloadUntil(FIRST);
  const reopened = chat.locator('.msg.assistant .error', { hasText: 'fresh try' });
  await reopened.waitFor({ timeout: LONG });
  await wb.shot('retry-reopened-after-reload');
  await retryAnswers(reopened, FIRST);
  await wb.shot('retry-answered-after-reload');
  // Reopened once more: the prompt once, with the answer Retry got.
  await reloadUntil(FIRST);
  await chat.locator('.msg.assistant .markdown', { hasText: 'Call it with' }).last().waitFor({ timeout: LONG });
  assert.equal(await chat.locator('.msg.user', { hasText: FIRST }).count(), 1, 'reopened with the prompt once');
  assert.equal(await chat.locator('.msg.assistant .error').count(), 0, 'reopened without the failed turn');

  // From History: resuming asks for a recap, shown after the failed turn; Retry still answers it.
  const SECOND = 'And this one, it fails once';
  await ask(SECOND);
  await chat.locator('#history').click();
  const picker = wb.page.locator('.quick-input-widget');
  await picker.locator('.quick-input-title', { hasText: 'Chat History' }).waitFor({ timeout: LONG });
  await picker.locator('.quick-input-list .monaco-list-row', { hasText: 'current ·' }).first().click();
  await picker.waitFor({ state: 'hidden', timeout: 15_000 });
  await chat.locator('#messages .status-line', { hasText: 'Recap: Asking questions that fail once.' }).waitFor({ timeout: LONG });
  const resumed = chat.locator('.msg.assistant .error', { hasText: 'fresh try' });
  await resumed.waitFor({ timeout: LONG });
  await wb.shot('retry-reopened-from-history');
  await retryAnswers(resumed, SECOND);
  await wb.shot('retry-answered-from-history');

  // Qwen: Restart Server: the chat that was open goes on, on the new server, in the same session.
  const restarted = starts();
  await wb.command('Qwen: Restart Server');
  await waitFor(() => starts() > restarted, 'the server restarted', LONG);
  const THIRD = 'Write the greeting once more after the restart';
  await prompt.fill(THIRD);
  await prompt.press('Enter');
  await chat.locator('.msg.user', { hasText: THIRD }).waitFor({ timeout: LONG });
  await chat.locator('#send:not([disabled])').waitFor({ timeout: LONG });
  const last = chat.locator('.msg.assistant').last();
  assert.equal(await last.locator('.error').count(), 0, `answered after the restart: ${await last.textContent()}`);
  assert.match((await last.textContent())!, /Call it with/);
  assert.doesNotMatch((await chat.locator('#messages').textContent())!, /No session/);
  await wb.shot('retry-after-restart');
  await reloadUntil(THIRD);
  for (const asked of [FIRST, SECOND, THIRD]) assert.equal(await chat.locator('.msg.user', { hasText: asked }).count(), 1, `"${asked}" once in the one session`);
});
