// End to end in a real VS Code: the server's slash commands in the panel (completion after `/`,
// with descriptions; /compress, /remember, /model, /clear and /init doing what they say), `@`
// completing a file whose text the model's request then holds, an image pasted into the composer
// (refused by a text-only model, sent as an image part to one that takes images), and two chats in two editor tabs
// streaming at once. The model is e2e/scripted_commands.py, which logs every request it gets.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

let wb: Workbench;
const log = path.join(tempDir('qwen-e2e-commands-log-'), 'requests.jsonl');

interface Body {
  model: string;
  messages: { role: string; content: unknown }[];
}

function requests(): Body[] {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Body) : [];
}

/** The main request of the turn whose message ends with `text` (recall, extraction and suggestions make requests too). */
function turnRequest(text: string): Body {
  const found = requests().filter((b) => lastUserText(b).trimEnd().endsWith(text));
  assert.ok(found.length, `a request for ${JSON.stringify(text)}`);
  return found[found.length - 1];
}

function lastUserText(body: Body): string {
  const user = body.messages.filter((m) => m.role === 'user').pop();
  const content = user?.content;
  return typeof content === 'string' ? content : ((content ?? []) as { text?: string }[]).map((p) => p.text ?? '').join('\n');
}

before(async () => {
  const ws = tempDir('qwen-e2e-commands-ws-');
  mkdirSync(path.join(ws, 'src', 'api'), { recursive: true });
  writeFileSync(path.join(ws, 'src', 'api', 'users.py'), 'def list_users():\n    return ["USERS-FILE-BODY"]\n');
  writeFileSync(path.join(ws, 'QWEN.md'), '# Old notes\n');
  wb = await Workbench.open({ workspace: ws, modelScript: 'scripted_commands.py', modelArgs: [log, ws] });
});

after(async () => {
  await wb?.close();
});

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  e2eIn(() => wb, name, minutes, fn);
}

/** Sends `text` and waits for its answer: a new finished assistant message (after /clear: an empty chat). */
async function send(text: string): Promise<void> {
  const chat = wb.chat();
  const prompt = chat.locator('#prompt');
  const answers = chat.locator('.msg.assistant:not(.streaming)');
  const before = await answers.count();
  await prompt.fill(text);
  await prompt.press('Escape'); // close a completion list the text opened
  await prompt.press('Enter');
  await waitFor(async () => (text === '/clear' ? (await chat.locator('.msg').count()) === 0 : (await answers.count()) > before), `the answer to ${text}`, LONG);
  await chat.locator('#send:not([disabled])').waitFor({ timeout: LONG });
}

function lastAnswer(): Promise<string> {
  return wb.chat().locator('.msg.assistant:not(.streaming)').last().locator('.markdown').innerText();
}

e2e('typing / offers the commands with their descriptions; Tab completes one', 5, async () => {
  await wb.openQwen();
  const prompt = wb.chat().locator('#prompt');
  await prompt.click();
  await prompt.pressSequentially('/');
  const list = wb.chat().locator('#completions');
  await list.waitFor({ timeout: LONG });
  const compress = list.locator('.completion', { hasText: '/compress' });
  await compress.waitFor({ timeout: LONG });
  assert.match((await compress.textContent())!, /Compresses the context by replacing it with a summary/);
  assert.ok((await list.locator('.completion').count()) >= 15, 'every command is offered');
  await prompt.pressSequentially('comp');
  assert.equal(await list.locator('.completion').count(), 1);
  await prompt.press('Tab');
  assert.equal(await prompt.inputValue(), '/compress ');
  assert.equal(await list.isHidden(), true);
  await wb.shot('slash-completion');
  await prompt.fill('');
});

e2e('/compress, /remember and /model do what they say', 6, async () => {
  await send('hello there');
  await send('hello again');
  await send('/compress');
  assert.match(await lastAnswer(), /^Chat history compressed from \d+ to \d+ tokens\.$/);
  assert.ok(requests().some((b) => lastUserText(b).includes('<state_snapshot>')), 'the model was asked for the summary');

  await send('/remember we deploy on Fridays');
  const remembered = requests().find((b) => lastUserText(b).includes('Please save the following to your memory system'));
  assert.ok(remembered && lastUserText(remembered).includes('we deploy on Fridays'));
  await wb.chat().locator('.tool', { hasText: 'save_memory' }).waitFor({ timeout: LONG });
  const memories = path.join(wb.projectStateDir(), 'memory');
  await waitFor(() => existsSync(memories) && JSON.stringify(readdirSync(memories, { recursive: true })).includes('.md'), 'the memory file', LONG);

  await send('/model other-model');
  assert.equal(await lastAnswer(), 'Model switched to other-model for this session.');
  await send('which model now');
  assert.equal(turnRequest('which model now').model, 'other-model');
  await send('/nosuch');
  await wb.chat().locator('.msg.assistant .error', { hasText: 'Unknown command: /nosuch' }).waitFor({ timeout: LONG });
});

