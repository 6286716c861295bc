// End to end in a real VS Code (code-server): the packaged .vsix installed into a fresh profile,
// the real qwen-lsp server found on PATH, the scripted OpenAI server behind it, driven through
// the workbench in Debian's Chromium. Screenshots go to e2e/screenshots/*.png (kept in the
// repository to look at); on failure, a screenshot and the extension's log go to test-artifacts/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { EXT_ROOT, REPO_ROOT, python, startEditingModel, tempDir, waitFor } from '../test/support';
import type { Scripted } from '../test/support';
import { ARTIFACTS, launch } from '../test/webviewHarness';

const CODE_SERVER_TOOLS = process.env.CODE_SERVER_TOOLS ?? path.resolve(REPO_ROOT, '..', 'shared', 'tools', 'code-server');
const VSIX = path.join(EXT_ROOT, 'qwen-lsp.vsix');
const LONG = 120_000;
const SHOTS = path.join(EXT_ROOT, 'e2e', 'screenshots');

let scripted: ChildProcess;
let editing: Scripted | undefined;
let browser: Browser;
let page: Page;
let profile: string;
let workspace: string;
/** The test's own HOME: the server's ~/.qwen (memories, sessions) lives under it. */
let home: string;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function makeWorkspace(): string {
  const ws = tempDir('qwen-e2e-ws-');
  mkdirSync(path.join(ws, '.qwen', 'skills', 'api-helper'), { recursive: true });
  writeFileSync(path.join(ws, '.qwen', 'skills', 'api-helper', 'SKILL.md'), '---\nname: api-helper\ndescription: Helps with API handlers\npaths: ["src/api/**"]\n---\nFollow the API conventions.\n');
  mkdirSync(path.join(ws, 'src', 'api'), { recursive: true });
  writeFileSync(path.join(ws, 'src', 'api', 'users.py'), 'def list_users():\n    return []\n');
  writeFileSync(path.join(ws, 'QWEN.md'), '# Project\n\nAnswer briefly.\n');
  return ws;
}

function chat(): FrameLocator {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

async function command(title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 15_000 });
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: title }).first();
  await row.waitFor({ timeout: 15_000 });
  await row.click();
}

/** Picks a colour theme the way a user does (Ctrl+K Ctrl+T); `label` as the picker shows it. */
async function setTheme(label: 'Light Modern' | 'Dark Modern'): Promise<void> {
  await page.keyboard.press('Control+K');
  await page.keyboard.press('Control+T');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 15_000 });
  await input.fill(label);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: new RegExp(`^${label}`) }).first();
  await row.waitFor({ timeout: 15_000 });
  await row.click();
  await page.waitForFunction((light) => document.querySelector('.monaco-workbench')?.classList.contains(light ? 'vs' : 'vs-dark'), label.startsWith('Light'), {
    timeout: 20_000,
  });
  await page.waitForTimeout(500);
}

/** The Qwen output channel's log (every exthost of the session, so also after a reload). */
function qwenLog(): string {
  return execFileSync('bash', ['-c', `cat "${profile}"/data/logs/*/exthost*/qwen-lsp.qwen-lsp/*.log 2>/dev/null || true`], { encoding: 'utf8' });
}

