// Skill notices stay true, end to end in a real VS Code (code-server, e2e/workbench.ts): opening a
// file under a conditional skill's `paths` shows "Activated api-helper — triggered by …" once in the
// transcript, and when the skill goes away (its folder deleted, so the server switches it off) the
// notice goes with it. The model is e2e/scripted_e2e.py. Screenshots go to e2e/screenshots/*.png.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir, waitFor } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';

let wb: Workbench;
let ws: string;

before(async () => {
  ws = tempDir('qwen-e2e-notices-');
  mkdirSync(path.join(ws, 'src', 'api'), { recursive: true });
  mkdirSync(path.join(ws, '.git'));
  writeFileSync(path.join(ws, 'src', 'api', 'users.py'), 'def get_user(): ...\n');
  const skill = path.join(ws, '.qwen', 'skills', 'api-helper');
  mkdirSync(skill, { recursive: true });
  writeFileSync(path.join(skill, 'SKILL.md'), '---\nname: api-helper\ndescription: Helps with API handlers\npaths: ["src/api/**"]\n---\nKeep handlers thin.\n');
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

e2e('a skill notice is shown once and goes when the skill is switched off', 8, async () => {
  await wb.openQwen();
  const chat = wb.chat();
  await wb.openFile('users.py');
  const notice = chat.locator('#messages > .notice', { hasText: 'Activated api-helper' });
  await notice.waitFor({ timeout: LONG });
  assert.match((await notice.textContent())!, /triggered by src\/api\/users\.py/);
  assert.equal(await notice.count(), 1, 'one notice for the skill');
  await wb.shot('notices-skill-activated');
  // The skill is deleted: the server switches it off (qwen/skillsChanged deactivated), and the notice
  // that said it was active goes.
  rmSync(path.join(ws, '.qwen', 'skills', 'api-helper'), { recursive: true });
  await waitFor(async () => (await notice.count()) === 0, 'the notice of the deleted skill gone', LONG);
  await wb.shot('notices-skill-gone');
});

