// The panel against hostile text (headless Chromium, the real bundle): the approval card, the tool
// rows and the code blocks show every hidden character written out (one escaping,
// src/shared/visibleText.ts) and Copy copies what is shown; a shell command's row shows the whole
// command at a 300 px panel; the card shows the command's directory and what "Allow always" covers,
// beside its button; and while a change is not open whole in the diff editor, Allow does nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { msg, snapshot, useWebview } from './webviewHarness';
import type { Panel } from './webviewHarness';
import type { ApprovalRequest, ToolCard } from '../src/shared/messages';
import { approvalRequestFor } from '../src/permission';

const web = useWebview();

/** One of each class the escaping covers: bidi override, Hangul fillers, variation selector, braille blank, CGJ, a control. */
const HIDDEN = ['\u202e', '\u3164', '\u115f', '\ufe0f', '\u2800', '\u034f', '\u200b', '\u2066', '\x1b', '\u00ad', '\u{e0041}'];

const hiddenIn = (text: string) => HIDDEN.filter((ch) => text.includes(ch));

async function armedOrHeld(p: Panel): Promise<void> {
  await p.page.waitForFunction(() => !!document.querySelector('.approval button[data-option="deny"]:not([aria-disabled])'));
}

test('approval card: every class of hidden character in the command, directory and covers is written out', async () => {
  const p = await web.open();
  await p.host(snapshot([msg('user', 'commit it')], { running: true }));
  const command = `git commit -m "x${HIDDEN.join('')}"`;
  const req = approvalRequestFor('perm-h', {
    sessionId: 's',
    turnId: 't',
    toolCallId: 'c',
    tool: 'run_shell_command',
    title: 'Run',
    command,
    directory: '/ws/sub\u202e',
    alwaysCovers: 'Commands starting with: git commit\u3164',
  });
  // What a server that escaped nothing would send reaches the card through the same escaping too.
  const raw: ApprovalRequest = { ...req, title: `Run: ${command}`, detail: `$ ${command}` };
  await p.host({ type: 'approval', approval: raw });
  const text = await p.page.locator('.approval').innerText();
  assert.deepEqual(hiddenIn(text), [], `nothing hidden is shown as itself: ${JSON.stringify(text)}`);
  for (const esc of ['\\u202e', '\\u3164', '\\u115f', '\\ufe0f', '\\u2800', '\\u034f', '\\u200b', '\\u2066', '\\x1b', '\\xad', '\\ue0041']) assert.ok(text.includes(esc), `${esc} in ${text}`);
  assert.equal(await p.page.locator('.approval-directory').innerText(), 'in /ws/sub\\u202e');
  const always = p.page.locator('.approval-always');
  assert.match(await always.innerText(), /Allow always \(this chat\)\s*Covers: Commands starting with: git commit\\u3164/);
  const describedBy = await always.locator('button').getAttribute('aria-describedby');
  assert.equal(await p.page.locator(`#${describedBy}`).innerText(), 'Covers: Commands starting with: git commit\\u3164', 'the button is read with what it covers');
});

test('approval card: without alwaysCovers the card is as before (no covers text)', async () => {
  const p = await web.open();
  const req = approvalRequestFor('perm-n', { sessionId: 's', turnId: 't', toolCallId: 'c', tool: 'run_shell_command', title: 'Run', command: 'make' });
  await p.host({ type: 'approval', approval: req });
  assert.equal(await p.page.locator('.approval-covers').count(), 0);
  assert.deepEqual(await p.page.locator('.approval button[data-option]').allInnerTexts(), ['1 Allow', '2 Allow always (this chat)', '3 Deny']);
});