before(async () => {
  assert.ok(existsSync(VSIX), `build the .vsix first (npm run package): ${VSIX} is missing`);
  assert.ok(
    existsSync(path.join(CODE_SERVER_TOOLS, 'install.sh')),
    `code-server's install.sh and start.sh are not in ${CODE_SERVER_TOOLS}: set CODE_SERVER_TOOLS to the folder that has them (default: ../shared/tools/code-server beside the repository)`,
  );
  mkdirSync(ARTIFACTS, { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
  workspace = makeWorkspace();
  profile = tempDir('qwen-e2e-profile-');
  home = tempDir('qwen-e2e-home-');
  scripted = spawn(python(), [path.join(EXT_ROOT, 'e2e', 'scripted_e2e.py')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const baseUrl = await new Promise<string>((resolve) => createInterface({ input: scripted.stdout! }).once('line', resolve));
  // code-server is installed once per machine under the real HOME; the test's own HOME (so the
  // server's ~/.qwen starts empty) links to that install instead of installing it again.
  const installed = execFileSync('bash', [path.join(CODE_SERVER_TOOLS, 'install.sh')], { encoding: 'utf8', timeout: 900_000 }).trim().split('\n').pop()!;
  mkdirSync(path.join(home, '.cache'), { recursive: true });
  symlinkSync(installed, path.join(home, '.cache', 'qwen-lsp-code-server'));
  const port = await freePort();
  const env = { ...process.env, HOME: home, OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'e2e-key', OPENAI_MODEL: 'scripted-model' };
  // The venv is not on PATH, so the server comes from qwen.server.path (the setting under test).
  // It is machine-scoped, and a remote window such as code-server's ignores machine-scoped keys
  // in User settings and reads them from the Machine settings file: written there, before start.
  // qwen.trace.server makes vscode-languageclient log each response, so the test can see -32800.
  const exe = path.join(path.dirname(python()), 'qwen-lsp');
  mkdirSync(path.join(profile, 'data', 'Machine'), { recursive: true });
  writeFileSync(
    path.join(profile, 'data', 'Machine', 'settings.json'),
    JSON.stringify({ 'qwen.server.path': existsSync(exe) ? exe : python(), 'qwen.model.baseUrl': baseUrl, 'qwen.trace.server': 'messages' }),
  );
  const url = execFileSync('bash', [path.join(CODE_SERVER_TOOLS, 'start.sh'), workspace, String(port), profile, VSIX], { env, encoding: 'utf8', timeout: 600_000 })
    .trim()
    .split('\n')
    .pop()!;
  // VS Code's own chat would open in the secondary side bar and take half the screen.
  const settingsFile = path.join(profile, 'data', 'User', 'settings.json');
  const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
  Object.assign(settings, { 'workbench.colorTheme': 'Default Dark Modern', 'chat.disableAIFeatures': true, 'workbench.secondarySideBar.defaultVisibility': 'hidden' });
  writeFileSync(settingsFile, JSON.stringify(settings));
  browser = await launch();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('.monaco-workbench .statusbar', { timeout: LONG });
});

/** On failure: a screenshot and the extension's log, so a CI failure can be read. */
async function diagnose(name: string): Promise<void> {
  await page?.screenshot({ path: path.join(ARTIFACTS, `e2e-failed-${name}.png`) }).catch(() => undefined);
  try {
    console.error(qwenLog().split('\n').slice(-40).join('\n'));
    console.error(readFileSync(path.join(profile, 'code-server.log'), 'utf8').split('\n').slice(-20).join('\n'));
  } catch {
    // no log yet
  }
}

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  test(name, { timeout: minutes * 60_000 }, async () => {
    try {
      await fn();
    } catch (err) {
      await diagnose(name.split(' ').slice(0, 3).join('-').replace(/[^\w-]/g, ''));
      throw err;
    }
  });
}

after(async () => {
  await browser?.close();
  scripted?.kill();
  editing?.stop();
  const pidFile = profile && path.join(profile, 'pid');
  if (pidFile && existsSync(pidFile)) {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8').trim()));
    } catch {
      // already gone
    }
  }
});

e2e('the Qwen view streams a Markdown answer with a code block; the status bar shows the context meter (light and dark)', 6, async () => {
  await page.locator('.statusbar-item', { hasText: 'Qwen' }).first().waitFor({ timeout: LONG }); // the extension is active
  await page.locator('.activitybar .action-item a[aria-label="Qwen"]').click();
  const prompt = chat().locator('#prompt');
  await prompt.waitFor({ timeout: LONG });
  await prompt.fill('Write a greeting function');
  await prompt.press('Enter');
  const code = chat().locator('.msg.assistant .markdown pre code');
  await code.waitFor({ timeout: LONG });
  await chat().locator('.msg.assistant:not(.streaming)').first().waitFor({ timeout: LONG });
  assert.equal((await code.textContent())?.trim(), 'def hello(name):\n    return f"Hello, {name}!"');
  assert.match((await chat().locator('.msg.assistant .markdown').first().textContent())!, /Here is a greeting function/);
  assert.equal(await chat().locator('.msg.assistant .markdown strong').first().textContent(), 'greeting');
  const meter = page.locator('.statusbar-item').filter({ hasText: /Qwen \d+% left/ });
  await meter.waitFor({ timeout: LONG });
  await setTheme('Dark Modern');
  await shot('answer-dark');
  await setTheme('Light Modern');
  await shot('answer-light');
});

e2e('Stop on a slow answer cancels the request and keeps the partial answer', 4, async () => {
  const prompt = chat().locator('#prompt');
  await prompt.fill('Explain every step, slow please');
  await prompt.press('Enter');
  const answer = chat().locator('.msg.assistant').last();
  await answer.locator('.markdown', { hasText: 'step5' }).waitFor({ timeout: LONG });
  await chat().locator('#stop').click();
  await answer.locator('.badge', { hasText: 'Interrupted' }).waitFor({ timeout: 30_000 });
  await chat().locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
  const text = (await answer.locator('.markdown').textContent())!;
  assert.match(text, /^step0 step1 step2/);
  assert.doesNotMatch(text, /step599/, 'the answer was cut short');
  // vscode-languageclient's trace (qwen.trace.server) logs the server's answer to the cancelled request.
  await waitFor(() => /Received response 'qwen\/chat - \(\d+\)'.*Request failed: .*\(-32800\)/.test(qwenLog()), 'the server answering -32800 to the cancelled qwen/chat');
  await shot('stopped-light');
  await setTheme('Dark Modern');
  await shot('stopped-dark');
});

e2e('opening a file under a conditional skill\'s paths: shows the activation notice naming the file', 4, async () => {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 15_000 });
  await input.fill('users.py');
  await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
  const notice = chat().locator('.notice', { hasText: 'api-helper' });
  await notice.waitFor({ timeout: LONG });
  assert.match((await notice.textContent())!, /Activated api-helper — triggered by src\/api\/users\.py/);
  await shot('skill-notice-dark');
  await setTheme('Light Modern');
  await shot('skill-notice-light');
});

