// The welcome and prompt recall in the chat webview (headless Chromium, the real bundle, CSS and
// CSP), driven as ChatController drives them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { msg, snapshot, useWebview } from './webviewHarness';
import type { SetupState } from '../src/shared/messages';

const web = useWebview();

const FRESH: SetupState = { server: 'running', apiKey: false };

test('welcome: while the chat is empty, each step with its fix; a failed server offers its path; the test message is a send; gone once the chat has messages', async () => {
  const p = await web.open();
  await p.host(snapshot([], { setup: { server: 'failed', serverProblem: { message: 'No python3 found.', missing: true }, apiKey: false } }));
  const welcome = p.page.locator('#welcome');
  assert.equal(await welcome.isVisible(), true);
  const server = welcome.locator('[data-step="server"]');
  assert.match((await server.textContent())!, /not running\. No python3 found\./);
  assert.deepEqual(await server.locator('button').allTextContents(), ['Set server path', 'Restart server', 'Show log']);
  assert.equal(await welcome.locator('button[data-setup="test"]').isDisabled(), true, 'no test message without a server');
  await p.host({ type: 'setup', setup: FRESH });
  assert.match((await welcome.locator('[data-step="model"]').textContent())!, /qwen\.model\.name.*qwen\.model\.baseUrl/);
  await welcome.getByRole('button', { name: 'Set up model' }).click();
  await welcome.locator('button[data-setup="test"]').click();
  const sent = (await p.posted()).filter((m) => m.type !== 'ready');
  assert.deepEqual(sent.map((m) => m.type === 'action' ? m.action : m.type), ['configureModel', 'send']);
  await p.host({ type: 'setup', setup: { ...FRESH, model: 'qwen3-coder-plus', baseUrl: 'https://example.test/v1', apiKey: true } });
  assert.equal(await welcome.locator('.setup-step.done').count(), 3);
  await p.host({ type: 'message', message: msg('user', 'hello') });
  assert.equal(await welcome.isHidden(), true, 'the chat replaces the welcome');
});

test('Up / Down in the empty composer recall sent prompts; a draft keeps its arrows', async () => {
  const p = await web.open();
  await p.host(snapshot([], { setup: FRESH }));
  const prompt = p.page.locator('#prompt');
  for (const text of ['first question', 'second question']) {
    await prompt.fill(text);
    await prompt.press('Enter');
  }
  await prompt.press('ArrowUp');
  assert.equal(await prompt.inputValue(), 'second question');
  await prompt.press('ArrowUp');
  assert.equal(await prompt.inputValue(), 'first question');
  await prompt.press('ArrowUp');
  assert.equal(await prompt.inputValue(), 'first question', 'the oldest stays');
  await prompt.press('ArrowDown');
  assert.equal(await prompt.inputValue(), 'second question');
  await prompt.press('ArrowDown');
  assert.equal(await prompt.inputValue(), '', 'past the newest: empty again');
  await prompt.fill('a draft');
  await prompt.press('ArrowUp');
  assert.equal(await prompt.inputValue(), 'a draft', 'a draft is never replaced');
});
