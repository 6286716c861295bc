// One-step install, end to end: a fresh code-server with no qwen-lsp on PATH, no virtual
// environment on PATH and no qwen.server.path; the packaged .vsix installed, the Qwen panel opened,
// and a chat answered by the scripted model (e2e/scripted_e2e.py) through the server the .vsix
// carries, run by python3 from PATH (e2e/workbench.ts, server: 'bundled').
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

let wb: Workbench;

before(async () => {
  const ws = tempDir('qwen-e2e-bundled-ws-');
  writeFileSync(path.join(ws, 'QWEN.md'), '# Project\n\nAnswer briefly.\n');
  wb = await Workbench.open({ workspace: ws, modelScript: 'scripted_e2e.py', server: 'bundled' });
});

after(async () => {
  await wb?.close();
});

e2eIn(() => wb, 'with no qwen-lsp on PATH and no qwen.server.path, the installed .vsix runs its own server and the panel chats', 6, async () => {
  const machine = JSON.parse(readFileSync(path.join(wb.profile, 'data', 'Machine', 'settings.json'), 'utf8'));
  assert.equal(machine['qwen.server.path'], undefined);
  await wb.openQwen();
  const prompt = wb.chat().locator('#prompt');
  await prompt.fill('Write a greeting function');
  await prompt.press('Enter');
  await wb.chat().locator('.msg.assistant:not(.streaming)').first().waitFor({ timeout: LONG });
  assert.match((await wb.chat().locator('.msg.assistant .markdown').first().textContent())!, /Here is a greeting function/);
  // The extension says which server it started: the launcher inside the installed extension.
  // It runs with -P, in a directory outside the workspace (docs/security.md, "The VS Code extension").
  const started = await waitFor(() => /\[qwen\] starting the server \(bundled\) in (\S+): (\S+) -P (\S+) serve --stdio/.exec(wb.qwenLog()) ?? undefined, 'the log line naming the bundled server');
  assert.ok(!started[1].startsWith(wb.workspace), `the working directory ${started[1]} is outside the workspace`);
  assert.ok(!existsSync(path.join(path.dirname(started[2]), '..', 'pyvenv.cfg')), `${started[2]} is a plain Python, not a virtual environment's`);
  assert.ok(started[3].startsWith(path.join(wb.profile, 'extensions')) && started[3].endsWith(path.join('bundled', 'launch.py')), started[3]);
  await wb.shot('bundled-server-chat');
});
