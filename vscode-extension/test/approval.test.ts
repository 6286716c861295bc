// The approval card in the chat webview (headless Chromium, the real bundle): behaviour 11 of the
// bar (stray typing cannot approve) and its parts of 9 (restored from the snapshot), 10 (no focus
// stealing) and 13 (keyboard-only). The tests post approvals as the host does for the server's
// qwen/permission (src/permission.ts; the host side is tested in permission*.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { msg, snapshot, useWebview } from './webviewHarness';
import type { Panel } from './webviewHarness';
import type { ApprovalRequest } from '../src/shared/messages';
import { approvalRequestFor } from '../src/permission';

const web = useWebview();

/** Longer than the card's arming delay (ARM_MS in webview/approval.ts). */
const ARMED_AFTER_MS = 800;

let n = 0;
function request(): ApprovalRequest {
  return {
    id: `perm${n++}`,
    title: 'Run shell command?',
    detail: 'rm -rf build/',
    options: [
      { id: 'allow', label: 'Allow once', kind: 'allow' },
      { id: 'always', label: 'Always allow', kind: 'allow' },
      { id: 'reject', label: 'Reject', kind: 'reject' },
    ],
  };
}

const replies = async (p: Panel) => (await p.posted()).filter((m) => m.type === 'approvalReply');

/** Waits for the card to be shown (messages arrive as tasks) and then armed. */
async function armed(p: Panel): Promise<void> {
  await p.page.waitForFunction(() => document.querySelector('.approval button') && !document.querySelector('.approval button[aria-disabled]'));
}

async function running(p: Panel): Promise<void> {
  await p.host(snapshot([msg('user', 'clean the build'), msg('assistant', 'I will remove the build folder.', { streaming: true })], { running: true }));
}

test('B11 stray typing cannot approve: digits, Enter and Esc typed in the composer never answer the card; the draft is kept', async () => {
  const p = await web.open();
  await running(p);
  const box = p.page.locator('#prompt');
  await box.click();
  await p.page.keyboard.type('next 1');
  const req = request();
  await p.host({ type: 'approval', approval: req });
  // The user keeps typing, as if they had not noticed the card, then waits past the arming delay.
  await p.page.keyboard.type('2 3');
  await p.page.keyboard.press('Enter');
  await p.page.waitForTimeout(ARMED_AFTER_MS);
  await p.page.keyboard.type(' 1');
  await p.page.keyboard.press('Enter');
  await p.page.keyboard.press('Escape');
  assert.deepEqual(await replies(p), [], 'nothing typed outside the card answered it');
  assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'prompt', 'the card never took focus');
  assert.equal(await box.inputValue(), 'next 12 3 1', 'the draft has every keystroke');
  assert.equal(await p.page.locator('.approval').count(), 1, 'the card is still waiting');
  const order = await p.page.evaluate(() => Array.from(document.querySelector('.footer')!.children).map((el) => el.id || el.className));
  assert.ok(order.indexOf('approvals') < order.indexOf('prompt'), `the card sits above the composer (${order.join(', ')})`);
  await p.page.context().close();
});

test('B11 a click or Enter that lands on Allow as the card appears does nothing; after the arming delay it answers', async () => {
  const p = await web.open();
  await running(p);
  await p.stopClock(); // the page's timers wait for the test: however slow the machine, the presses below come early
  const req = request();
  await p.host({ type: 'approval', approval: req });
  const allow = p.page.getByRole('button', { name: 'Allow once' });
  assert.equal(await allow.getAttribute('aria-disabled'), 'true');
  // A real mouse click (force: Playwright itself would wait for aria-disabled to go) and Enter.
  await allow.click({ force: true });
  await allow.focus();
  await p.page.keyboard.press('Enter');
  await p.page.keyboard.press('1');
  assert.deepEqual(await replies(p), [], 'an early click, Enter or hotkey did not approve');
  assert.equal(await p.page.locator('.approval').count(), 1);
  await p.page.clock.runFor(ARMED_AFTER_MS);
  assert.equal(await allow.getAttribute('aria-disabled'), null, 'armed');
  await allow.click();
  assert.deepEqual(await replies(p), [{ type: 'approvalReply', id: req.id, optionId: 'allow' }]);
  assert.equal(await p.page.locator('.approval').count(), 0, 'answered cards go away');
  await p.page.context().close();
});