test('approval card: while held, Allow (click or hotkey) does nothing and the card says why; once released it works', async () => {
  const p = await web.open();
  const held: ApprovalRequest = { id: 'perm-d', title: 'WriteFile big.txt', detail: 'big.txt (+900 −0): too large to show here', hold: 'Allow is available once the whole change is open in the diff editor.', options: [
    { id: 'allow', label: 'Allow', kind: 'allow' },
    { id: 'allowAlways', label: 'Allow always (this chat)', kind: 'allow' },
    { id: 'deny', label: 'Deny', kind: 'reject' },
  ] };
  await p.host({ type: 'approval', approval: held });
  await armedOrHeld(p);
  assert.match(await p.page.locator('.approval-hold').innerText(), /once the whole change is open/);
  assert.equal(await p.page.locator('.approval button[data-option="allow"]').getAttribute('aria-disabled'), 'true');
  await p.page.locator('.approval button[data-option="allow"]').click({ force: true }); // as a user would, past aria-disabled
  await p.page.locator('.approval button[data-option="allow"]').focus();
  await p.page.keyboard.press('1');
  await p.page.keyboard.press('2');
  assert.deepEqual((await p.posted()).filter((m) => m.type === 'approvalReply'), [], 'no Allow while held');
  const { hold: _h, ...released } = held;
  await p.host({ type: 'approval', approval: released });
  await p.page.waitForFunction(() => !document.querySelector('.approval button[data-option="allow"][aria-disabled]'));
  assert.equal(await p.page.locator('.approval-hold').isVisible(), false);
  await p.page.locator('.approval button[data-option="allow"]').click();
  const replies = (await p.posted()).filter((m) => m.type === 'approvalReply');
  assert.deepEqual(replies.map((m) => m.optionId), ['allow']);
});

test('tool rows: a shell command is shown whole and wrapped at a 300 px panel; hidden characters in rows are written out', async () => {
  const p = await web.open();
  await p.page.setViewportSize({ width: 300, height: 640 });
  const command = `npm run build -- --output-path=dist/very/long/output/path/for/the/bundle && git add -A && git commit -m "release ${'\u3164'}"`;
  const shell: ToolCard = { id: 'c1', key: '0', at: 0, name: 'run_shell_command', detail: command, args: JSON.stringify({ command }), output: `done\u202e` };
  const read: ToolCard = { id: 'c2', key: '1', at: 0, name: 'read_file', detail: 'src/a\u200b.py', result: 'Read 3 lines\u2800' };
  await p.host(snapshot([msg('user', 'build'), msg('assistant', 'Building.', { tools: [shell, read] })]));
  const detail = p.page.locator('.tool-shell .tool-detail');
  const box = await detail.boundingBox();
  assert.ok(box && box.width > 150, `the command has a line of its own: ${JSON.stringify(box)}`);
  const clipped = await detail.evaluate((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
  assert.equal(clipped, false, 'nothing of it is cut off');
  assert.ok(box!.height > 30, 'it wraps onto several lines');
  assert.equal(await detail.innerText(), command.replace('\u3164', '\\u3164'));
  await p.page.locator('.tool-shell summary').click();
  assert.deepEqual(hiddenIn(await p.page.locator('.tools').first().innerText()), [], 'no hidden character in the rows, their arguments or output');
  assert.match(await p.page.locator('.tool-shell .tool-output').innerText(), /done\\u202e/);
  assert.match(await p.page.locator('.tool:not(.tool-shell) summary').innerText(), /src\/a\\u200b\.py[\s\S]*Read 3 lines\\u2800/);
  await p.page.screenshot({ path: `${process.cwd()}/test-artifacts/hostile-shell-row-300px.png` }).catch(() => undefined);
});

test('code blocks: a right-to-left override and invisible fillers are written out, marked, and Copy copies what is shown', async () => {
  const p = await web.open();
  const tricky = `rm -rf ./build${'\u202e'}txt.exe # ${'\u3164'}${'\u2800'}`;
  await p.host(snapshot([msg('user', 'how?'), msg('assistant', `Run:\n\n\`\`\`bash\n${tricky}\n\`\`\`\n\nor inline \`echo ${'\u115f'}hi\`.`)]));
  const code = p.page.locator('.code-block code');
  const shown = await code.innerText();
  assert.deepEqual(hiddenIn(shown), []);
  assert.ok(shown.includes('./build\\u202etxt.exe # \\u3164\\u2800'), shown);
  assert.equal(await code.evaluate((el) => el.classList.contains('has-hidden')), true);
  assert.ok((await p.page.locator('p code').innerText()).includes('echo \\u115fhi'));
  await p.page.locator('.code-block button[data-code-action="copy"]').click();
  const copied = (await p.posted()).filter((m) => m.type === 'copy').map((m) => m.text);
  assert.equal(copied.length, 1);
  assert.equal(copied[0].trimEnd(), shown.trimEnd(), 'what is copied is what is shown');
  assert.ok(copied[0].includes('\\u202e') && !copied[0].includes('\u202e'), 'Copy copies the shown text, not a different command');
});
