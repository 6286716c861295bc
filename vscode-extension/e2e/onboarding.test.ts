// A new user's first hour, end to end in a real VS Code (code-server, a remote window): nothing
// configured (no OPENAI_* variables, no qwen.* settings), the server bundled in the .vsix, and
// the scripted model (e2e/scripted_e2e.py) that the user points the extension at from the panel.
// Every fix is reached from the chat panel; the Settings editor is opened only to check that the
// numeric settings show no error out of the box.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

let wb: Workbench;

before(async () => {
  const ws = tempDir('qwen-e2e-onboarding-');
  writeFileSync(path.join(ws, 'README.md'), '# A project\n');
  wb = await Workbench.open({ workspace: ws, modelScript: 'scripted_e2e.py', server: 'bundled', unconfigured: true });
});

after(async () => {
  await wb?.close();
});

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  e2eIn(() => wb, name, minutes, fn);
}

const PROMPT = 'Write a greeting function';

/** Answers the open input box (the set-up commands ask through VS Code's quick input). */
async function answerInput(title: RegExp, value: string): Promise<void> {
  const widget = wb.page.locator('.quick-input-widget');
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ timeout: 30_000 });
  const input = widget.locator('input');
  await input.fill(value);
  await input.press('Enter');
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ state: 'hidden', timeout: 30_000 });
}

const serverStarts = (): number => (wb.qwenLog().match(/\[qwen\] starting the server/g) ?? []).length;

