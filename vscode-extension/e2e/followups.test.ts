// Follow-ups end to end in a real VS Code (code-server, e2e/workbench.ts): suggestions with
// speculation, and a proposed skill after a busy session, from the real server through the panel.
// The model is e2e/scripted_followups.py; the approval mode is auto-edit (a VS Code setting: a
// project's .qwen/settings.json may not loosen approvals), so the server speculates. Memory
// extraction and consolidation are off, so every model request is one this file scripted.
// Screenshots go to e2e/screenshots/*.png.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

const ORIGINAL = 'def list_users():\n    return []\n';
const ACCEPTED = "def list_users():\n    return ['ada']\n";

let wb: Workbench;
let users: string;

before(async () => {
  const ws = tempDir('qwen-e2e-followups-');
  mkdirSync(path.join(ws, 'src', 'api'), { recursive: true });
  users = path.join(ws, 'src', 'api', 'users.py');
  writeFileSync(users, ORIGINAL);
  wb = await Workbench.open({
    workspace: ws,
    modelScript: 'scripted_followups.py',
    modelArgs: [ws],
    // Follow-ups and skill review are the user's to switch on: a project's own settings may only switch them off.
    userSettings: {
      'qwen.tools.approvalMode': 'auto-edit',
      'qwen.ui.enableSpeculation': true,
      'qwen.ui.enableFollowupSuggestions': true,
      'qwen.memory.enableAutoSkill': true,
      'qwen.memory.autoExtract': false,
      'qwen.memory.autoDream': false,
    },
  });
});

after(async () => {
  await wb?.close();
});

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  e2eIn(() => wb, name, minutes, fn);
}

/** The speculation overlays under ~/.qwen/projects/<project>/tmp/speculation (one folder per suggestion). */
function overlays(): string[] {
  const root = path.join(wb.projectStateDir(), 'tmp', 'speculation');
  return existsSync(root) ? readdirSync(root) : [];
}

/** The project's session files (~/.qwen/projects/<project>/chats/*.jsonl) by name, as bytes. */
function sessionFiles(): Map<string, Buffer> {
  const chats = path.join(wb.projectStateDir(), 'chats');
  return new Map(readdirSync(chats).filter((f) => f.endsWith('.jsonl')).map((f) => [f, readFileSync(path.join(chats, f))]));
}

/** Sends `text` from the composer and waits for the answer containing `answer`. */
async function ask(text: string, answer: string): Promise<void> {
  const prompt = wb.chat().locator('#prompt');
  await prompt.click();
  await prompt.fill(text);
  await prompt.press('Enter');
  await wb.chat().locator('.msg.assistant:not(.streaming)', { hasText: answer }).waitFor({ timeout: LONG });
}

/** Waits for the chip to show `text` with its "result ready" marker (the speculation finished). */
async function readyChip(text: string): Promise<void> {
  const chip = wb.chat().locator('#suggestion');
  await chip.locator('.suggestion-text', { hasText: text }).waitFor({ timeout: LONG });
  await wb.chat().locator('#suggestion.ready .suggestion-ready').waitFor({ state: 'visible', timeout: LONG });
  assert.equal(await wb.chat().locator('#prompt').getAttribute('placeholder'), `${text} (Tab to use it)`);
}

e2e('a follow-up suggestion: the chip, then "result ready"; Tab in the empty composer applies the speculated edit to the open editor and shows the turn', 5, async () => {
  await wb.openFile('users.py');
  await wb.openQwen();
  await ask('What does list_users return?', 'It returns an empty list.');
  await readyChip('Make list_users return ada');
  // Speculated, not applied: the change sits in the overlay; the file and the editor are as they were.
  assert.equal(overlays().length, 1, 'one speculation overlay');
  assert.equal(readFileSync(users, 'utf8'), ORIGINAL);
  assert.equal(await wb.page.locator('.monaco-editor .view-line', { hasText: "return ['ada']" }).count(), 0);
  await wb.shot('suggestion-ready-dark');

  const prompt = wb.chat().locator('#prompt');
  assert.equal(await prompt.inputValue(), '');
  await prompt.focus();
  await prompt.press('Tab');
  await wb.chat().locator('#suggestion').waitFor({ state: 'hidden', timeout: LONG });
  // The speculative turn in the transcript: the suggestion as the user's message, the model's answer after the edit.
  await wb.chat().locator('.msg.user', { hasText: 'Make list_users return ada' }).waitFor({ timeout: LONG });
  await wb.chat().locator('.msg.assistant', { hasText: 'Done: Make list_users return ada.' }).waitFor({ timeout: LONG });
  // workspace/applyEdit went to the open buffer: changed there, not yet on disk; saving writes it.
  await wb.page.locator('.monaco-editor .view-line', { hasText: "return ['ada']" }).first().waitFor({ timeout: LONG });
  assert.equal(readFileSync(users, 'utf8'), ORIGINAL, 'nothing written behind the editor');
  await waitFor(() => overlays().length === 0, 'the applied overlay to be removed', LONG);
  await wb.shot('suggestion-accepted-dark');
  await wb.page.locator('.tabs-container .tab', { hasText: 'users.py' }).first().click();
  await wb.page.keyboard.press('Control+S');
  await waitFor(() => readFileSync(users, 'utf8') === ACCEPTED, 'users.py saved with the accepted edit', LONG);
});