e2e('/clear starts a new chat; the next message carries none of the old one', 4, async () => {
  await send('/clear');
  await waitFor(async () => (await wb.chat().locator('.msg').count()) === 0, 'an empty transcript', LONG);
  await send('fresh start');
  assert.ok(!JSON.stringify(turnRequest('fresh start').messages).includes('hello again'), 'the new chat holds none of the old one');
});

e2e('/init asks before replacing QWEN.md, then the model explores and writes it through the approval', 6, async () => {
  await wb.chat().locator('#prompt').fill('/init');
  await wb.chat().locator('#prompt').press('Escape');
  await wb.chat().locator('#prompt').press('Enter');
  const dialog = wb.page.locator('.monaco-dialog-box');
  await dialog.waitFor({ timeout: LONG });
  assert.match((await dialog.textContent())!, /A QWEN\.md file already exists in this directory\. Do you want to regenerate it\?/);
  await dialog.locator('a.monaco-button, button', { hasText: 'Yes' }).first().click();
  const card = wb.chat().locator('.approval');
  await card.waitFor({ timeout: LONG });
  assert.ok(requests().some((b) => lastUserText(b).includes('write a QWEN.md file')), 'the model got the analysis prompt');
  assert.equal(readFileSync(path.join(wb.workspace, 'QWEN.md'), 'utf8'), '', 'the old file was emptied, as 0.24.4 does before the model writes');
  await wb.page.locator('.tabs-container .tab', { hasText: 'proposed change' }).waitFor({ timeout: LONG });
  await wb.page.waitForTimeout(700); // past the card's arming delay
  await card.locator('button[data-option="allow"]').click();
  await wb.chat().locator('.tool', { hasText: 'QWEN.md' }).locator('.tool-decision', { hasText: 'allowed' }).waitFor({ timeout: LONG });
  await wb.chat().locator('#send:not([disabled])').waitFor({ timeout: LONG });
  await wb.openFile('QWEN.md'); // the write went through the editor (applyEdit): its buffer holds the model's text
  await wb.page.locator('.monaco-editor .view-line', { hasText: 'Written by /init.' }).first().waitFor({ timeout: LONG });
  await wb.shot('init-written');
});

e2e('@ completes a workspace file into a chip, and the model request holds its text', 5, async () => {
  const prompt = wb.chat().locator('#prompt');
  await prompt.click();
  await prompt.fill('');
  await prompt.pressSequentially('explain @users');
  const option = wb.chat().locator('#completions .completion', { hasText: '@src/api/users.py' });
  await option.waitFor({ timeout: LONG });
  await prompt.press('Enter');
  assert.equal(await prompt.inputValue(), 'explain @src/api/users.py ');
  await wb.chat().locator('#attachments .chip', { hasText: 'users.py' }).waitFor({ timeout: LONG });
  await wb.shot('at-completion');
  await prompt.press('Enter');
  await waitFor(() => requests().some((b) => lastUserText(b).includes('explain @src/api/users.py')), 'the request', LONG);
  await wb.chat().locator('#send:not([disabled])').waitFor({ timeout: LONG });
  const sent = JSON.stringify(turnRequest('explain @src/api/users.py').messages.filter((m) => m.role === 'user').pop());
  assert.ok(sent.includes('USERS-FILE-BODY'), 'the file text is in the request');
  assert.equal(sent.split('USERS-FILE-BODY').length - 1, 1, 'read once, though both mentioned and attached');
});

