// The composer's completion list in headless Chromium (the real bundle): `/` offers the server's
// commands with their descriptions, ↓ and Tab pick one; `@` asks the host for files, an older
// answer is dropped, Enter writes `@path ` and asks the host to attach it; Escape closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { snapshot, useWebview } from './webviewHarness';
import type { CommandInfo } from '../src/shared/protocol';
import { atWord, slashMatches } from '../webview/completion';
import { isSlashCommand } from '../src/shared/slash';

const web = useWebview();

const COMMANDS: CommandInfo[] = [
  { name: 'compress', description: 'Compresses the context by replacing it with a summary.', altNames: ['summarize'] },
  { name: 'clear', description: 'Clear conversation history.', altNames: ['reset', 'new'] },
  { name: 'remember', description: 'Save a durable memory.', argumentHint: '<text to remember>' },
];

test('the pure parts: which word an @ completes, which commands a / line matches, what is a command', () => {
  assert.deepEqual(atWord('explain @src/ma', 15), { start: 8, query: 'src/ma' });
  assert.deepEqual(atWord('@x', 2), { start: 0, query: 'x' });
  assert.equal(atWord('mail a@b', 8), undefined); // not after whitespace: an address, not a mention
  assert.equal(atWord('done @x and more', 16), undefined);
  assert.deepEqual(slashMatches('/c', COMMANDS).map((c) => c.name), ['compress', 'clear']);
  assert.deepEqual(slashMatches('/sum', COMMANDS).map((c) => c.name), ['compress']);
  assert.deepEqual(slashMatches('/compress now', COMMANDS), []);
  assert.deepEqual(slashMatches('hello', COMMANDS), []);
  for (const line of ['/compress', '/nosuch', '/model qwen3', '/ x']) assert.equal(isSlashCommand(line), true, line);
  for (const line of ['/usr/lib is missing', '/tmp/x.log: what?', '// note', '/* c */', '/src\\a.c', 'plain']) assert.equal(isSlashCommand(line), false, line);
});

test('/ lists the commands with descriptions; ↓ then Tab fills the picked one', async () => {
  const p = await web.open();
  await p.host([snapshot([]), { type: 'commands', commands: COMMANDS }]);
  const prompt = p.page.locator('#prompt');
  await prompt.click();
  await prompt.pressSequentially('/');
  const rows = p.page.locator('#completions .completion');
  assert.deepEqual(await rows.locator('.completion-label').allTextContents(), ['/compress', '/clear', '/remember <text to remember>']);
  assert.equal(await rows.first().locator('.completion-detail').textContent(), 'Compresses the context by replacing it with a summary.');
  assert.equal(await p.page.locator('#completions').getAttribute('role'), 'listbox');
  await prompt.press('ArrowDown');
  assert.equal(await rows.nth(1).getAttribute('aria-selected'), 'true');
  assert.equal(await prompt.getAttribute('aria-activedescendant'), 'completion-1');
  await prompt.press('Tab');
  assert.equal(await prompt.inputValue(), '/clear ');
  assert.equal(await p.page.locator('#completions').isHidden(), true);
  assert.equal((await p.posted()).some((m) => m.type === 'send'), false, 'picking is not sending');
  await prompt.press('Enter');
  assert.deepEqual((await p.posted()).filter((m) => m.type === 'send'), [{ type: 'send', prompt: '/clear' }]);
  await p.page.context().close();
});

test('@ asks the host for files; a stale answer is dropped; Enter writes @path and attaches it; Escape closes', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  const prompt = p.page.locator('#prompt');
  await prompt.click();
  await prompt.pressSequentially('look at @us');
  const asked = (await p.posted()).filter((m) => m.type === 'completeFiles').map((m) => m.query);
  assert.deepEqual(asked, ['', 'u', 'us']);
  await p.host({ type: 'fileCompletions', query: 'u', items: [{ path: 'stale.py', kind: 'file' }] });
  assert.equal(await p.page.locator('#completions').isHidden(), true, 'an answer to an older query is dropped');
  await p.host({ type: 'fileCompletions', query: 'us', items: [{ path: 'src/api/users.py', kind: 'file' }, { path: 'src/api/', kind: 'folder' }] });
  assert.deepEqual(await p.page.locator('#completions .completion-label').allTextContents(), ['@src/api/users.py', '@src/api/']);
  await prompt.press('Enter');
  assert.equal(await prompt.inputValue(), 'look at @src/api/users.py ');
  assert.deepEqual((await p.posted()).filter((m) => m.type === 'attachPath'), [{ type: 'attachPath', path: 'src/api/users.py' }]);
  assert.equal((await p.posted()).some((m) => m.type === 'send'), false);
  await prompt.pressSequentially('@sr');
  await p.host({ type: 'fileCompletions', query: 'sr', items: [{ path: 'src/', kind: 'folder' }] });
  assert.equal(await p.page.locator('#completions').isHidden(), false);
  await prompt.press('Escape');
  assert.equal(await p.page.locator('#completions').isHidden(), true);
  await p.page.context().close();
});
