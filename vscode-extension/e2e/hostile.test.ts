// A hostile repository and a hostile model, end to end in a real VS Code (code-server,
// e2e/workbench.ts) with workspace trust on and qwen.server.path naming a Python: the folder
// plants its own qwen_lsp/__main__.py, yaml.py, pydantic.py… (each would write a marker file).
// In Restricted Mode no server starts and the panel says so; trusted, the real server starts
// (`python -P -m qwen_lsp`, outside the folder) and none of the planted files runs. Then the model
// (e2e/scripted_hostile.py) asks to run a command with an invisible filler (the card writes it
// out, with its directory and what "Allow always" covers; the row shows the command), offers
// links out of the workspace (none opens; the one inside does) and a code block with a
// right-to-left override (written out), and writes a 6,000-line file (the card says it is too
// large to show, Allow waits for the diff editor, whose last line is the file's last line).
// Screenshots go to e2e/screenshots/hostile-*.png.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

let wb: Workbench;
let ws: string;
let markers: string;

before(async () => {
  ws = realpathSync(tempDir('qwen-e2e-hostile-'));
  markers = tempDir('qwen-e2e-hostile-markers-');
  for (const rel of ['qwen_lsp/__init__.py', 'qwen_lsp/__main__.py', 'yaml.py', 'pydantic.py', 'httpx.py', 'pygls/__init__.py']) {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), `open(${JSON.stringify(path.join(markers, rel.replace(/\W/g, '_')))}, "w").write("ran")\n`);
  }
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  writeFileSync(path.join(ws, 'src', 'notes.py'), '# notes\nVALUE = 1\n');
  const outside = tempDir('qwen-e2e-outside-');
  writeFileSync(path.join(outside, 'secret.txt'), 'not for the model\n');
  symlinkSync(outside, path.join(ws, 'link-out'));
  wb = await Workbench.open({
    workspace: ws,
    modelScript: 'scripted_hostile.py',
    modelArgs: [ws],
    trust: true,
    serverPath: 'python',
    userSettings: { 'qwen.memory.autoExtract': false, 'qwen.memory.autoDream': false, 'qwen.ui.enableFollowupSuggestions': false },
  });
});

after(async () => {
  await wb?.close();
});

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  e2eIn(() => wb, name, minutes, fn);
}

async function send(text: string): Promise<void> {
  const prompt = wb.chat().locator('#prompt');
  await prompt.click();
  await prompt.fill(text);
  await prompt.press('Enter');
  await wb.chat().locator('.msg.user', { hasText: text }).waitFor({ timeout: LONG });
}

const ran = () => readdirSync(markers);

e2e('Restricted Mode: no server starts, nothing of the folder runs, and the panel says so with "Trust this folder…"', 5, async () => {
  await wb.openQwen();
  const server = wb.chat().locator('[data-step="server"]');
  await server.filter({ hasText: 'Restricted Mode' }).waitFor({ timeout: LONG });
  assert.match(await server.innerText(), /starts no server/);
  await wb.chat().locator('[data-step="server"] button', { hasText: 'Trust this folder…' }).waitFor();
  await wb.shot('hostile-restricted-mode');
  assert.deepEqual(ran(), [], 'no planted file ran');
  const log = wb.qwenLog();
  assert.match(log, /Restricted Mode/);
  assert.doesNotMatch(log, /starting the server/, 'no server, no probe');
});

e2e('trusted: the real server starts as python -P -m qwen_lsp outside the folder; none of the planted files runs', 5, async () => {
  await wb.chat().locator('[data-step="server"] button', { hasText: 'Trust this folder…' }).click();
  const trust = wb.page.getByRole('button', { name: 'Trust', exact: true });
  await trust.first().waitFor({ timeout: LONG });
  await trust.first().click();
  // The trust editor opens as a modal editor over the workbench, which holds back the workbench's
  // own keys (F1 too) while it has focus: closed by a click beside it, as a user would.
  const modal = wb.page.locator('.monaco-modal-editor-block');
  for (let tries = 0; (await modal.count()) > 0; tries++) {
    assert.ok(tries < 5, 'the trust editor closes on a click beside it');
    await modal.click({ position: { x: 4, y: 4 } }).catch(() => undefined);
    await modal.waitFor({ state: 'detached', timeout: 3_000 }).catch(() => undefined);
  }
  await wb.chat().locator('[data-step="server"]', { hasText: 'Server: running.' }).waitFor({ timeout: LONG });
  const started = /starting the server \(setting\) in (.+?): (\S+) (.+)/.exec(wb.qwenLog());
  assert.ok(started, wb.qwenLog().slice(-2000));
  assert.ok(!started[1].startsWith(ws), `the working directory ${started[1]} is outside the workspace ${ws}`);
  assert.match(started[3], /^-P -m qwen_lsp serve --stdio/);
  await wb.shot('hostile-trusted-server-running');
  assert.deepEqual(ran(), [], 'no planted file ran');
});