e2e('after a window reload the transcript comes back from the server', 4, async () => {
  await command('Developer: Reload Window');
  await page.waitForSelector('.monaco-workbench .statusbar', { timeout: LONG });
  const first = chat().locator('.msg.user').first();
  await first.waitFor({ timeout: LONG });
  assert.equal((await first.textContent())?.replace(/^You/, '').trim(), 'Write a greeting function');
  await chat().locator('.msg.assistant .markdown pre code').first().waitFor({ timeout: LONG });
  await shot('after-reload');
});

/** ~/.qwen/projects/<sanitizeCwd(workspace)>: where the server keeps this project's memory and chats. */
function projectStateDir(): string {
  return path.join(home, '.qwen', 'projects', realpathSync(workspace).replace(/[^A-Za-z0-9]/g, '-'));
}

const CONVENTION = 'Tests here never mock the database';

e2e('"Remember this convention" on a selected line saves a project memory, listed in the Memory view (light and dark)', 4, async () => {
  mkdirSync(path.join(workspace, 'docs'), { recursive: true });
  writeFileSync(path.join(workspace, 'docs', 'testing.md'), `# Testing\n\n${CONVENTION}\n\nRun them with pytest.\n`);
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 15_000 });
  await input.fill('testing.md');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'testing.md' }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
  await page.locator('.tab.active', { hasText: 'testing.md' }).waitFor({ timeout: 15_000 });
  await page.locator('.monaco-editor .view-line', { hasText: CONVENTION }).waitFor({ timeout: 15_000 });
  // Select line 3 the way a user does: go to the line, then Shift+End.
  await page.keyboard.press('Control+G');
  await input.waitFor({ timeout: 15_000 });
  await input.fill(':3');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+End');
  await page.locator('.monaco-editor .selected-text').first().waitFor({ timeout: 15_000 });
  await command('Qwen: Remember this convention');
  const slug = 'tests-here-never-mock-the-database.md';
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Remembered as a project memory' });
  await toast.waitFor({ timeout: LONG });
  assert.match((await toast.textContent())!, new RegExp(`Remembered as a project memory in ~/\\.qwen/projects/[^/]+/memory/feedback/${slug.replace(/\./g, '\\.')}`));
  // qwen/memoryChanged: the chat's notice names the saved file (the MEMORY.md index is left out).
  const notice = chat().locator('.notice', { hasText: 'Memory updated' });
  await notice.waitFor({ timeout: LONG });
  assert.match((await notice.textContent())!, new RegExp(`Memory updated \\(project\\): saved ${slug.replace(/\./g, '\\.')}`));
  // The file on disk, in Qwen Code's format, under the scratch HOME's project memory.
  const file = path.join(projectStateDir(), 'memory', 'feedback', slug);
  assert.ok(existsSync(file), `no memory file at ${file}`);
  const saved = readFileSync(file, 'utf8');
  assert.match(saved, new RegExp(`^---\\nname: ${CONVENTION}\\ndescription: ${CONVENTION}\\ntype: feedback\\n---\\n\\n${CONVENTION}\\n$`));
  // The Memory view (collapsed in the Qwen container until opened): Project → the memory by name.
  const header = page.locator('.pane-header', { hasText: 'Memory' });
  await header.click();
  const tree = page.locator('.pane', { has: header }).locator('.pane-body');
  const group = tree.locator('.monaco-list-row', { hasText: 'Project' }).first();
  await group.waitFor({ timeout: LONG });
  assert.equal(await group.getAttribute('aria-expanded'), 'true');
  const row = tree.locator('.monaco-list-row', { hasText: CONVENTION }).first();
  await row.waitFor({ timeout: LONG });
  assert.equal(await row.getAttribute('aria-level'), '2', 'the memory is listed under its scope');
  await page.keyboard.press('Escape'); // the toast stays in the shot only while it is fresh
  await setTheme('Light Modern');
  await shot('memory-view-light');
  await setTheme('Dark Modern');
  await shot('memory-view-dark');
});