/** Ctrl+V of an image/png in the composer, as Chromium delivers it: a paste event whose clipboard holds the file. */
async function pastePng(bytes: Buffer = PNG): Promise<void> {
  await wb.chat().locator('#prompt').evaluate((el, hex) => {
    const bytes = new Uint8Array(hex.match(/../g)!.map((b) => parseInt(b, 16)));
    const data = new DataTransfer();
    data.items.add(new File([bytes], 'image.png', { type: 'image/png' }));
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, bytes.toString('hex'));
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8cfc0f01f0005000201d5cd6b7e0000000049454e44ae426082', 'hex');

e2e('a pasted image becomes a chip; a text-only model refuses it, an image model gets it as an image part; a non-image is refused', 6, async () => {
  const chips = wb.chat().locator('#attachments .chip', { hasText: /^clipboard-\d+-\d+\.png/ });
  await pastePng();
  await chips.first().waitFor({ timeout: LONG });
  const clipboard = path.join(wb.home, '.qwen', 'tmp', 'clipboard');
  const saved = readdirSync(clipboard);
  assert.equal(saved.length, 1);
  assert.deepEqual(readFileSync(path.join(clipboard, saved[0])), PNG, 'saved in ~/.qwen/tmp/clipboard as pasted');
  assert.equal(await wb.chat().locator('#prompt').inputValue(), '', 'nothing typed');
  await wb.chat().locator('#prompt').fill('what is in this picture');
  await wb.shot('pasted-image-chip');
  const before = requests().length;
  await wb.chat().locator('#prompt').press('Enter');
  await wb.chat().locator('.msg.assistant .error', { hasText: 'does not take images' }).waitFor({ timeout: LONG });
  await wb.shot('pasted-image-refused');
  assert.ok(!requests().slice(before).some((b) => lastUserText(b).includes('what is in this picture')), 'nothing was sent');

  await send('/model qwen3-vl-plus');
  await pastePng();
  await chips.first().waitFor({ timeout: LONG });
  await send('describe the pasted picture');
  const user = turnRequest('describe the pasted picture').messages.filter((m) => m.role === 'user').pop()!;
  const images = (user.content as { type: string; image_url?: { url: string } }[]).filter((p) => p.type === 'image_url');
  assert.deepEqual(images.map((p) => p.image_url!.url), [`data:image/png;base64,${PNG.toString('base64')}`]);
  assert.equal(await chips.count(), 0, 'the chip went with the message');

  await pastePng(Buffer.from('only text, though the clipboard calls it image/png'));
  await wb.page.locator('.notifications-toasts', { hasText: 'The pasted image was not attached' }).filter({ hasText: 'not a PNG, JPEG, GIF or WebP image' }).waitFor({ timeout: LONG });
  assert.equal(await chips.count(), 0, 'no chip for what is not an image');
  assert.equal(readdirSync(clipboard).length, 2, 'nothing more written');
});

e2e('two chats in two editor tabs stream at once, each its own', 6, async () => {
  await wb.page.locator('.tabs-container .tab').first().click(); // the workbench has the focus, not a webview
  await wb.command('Qwen: New Chat in Editor Tab');
  // From the new chat's own tab (its group active, the workbench focused), the next opens beside it.
  const first = wb.page.locator('.tabs-container .tab', { hasText: 'Qwen Chat' });
  await first.waitFor({ timeout: LONG });
  await first.click();
  await wb.command('Qwen: New Chat in Editor Tab');
  await wb.page.locator('.editor-group-container').nth(2).locator('.tab', { hasText: 'Qwen Chat' }).waitFor({ timeout: LONG });
  // The side bar's chat and the two tabs: the tabs are the two right-most webviews.
  const frames = wb.page.locator('iframe.webview.ready');
  await waitFor(async () => (await frames.count()) >= 3, 'three chat webviews', LONG);
  const xs = await frames.evaluateAll((els) => els.map((e) => e.getBoundingClientRect().x));
  const [ia, ib] = xs.map((x, i) => [x, i]).sort((a, b) => a[0] - b[0]).slice(-2).map(([, i]) => i);
  const tabA = wb.page.frameLocator(`iframe.webview.ready >> nth=${ia}`).frameLocator('#active-frame');
  const tabB = wb.page.frameLocator(`iframe.webview.ready >> nth=${ib}`).frameLocator('#active-frame');
  await tabA.locator('#prompt').waitFor({ timeout: LONG });
  await tabB.locator('#prompt').waitFor({ timeout: LONG });
  await tabA.locator('#prompt').fill('stream slowly A');
  await tabA.locator('#prompt').press('Enter');
  await tabB.locator('#prompt').fill('stream slowly B');
  await tabB.locator('#prompt').press('Enter');
  // Both answers are streaming at the same moment, each with its own text.
  await tabA.locator('.msg.assistant.streaming', { hasText: 'A3' }).waitFor({ timeout: LONG });
  await tabB.locator('.msg.assistant.streaming', { hasText: 'B3' }).waitFor({ timeout: LONG });
  await wb.shot('two-chats-streaming');
  await tabA.locator('#send:not([disabled])').waitFor({ timeout: LONG });
  await tabB.locator('#send:not([disabled])').waitFor({ timeout: LONG });
  const a = await tabA.locator('.msg.assistant').last().innerText();
  const b = await tabB.locator('.msg.assistant').last().innerText();
  assert.match(a, /A39/);
  assert.doesNotMatch(a, /B\d/);
  assert.match(b, /B39/);
  assert.doesNotMatch(b, /A\d/);
});