e2e('shell command: the card writes out the filler, shows the directory and what Allow always covers; the row shows the command', 6, async () => {
  await send('commit the release');
  const card = wb.chat().locator('.approval');
  await card.waitFor({ timeout: LONG });
  const text = await card.innerText();
  assert.ok(text.includes('\\u3164release') && !text.includes('\u3164'), text);
  assert.match(await card.locator('.approval-directory').innerText(), new RegExp(`^in ${ws.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  const covers = card.locator('.approval-covers');
  await covers.waitFor();
  assert.match(await covers.innerText(), /^Covers: .*git commit/);
  const row = wb.chat().locator('.tool-shell .tool-detail');
  await row.waitFor();
  assert.match(await row.innerText(), /npm run build -- --output-path=dist\/very\/long\/output\/path\/for\/the\/bundle$/, 'the whole command, not cut');
  const width = (await wb.page.locator('iframe.webview.ready').first().boundingBox())?.width ?? 0;
  assert.equal(await row.evaluate((el) => el.scrollWidth <= el.clientWidth + 1), true, `wrapped within the panel (${Math.round(width)} px)`);
  await wb.shot('hostile-shell-card-and-row');
  await card.locator('button[data-option="deny"]').click();
  await wb.chat().locator('.tool-shell .decision-deny').waitFor({ timeout: LONG }); // a plain no ends the turn, as in Qwen Code 0.24.4
  assert.deepEqual(ran(), []);
});

e2e('links: .. segments, encoded dots and a symlink out of the workspace open nothing; a file inside opens; a code block writes out a right-to-left override', 6, async () => {
  await send('show the links');
  const answer = wb.chat().locator('.msg.assistant', { hasText: 'Run:' });
  await answer.waitFor({ timeout: LONG });
  // Each read_file row links the path the model gave: three lead out of the workspace, the fourth in.
  const rows = answer.locator('.tool');
  await waitFor(async () => (await rows.count()) === 4, 'four read_file rows', 30_000);
  const refusedBefore = (wb.qwenLog().match(/not opened: file:/g) ?? []).length;
  for (let i = 0; i < 4; i++) await rows.nth(i).locator('summary').click();
  for (let i = 0; i < 3; i++) await rows.nth(i).locator('a.tool-file').click();
  await waitFor(() => (wb.qwenLog().match(/not opened: file:/g) ?? []).length >= refusedBefore + 3, 'the host refusing the three links', 30_000);
  await rows.nth(3).locator('a.tool-file').click();
  await wb.page.locator('.tab.active', { hasText: 'notes.py' }).waitFor({ timeout: LONG });
  const tabs = await wb.page.locator('.tab').allInnerTexts();
  assert.ok(!tabs.some((t) => /passwd|secret/.test(t)), `no tab out of the workspace: ${tabs}`);
  const code = await answer.locator('.code-block code').innerText();
  assert.ok(code.includes('./build\\u202etxt.exe # \\u3164') && !code.includes('\u202e'), code);
  await answer.locator('.code-block').scrollIntoViewIfNeeded();
  await wb.shot('hostile-links-and-code');
});

e2e('a write over the old diff cut: the card says it is too large, Allow waits for the diff editor, which has the last line', 8, async () => {
  await send('write the big file');
  const card = wb.chat().locator('.approval');
  await card.waitFor({ timeout: LONG });
  assert.match(await card.locator('.approval-detail').innerText(), /big\.txt \(\+6000 −0\): too large to show here; it opens whole in the diff editor/);
  await wb.page.locator('.tab', { hasText: 'big.txt: proposed change' }).waitFor({ timeout: LONG });
  await card.locator('button[data-option="allow"]:not([aria-disabled])').waitFor({ timeout: LONG });
  // The diff editor's proposed side, at its end: the file's last line is there.
  const diff = wb.page.locator('.monaco-diff-editor').first();
  await diff.locator('.modified-in-monaco-diff-editor .view-line').first().click();
  await wb.page.keyboard.press('Control+End');
  await diff.locator('.modified-in-monaco-diff-editor .view-line', { hasText: 'LAST LINE 6000' }).waitFor({ timeout: 30_000 });
  await wb.shot('hostile-big-change-whole-in-diff-editor');
  await card.locator('button[data-option="allow"]').click();
  await wb.chat().locator('.tool', { hasText: 'big.txt' }).locator('.tool-decision', { hasText: 'allowed' }).waitFor({ timeout: LONG });
});