e2e('"Compact" in the panel summarizes the model\'s copy of the chat; the transcript stays and says how much smaller', 4, async () => {
  const compact = chat().locator('#compact');
  await compact.waitFor({ timeout: LONG });
  await chat().locator('#compact:not([disabled])').waitFor({ timeout: LONG }); // the resumed chat has a session
  const before = await chat().locator('.msg.user').count();
  assert.ok(before >= 2, 'the earlier turns are in the panel');
  await compact.click();
  const line = chat().locator('.status-line:not(.pending)', { hasText: /Compact/ }).last();
  await line.waitFor({ timeout: LONG });
  const text = (await line.textContent())!;
  const m = /Compacted: ([\d,]+) → ([\d,]+) tokens\. Your conversation stays in this panel/.exec(text);
  assert.ok(m, `not a successful compaction: ${text}`);
  const [from, to] = [Number(m[1].replace(/,/g, '')), Number(m[2].replace(/,/g, ''))];
  assert.ok(to < from, `the history did not get smaller: ${from} → ${to}`);
  assert.equal(await chat().locator('.msg.user').count(), before, 'the transcript the person reads is kept');
  await chat().locator('#compact:not([disabled])', { hasText: 'Compact' }).waitFor({ timeout: 30_000 });
  // The session file records the model's summary (its <analysis> draft stripped).
  const chats = path.join(projectStateDir(), 'chats');
  const recorded = readdirSync(chats).filter((f) => f.endsWith('.jsonl')).map((f) => readFileSync(path.join(chats, f), 'utf8')).join('\n');
  assert.match(recorded, /summarized by the e2e model/);
  assert.doesNotMatch(recorded, /then for a slow explanation they stopped/, 'the <analysis> draft is not kept');
  await shot('compacted-dark');
});