test('B11/B13 keyboard: Tab reaches the options; hotkeys work only inside the card; Esc rejects with the typed reason; focus returns to the composer', async () => {
  const p = await web.open();
  await running(p);
  const req = request();
  await p.host({ type: 'approval', approval: req });
  await armed(p);
  const names = await p.page.locator('.approval button').evaluateAll((bs) => bs.map((b) => `${b.tagName}:${b.getAttribute('aria-label')}:${b.getAttribute('aria-keyshortcuts')}`));
  assert.deepEqual(names, ['BUTTON:Allow once:1', 'BUTTON:Always allow:2', 'BUTTON:Reject:3']);
  // Keyboard only: Tab from before the card lands on its first option. (From an enabled header
  // button: focusing the disabled Compact did nothing, and the composer has the caret from the start.)
  await p.page.locator('#history').focus();
  const seen: string[] = [];
  for (let i = 0; i < 8 && !seen.includes('Allow once'); i++) {
    await p.page.keyboard.press('Tab');
    seen.push(await p.page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.id ?? ''));
  }
  assert.ok(seen.includes('Allow once'), `Tab reaches the card (saw ${seen.join(', ')})`);
  // Digits typed into the reason are text, not hotkeys; Esc there rejects and carries the reason.
  await p.page.locator('.approval-reason').focus();
  await p.page.keyboard.type('use 2 steps');
  assert.deepEqual(await replies(p), []);
  await p.page.keyboard.press('Escape');
  assert.deepEqual(await replies(p), [{ type: 'approvalReply', id: req.id, optionId: 'reject', reason: 'use 2 steps' }]);
  assert.ok(!(await p.posted()).some((m) => m.type === 'stop'), 'Esc in the card rejected; it did not stop the answer');
  assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'prompt', 'focus went back to the composer, not to <body>');
  // A second request: with focus on an option, its hotkey answers.
  const req2 = request();
  await p.host({ type: 'approval', approval: req2 });
  await armed(p);
  await p.page.getByRole('button', { name: 'Reject' }).focus();
  await p.page.keyboard.press('2');
  assert.deepEqual((await replies(p)).slice(1), [{ type: 'approvalReply', id: req2.id, optionId: 'always' }]);
  await p.page.context().close();
});

test('B9 a pending approval comes back with the snapshot after hide or reload; clearing it removes the card', async () => {
  const p = await web.open();
  const req = request();
  await p.host(snapshot([msg('user', 'clean the build'), msg('assistant', '', { streaming: true })], { running: true, approval: req }));
  const card = p.page.getByRole('group', { name: 'Approval needed: Run shell command?' });
  assert.equal(await card.locator('.approval-detail').textContent(), 'rm -rf build/');
  await p.reload();
  await p.host(snapshot([msg('user', 'clean the build'), msg('assistant', '', { streaming: true })], { running: true, approval: req }));
  assert.equal(await card.count(), 1, 'the card is back after the reload');
  // Re-sending the same request (a snapshot while the card is up) does not re-arm or re-create it.
  await armed(p);
  await p.host({ type: 'approval', approval: req });
  assert.equal(await p.page.locator('.approval button[aria-disabled]').count(), 0);
  await p.host({ type: 'approval', approval: null });
  assert.equal(await card.count(), 0);
  await p.page.context().close();
});

test('the card shows the command that will run, hidden characters written out, even when the model describes it as something else', async () => {
  const p = await web.open();
  const command = 'git status' + '\n'.repeat(12) + 'touch X # \u202eevil\u200b\r\x1b[2K';
  const req = approvalRequestFor('permHidden', { sessionId: 's', turnId: 't', toolCallId: 'c', tool: 'run_shell_command', title: 'Run: git status', command });
  await running(p);
  await p.host({ type: 'approval', approval: req });
  const title = await p.page.locator('.approval-title').textContent();
  const detail = await p.page.locator('.approval-detail').textContent();
  assert.ok(title!.startsWith('Run: git status⏎') && title!.includes('touch X') && title!.endsWith('[multi-line: 13 lines]'), title!);
  assert.equal(detail!.split('\n').at(-1), 'touch X # \\u202eevil\\u200b\\r\\x1b[2K');
  assert.ok(!/[\u202e\u200b\r\x1b]/.test(title! + detail!));
  await p.page.context().close();
});