e2e('typing in the composer dismisses the suggestion: its speculation is dropped, the file and the editor stay as they were', 5, async () => {
  await ask('Who is in the list now?', 'Just ada.');
  await readyChip('Rename list_users to all_users');
  assert.equal(overlays().length, 1, 'the speculation wrote its overlay');
  const session = sessionFiles();
  const prompt = wb.chat().locator('#prompt');
  await prompt.click();
  await wb.page.keyboard.type('n');
  await wb.chat().locator('#suggestion').waitFor({ state: 'hidden', timeout: LONG });
  assert.equal(await prompt.inputValue(), 'n', 'the keystroke stays in the draft');
  await waitFor(() => /Sending request 'qwen\/suggestion\/dismiss/.test(wb.qwenLog()), 'the dismiss sent to the server', LONG);
  await waitFor(() => overlays().length === 0, 'the overlay deleted', LONG);
  assert.equal(readFileSync(users, 'utf8'), ACCEPTED, 'the file is unchanged');
  assert.deepEqual(sessionFiles(), session, 'the session file is unchanged, byte for byte');
  assert.equal(await wb.page.locator('.monaco-editor .view-line', { hasText: 'all_users' }).count(), 0, 'the editor is unchanged');
  assert.equal(await wb.chat().locator('.msg.user', { hasText: 'Rename list_users to all_users' }).count(), 0, 'no turn in the transcript');
  await prompt.fill('');
  await wb.shot('suggestion-dismissed-dark');
});

e2e('a busy session (21 tool calls) gets a proposed-skill card; Accept, once armed, saves it under .qwen/skills and the Skills view lists it', 5, async () => {
  const skillFile = path.join(wb.workspace, '.qwen', 'skills', 'auto-skill-reread-module', 'SKILL.md');
  await ask('Read users.py over and over', 'Done: read it all.');
  const card = wb.chat().locator('.proposal', { hasText: 'Proposed skill: reread-module' });
  await card.waitFor({ timeout: LONG });
  assert.equal(await card.locator('.proposal-description').textContent(), 'Re-read a module until its contents are settled');
  const proposed = (await card.locator('.proposal-text code').textContent())!;
  assert.match(proposed, /^---\nname: reread-module\ndescription: Re-read a module until its contents are settled\nsource: auto-skill\n---\n/);
  assert.ok(!existsSync(skillFile), 'a proposal is not a skill until accepted');
  const accept = card.locator('button[data-answer="accept"]');
  await card.locator('button[data-answer="accept"]:not([aria-disabled])').waitFor({ timeout: 10_000 }); // armed
  await card.locator('.proposal-text summary').click(); // the proposed SKILL.md, shown as code
  await wb.shot('skill-proposal-dark');
  await accept.click();
  const notice = wb.chat().locator('.notice', { hasText: 'Skill reread-module saved' });
  await notice.waitFor({ timeout: LONG });
  assert.match((await notice.textContent())!, /Skill reread-module saved to \.qwen\/skills\/auto-skill-reread-module\/SKILL\.md/);
  await card.waitFor({ state: 'detached', timeout: LONG });
  assert.equal(readFileSync(skillFile, 'utf8'), proposed, 'the accepted text, byte for byte');
  // The Skills view (collapsed in the Qwen container until opened) lists it.
  const header = wb.page.locator('.pane-header', { hasText: 'Skills' });
  await header.click();
  const row = wb.page.locator('.pane', { has: header }).locator('.pane-body .monaco-list-row', { hasText: 'reread-module' }).first();
  await row.waitFor({ timeout: LONG });
  assert.match((await row.textContent())!, /reread-module\s*project/, 'a project skill');
  await wb.shot('skill-saved-dark');
});