e2e('an edit asks first: the permission card and the proposed change in the diff editor; Allow applies it, closing the diff denies', 5, async () => {
  const target = path.join(workspace, 'src', 'api', 'users.py');
  editing = await startEditingModel(target, [
    { when: 'Rename', old: 'def list_users', new: 'def all_users' },
    { old: 'return []', new: "return ['ada']" },
  ]);
  // The chat moves to a model that edits, through the setting a user would change (machine-scoped, so the Machine file).
  const machine = path.join(profile, 'data', 'Machine', 'settings.json');
  const sent = () => (qwenLog().match(/Sending notification 'workspace\/didChangeConfiguration'/g) ?? []).length;
  const before = sent();
  writeFileSync(machine, JSON.stringify({ ...JSON.parse(readFileSync(machine, 'utf8')), 'qwen.model.baseUrl': editing.baseUrl }));
  await waitFor(() => sent() > before, 'the new model URL sent to the server', LONG);
  // users.py (opened by the skill step) in front, so the edit lands in its buffer; then back to the composer.
  await page.locator('.tabs-container .tab', { hasText: 'users.py' }).first().click();
  await page.locator('.tabs-container .tab.active', { hasText: 'users.py' }).waitFor({ timeout: LONG });
  const prompt = chat().locator('#prompt');
  await prompt.click();
  await prompt.fill('Make list_users return ada');
  await prompt.press('Enter');
  const card = chat().locator('.approval');
  await card.waitFor({ timeout: LONG });
  assert.match((await card.textContent())!, /Edit src\/api\/users\.py.*\(\+1 −1\), shown in the diff editor/);
  const diff = page.locator('.monaco-diff-editor').first();
  await diff.waitFor({ timeout: LONG });
  await page.locator('.tabs-container .tab', { hasText: 'users.py: proposed change (Qwen)' }).waitFor({ timeout: LONG });
  await diff.locator('.modified-in-monaco-diff-editor .view-line', { hasText: "return ['ada']" }).waitFor({ timeout: LONG });
  assert.equal(await chat().locator('#prompt').evaluate((el) => el === document.activeElement), true, 'the composer kept focus');
  await page.waitForTimeout(700); // past the card's arming delay
  await shot('permission-card-diff');
  await card.locator('button[data-option="allow"]').click();
  await chat().locator('.tool', { hasText: 'src/api/users.py' }).locator('.tool-decision', { hasText: 'allowed' }).waitFor({ timeout: LONG });
  await page.locator('.tabs-container .tab', { hasText: 'proposed change' }).waitFor({ state: 'detached', timeout: 20_000 });
  assert.equal(await chat().locator('.approval').count(), 0, 'the card is gone');
  // applyEdit went to the open buffer (users.py was opened by the skill step): changed, not saved.
  await page.locator('.monaco-editor .view-line', { hasText: "return ['ada']" }).first().waitFor({ timeout: LONG });
  assert.equal(readFileSync(target, 'utf8'), 'def list_users():\n    return []\n', 'nothing written behind the editor');
  await prompt.fill('Rename it to all_users');
  await prompt.press('Enter');
  await card.waitFor({ timeout: LONG });
  await page.locator('.tabs-container .tab', { hasText: 'proposed change' }).waitFor({ timeout: LONG });
  await command('View: Close Editor'); // the diff tab is the active editor: closing it is a Deny
  await chat().locator('.tool-decision.decision-deny').waitFor({ timeout: LONG });
  assert.equal(await chat().locator('.approval').count(), 0, 'the card went with the diff');
  await chat().locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
  await shot('permission-denied');
});