e2e('a new user with nothing configured reaches a streamed answer from the panel alone: the welcome\'s steps, the model-less error naming qwen.model.* with Set up model and Retry, the same chat after "Set API key" restarts the server, Up recalls the prompt', 8, async () => {
  await wb.openQwen();
  const chat = wb.chat();
  // The welcome: the server (bundled) runs; the model is not set, and says which settings.
  const welcome = chat.locator('#welcome');
  await welcome.locator('.setup-step.done[data-step="server"]').waitFor({ timeout: LONG });
  const model = welcome.locator('.setup-step.todo[data-step="model"]');
  assert.match((await model.textContent())!, /qwen\.model\.name.*qwen\.model\.baseUrl/);
  await welcome.locator('[data-step="model"] button', { hasText: 'Set up model' }).waitFor();
  await wb.shot('onboarding-welcome');
  // No model yet: no context figure in the status bar or the panel (it would be the window of no model).
  await waitFor(() => /Received response 'qwen\/context/.test(wb.qwenLog()), 'the first qwen/context answered', LONG);
  await wb.page.locator('.statusbar-item', { hasText: /Qwen/ }).first().waitFor({ timeout: LONG });
  assert.deepEqual((await wb.page.locator('.statusbar-item').allTextContents()).filter((t) => /% left/.test(t)), [], 'no "% left" before a model is set');
  assert.equal(await chat.locator('#context-figure').isHidden(), true, 'no context figure under the composer');
  await wb.shot('onboarding-no-figure');

  // Sending anyway: the error names the extension's settings and offers the fixes and Retry.
  const prompt = chat.locator('#prompt');
  await prompt.fill(PROMPT);
  await prompt.press('Enter');
  const error = chat.locator('.msg.assistant .error[data-kind="config"]');
  await error.waitFor({ timeout: LONG });
  const text = (await error.locator('.error-text').textContent())!;
  assert.match(text, /qwen\.model\.baseUrl/);
  assert.match(text, /qwen\.model\.name/);
  assert.doesNotMatch(text, /OPENAI_MODEL|model\.apiKey/, 'the server-side keys are not what a VS Code user sets');
  assert.deepEqual(await error.locator('.error-actions button').allTextContents(), ['Set up model', 'Set API key', 'Retry']);
  assert.equal(await welcome.isHidden(), true, 'the welcome makes way for the chat');
  // A failed, model-less turn left nothing to compact.
  await chat.locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
  assert.equal(await chat.locator('#compact').isDisabled(), true, 'Compact is off after a failed turn');

  // "Set up model": base URL, then model name, in VS Code's input box.
  await error.locator('button', { hasText: 'Set up model' }).click();
  await answerInput(/base URL/, wb.baseUrl);
  await answerInput(/model name/, 'scripted-model');
  // "Set API key" restarts the server with the key in its environment.
  const starts = serverStarts();
  await error.locator('button', { hasText: 'Set API key' }).click();
  await answerInput(/API key/, 'e2e-key');
  await waitFor(() => serverStarts() > starts, 'the server restarted with the key', LONG);
  await wb.page.locator('.statusbar-item', { hasText: /Qwen/ }).first().waitFor({ timeout: LONG });

  // Retry in the same chat: the session the failed turn named is gone with the old server, and the message still goes.
  await error.locator('button', { hasText: 'Retry' }).click();
  const answer = chat.locator('.msg.assistant:not(.streaming)').last();
  await chat.locator('.msg.assistant:not(.streaming) .markdown', { hasText: 'Here is a greeting function' }).waitFor({ timeout: LONG });
  assert.equal(await answer.locator('.error').count(), 0, `no error on the retried turn: ${await answer.textContent()}`);
  assert.equal((await answer.locator('pre code').textContent())?.trim(), 'def hello(name):\n    return f"Hello, {name}!"');
  await chat.locator('#compact:not([disabled])').waitFor({ timeout: 30_000 });
  // With a model the figure is there, in the status bar and under the composer.
  await wb.page.locator('.statusbar-item', { hasText: /Qwen \d+% left/ }).first().waitFor({ timeout: LONG });
  await chat.locator('#context-figure:not([hidden])', { hasText: /% left/ }).waitFor({ timeout: LONG });

  // Up in the empty composer brings the prompt back; Down clears it again.
  await chat.locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
  await prompt.click();
  await prompt.press('ArrowUp');
  assert.equal(await prompt.inputValue(), PROMPT);
  await prompt.press('ArrowDown');
  assert.equal(await prompt.inputValue(), '');

  // A saved chat goes on after a restart too: the next message lands in the same session file.
  const restarted = serverStarts();
  await wb.command('Qwen: Restart Server');
  await waitFor(() => serverStarts() > restarted, 'the server restarted', LONG);
  await prompt.fill('Write it once more');
  await prompt.press('Enter');
  await chat.locator('.msg.user', { hasText: 'Write it once more' }).waitFor({ timeout: LONG });
  await chat.locator('#send:not([disabled])').waitFor({ timeout: LONG });
  assert.equal(await chat.locator('.msg.assistant').last().locator('.error').count(), 0, 'the message after the restart is answered');
  const chats = path.join(wb.projectStateDir(), 'chats');
  const files = readdirSync(chats).filter((f) => f.endsWith('.jsonl'));
  assert.equal(files.length, 1, `one chat on disk: ${files.join(', ')}`);
  const recorded = readFileSync(path.join(chats, files[0]), 'utf8');
  assert.ok(recorded.includes(PROMPT) && recorded.includes('Write it once more'), 'both turns are in the one session');

  // A new chat shows the welcome again, every step done, and its test message streams an answer.
  await chat.locator('#new-chat').click();
  await welcome.locator('.setup-step.done[data-step="model"]').waitFor({ timeout: 30_000 });
  await welcome.locator('.setup-step.done[data-step="apiKey"]').waitFor({ timeout: 30_000 });
  // The checklist finishes: the model answered, so the test step is done too and the welcome says so.
  await welcome.locator('.setup-step.done[data-step="test"]').waitFor({ timeout: 30_000 });
  await welcome.locator('.welcome-title', { hasText: 'Qwen is set up' }).waitFor({ timeout: 30_000 });
  assert.equal(await welcome.locator('.setup-step.todo').count(), 0, 'no step left to do');
  await wb.shot('onboarding-welcome-done');
  await welcome.locator('button[data-setup="test"]').click();
  await chat.locator('.msg.assistant:not(.streaming) .markdown', { hasText: 'Here is a greeting function' }).waitFor({ timeout: LONG });
  assert.equal(await wb.page.locator('.tabs-container .tab', { hasText: 'Settings' }).count(), 0, 'Settings was never opened');
  // The base URL went where this remote window reads machine-scoped keys: the Machine settings file.
  const machine = JSON.parse(readFileSync(path.join(wb.profile, 'data', 'Machine', 'settings.json'), 'utf8'));
  assert.equal(machine['qwen.model.baseUrl'], wb.baseUrl);
  await wb.shot('onboarding-answer');
});

e2e('a missing server: the panel offers "Set server path"; once it runs, the "not running" error says so and Retry answers', 6, async () => {
  const chat = wb.chat();
  const machineFile = path.join(wb.profile, 'data', 'Machine', 'settings.json');
  const starts = serverStarts();
  writeFileSync(machineFile, JSON.stringify({ ...JSON.parse(readFileSync(machineFile, 'utf8')), 'qwen.server.path': '/nonexistent/qwen-lsp' }));
  await waitFor(() => /qwen\.server\.path is set to "\/nonexistent\/qwen-lsp"/.test(wb.qwenLog()), 'the start failing on the bad path', LONG);
  assert.equal(serverStarts(), starts, 'no server started from the bad path');
  await chat.locator('#new-chat').click();
  const server = chat.locator('#welcome .setup-step.todo[data-step="server"]');
  await server.waitFor({ timeout: 30_000 });
  assert.match((await server.textContent())!, /not an executable file/);
  await server.locator('button', { hasText: 'Set server path' }).waitFor();
  const prompt = chat.locator('#prompt');
  await prompt.fill('Are you there?');
  await prompt.press('Enter');
  const error = chat.locator('.msg.assistant .error[data-kind="server_down"]');
  await error.waitFor({ timeout: LONG });
  assert.match((await error.textContent())!, /qwen\.server\.path/);
  await wb.shot('onboarding-server-missing');
  // The fix from the panel: an empty path means the server bundled with the extension.
  await error.locator('button', { hasText: 'Set server path' }).click();
  await answerInput(/server path/, '');
  await waitFor(() => serverStarts() > starts, 'the server started again', LONG);
  const back = chat.locator('.msg.assistant .error[data-kind="server_back"]');
  await back.waitFor({ timeout: LONG });
  assert.doesNotMatch((await back.textContent())!, /not running/);
  assert.equal(await chat.locator('.error[data-kind="server_down"]').count(), 0, 'no stale "not running" error');
  await back.locator('button', { hasText: 'Retry' }).click();
  await chat.locator('.msg.assistant:not(.streaming) .markdown', { hasText: 'Here is a greeting function' }).waitFor({ timeout: LONG });
  assert.equal(JSON.parse(readFileSync(machineFile, 'utf8'))['qwen.server.path'], undefined, 'the path was cleared where the window reads it');
});

e2e('Settings out of the box: Context Window, Max Output Tokens and the compression threshold are empty (the model\'s own), with no validation error', 4, async () => {
  await wb.command('Preferences: Open Settings (UI)');
  await wb.page.locator('.settings-editor .search-container').waitFor({ timeout: LONG });
  for (const [key, label] of [['qwen.model.contextWindow', 'Context Window'], ['qwen.model.maxOutputTokens', 'Max Output Tokens'], ['qwen.compression.threshold', 'Threshold']]) {
    await wb.page.locator('.settings-editor .search-container').click();
    await wb.page.keyboard.press('Control+A');
    await wb.page.keyboard.type(key);
    const item = wb.page.locator('.settings-editor .setting-item', { has: wb.page.locator('.setting-item-label', { hasText: label }) }).first();
    await item.waitFor({ timeout: LONG });
    assert.equal(await item.locator('input').first().inputValue(), '', `${key} is empty by default`);
    assert.equal(await item.evaluate((el) => el.classList.contains('invalid-input')), false, `${key} shows no validation error`);
    const validation = item.locator('.setting-item-validation-message');
    assert.equal((await validation.count()) ? ((await validation.first().textContent()) ?? '').trim() : '', '', `${key} shows no error text`);
  }
  await wb.shot('onboarding-settings');
  await wb.page.keyboard.press('Control+W');
});
