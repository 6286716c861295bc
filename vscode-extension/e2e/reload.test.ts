// A window reload with a chat open, end to end in a real VS Code (code-server, e2e/workbench.ts):
// while the server starts again the panel is not blank — the header, the composer and "Opening the
// last chat…" show at once — and then the chat comes back. The server is made slow to start (a
// wrapper named by qwen.server.path waits before it starts the real one), so the panel's first
// paint is seen before the server could have answered. The model is e2e/scripted_e2e.py.
// Screenshots go to e2e/screenshots/*.png.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { python, tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

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
