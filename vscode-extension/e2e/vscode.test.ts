// End to end in a real VS Code (code-server): the packaged .vsix installed into a fresh profile,
// the real qwen-lsp server found through qwen.server.path, the scripted OpenAI server
// (e2e/scripted_e2e.py) behind it, driven through the workbench in Debian's Chromium (e2e/workbench.ts).
// Screenshots go to e2e/screenshots/*.png (ignored by git; docs/images/ has a chosen few); on
// failure, a screenshot and the extension's log go to test-artifacts/.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { startEditingModel, tempDir, waitFor } from '../test/support';
import type { Scripted } from '../test/support';
import { LONG, Workbench, e2e as e2eIn } from './workbench';
import type { Locator } from 'playwright-core';

let wb: Workbench;
let editing: Scripted | undefined;

function makeWorkspace(): string {
  const ws = tempDir('qwen-e2e-ws-');
  mkdirSync(path.join(ws, '.qwen', 'skills', 'api-helper'), { recursive: true });
  writeFileSync(path.join(ws, '.qwen', 'skills', 'api-helper', 'SKILL.md'), '---\nname: api-helper\ndescription: Helps with API handlers\npaths: ["src/api/**"]\n---\nFollow the API conventions.\n');
  mkdirSync(path.join(ws, '.qwen', 'skills', 'docs-helper'), { recursive: true });
  writeFileSync(path.join(ws, '.qwen', 'skills', 'docs-helper', 'SKILL.md'), '---\nname: docs-helper\ndescription: Helps with the docs\npaths: ["docs/**"]\n---\nKeep the docs short.\n');
  mkdirSync(path.join(ws, 'src', 'api'), { recursive: true });
  writeFileSync(path.join(ws, 'src', 'api', 'users.py'), 'def list_users():\n    return []\n');
  writeFileSync(path.join(ws, 'QWEN.md'), '# Project\n\nAnswer briefly.\n');
  return ws;
}

before(async () => {
  wb = await Workbench.open({ workspace: makeWorkspace(), modelScript: 'scripted_e2e.py' });
});

after(async () => {
  await wb?.close();
  editing?.stop();
});

function e2e(name: string, minutes: number, fn: () => Promise<void>): void {
  e2eIn(() => wb, name, minutes, fn);
}

e2e('the Qwen view streams a Markdown answer with a code block; the status bar shows the context meter (light and dark)', 6, async () => {
  await wb.openQwen();
  const prompt = wb.chat().locator('#prompt');
  await prompt.fill('Write a greeting function');
  await prompt.press('Enter');
  const code = wb.chat().locator('.msg.assistant .markdown pre code');
  await code.waitFor({ timeout: LONG });
  await wb.chat().locator('.msg.assistant:not(.streaming)').first().waitFor({ timeout: LONG });
  assert.equal((await code.textContent())?.trim(), 'def hello(name):\n    return f"Hello, {name}!"');
  assert.match((await wb.chat().locator('.msg.assistant .markdown').first().textContent())!, /Here is a greeting function/);
  assert.equal(await wb.chat().locator('.msg.assistant .markdown strong').first().textContent(), 'greeting');
  const meter = wb.page.locator('.statusbar-item').filter({ hasText: /Qwen \d+% left/ });
  await meter.waitFor({ timeout: LONG });
  await wb.setTheme('Dark Modern');
  await wb.shot('answer-dark');
  await wb.setTheme('Light Modern');
  await wb.shot('answer-light');
});

e2e('Stop on a slow answer cancels the request and keeps the partial answer', 4, async () => {
  const prompt = wb.chat().locator('#prompt');
  await prompt.fill('Explain every step, slow please');
  await prompt.press('Enter');
  const answer = wb.chat().locator('.msg.assistant').last();
  await answer.locator('.markdown', { hasText: 'step5' }).waitFor({ timeout: LONG });
  await wb.chat().locator('#stop').click();
  await answer.locator('.badge', { hasText: 'Interrupted' }).waitFor({ timeout: 30_000 });
  await wb.chat().locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
  const text = (await answer.locator('.markdown').textContent())!;
  assert.match(text, /^step0 step1 step2/);
  assert.doesNotMatch(text, /step599/, 'the answer was cut short');
  // vscode-languageclient's trace (qwen.trace.server) logs the server's answer to the cancelled request.
  await waitFor(() => /Received response 'qwen\/chat - \(\d+\)'.*Request failed: .*\(-32800\)/.test(wb.qwenLog()), 'the server answering -32800 to the cancelled qwen/chat');
  await wb.shot('stopped-light');
  await wb.setTheme('Dark Modern');
  await wb.shot('stopped-dark');
});

e2e('opening a file under a conditional skill\'s paths: shows the activation notice naming the file', 4, async () => {
  await wb.openFile('users.py');
  const notice = wb.chat().locator('.notice', { hasText: 'api-helper' });
  await notice.waitFor({ timeout: LONG });
  assert.match((await notice.textContent())!, /Activated api-helper — triggered by src\/api\/users\.py/);
  await wb.shot('skill-notice-dark');
  await wb.setTheme('Light Modern');
  await wb.shot('skill-notice-light');
});

/** An answer's body in document order: its text parts and tool rows (name and summary line). */
async function answerOrder(): Promise<string[]> {
  return wb.chat().locator('.msg.assistant').last().evaluate((el) =>
    Array.from(el.querySelectorAll('.answer > .markdown, .answer > .tools > .tool')).flatMap((part) =>
      part.classList.contains('tool')
        ? [`tool ${part.querySelector('.tool-name')!.textContent} ${part.querySelector('.tool-detail')?.textContent ?? ''} ${part.querySelector('.tool-result')!.textContent}`]
        : part.textContent!.trim() ? [`text ${part.textContent!.trim()}`] : [],
    ),
  );
}

e2e('a two-round tool turn whose calls are both call_0: rows in order between the texts, none stuck at "…"; the same after a window reload', 5, async () => {
  await wb.openQwen();
  const prompt = wb.chat().locator('#prompt');
  await prompt.fill('find list_users with tools');
  await prompt.press('Enter');
  await wb.chat().locator('.msg.assistant:not(.streaming) .markdown', { hasText: 'It is called once.' }).waitFor({ timeout: LONG });
  const live = await answerOrder();
  assert.equal(live.length, 5, live.join(' | '));
  assert.deepEqual(live.map((l) => l.split(' ').slice(0, 3).join(' ')), ['text first.', 'tool glob src/**/*.py', 'text list_users() is', 'tool glob *.md', 'text It is']);
  assert.ok(live.every((l) => !l.endsWith('…')), `no row waits forever: ${live.join(' | ')}`);
  await wb.command('Developer: Reload Window');
  await wb.page.waitForSelector('.monaco-workbench .statusbar', { timeout: LONG });
  await wb.chat().locator('.msg.assistant .markdown', { hasText: 'It is called once.' }).waitFor({ timeout: LONG });
  assert.deepEqual(await answerOrder(), live, 'the reopened answer shows the same rows in the same places');
  await wb.shot('tool-rounds-after-reload');
});

e2e('in the side bar a wide table scrolls in its own box, long words wrap, and a long code block is highlighted with its Copy bar in reach ("Copied")', 5, async () => {
  await wb.openQwen();
  const prompt = wb.chat().locator('#prompt');
  await prompt.fill('Show me a wide table and a long code block');
  await prompt.press('Enter');
  const answer = wb.chat().locator('.msg.assistant:not(.streaming) .markdown', { hasText: 'Done.' }).last();
  await answer.waitFor({ timeout: LONG });
  const m = await answer.evaluate((md) => {
    const box = md.querySelector<HTMLElement>('.table-scroll')!;
    const transcript = document.getElementById('transcript')!;
    const block = md.querySelector<HTMLElement>('.code-block')!;
    const keyword = block.querySelector('.hljs-keyword');
    const plain = block.querySelector('code')!;
    const overflowing = Array.from(md.querySelectorAll<HTMLElement>('p')).filter((el) => el.scrollWidth > el.clientWidth + 1).length;
    // Halfway down the 85-line block: its toolbar is still on screen, and nothing covers Copy.
    transcript.scrollTop += block.getBoundingClientRect().top - transcript.getBoundingClientRect().top + block.offsetHeight / 2;
    const view = transcript.getBoundingClientRect();
    const copy = block.querySelector<HTMLElement>('[data-code-action="copy"]')!.getBoundingClientRect();
    const hit = document.elementFromPoint(copy.left + copy.width / 2, copy.top + copy.height / 2) as HTMLElement | null;
    return {
      tableWider: box.querySelector('table')!.scrollWidth > box.clientWidth,
      boxScrolls: getComputedStyle(box).overflowX,
      transcriptOverflow: transcript.scrollWidth - transcript.clientWidth,
      overflowing,
      keywordColoured: !!keyword && getComputedStyle(keyword).color !== getComputedStyle(plain).color,
      blockTopAbove: block.getBoundingClientRect().top < view.top,
      copyInView: copy.top >= view.top - 1 && copy.bottom <= view.bottom,
      hit: hit?.dataset?.codeAction,
    };
  });
  assert.ok(m.tableWider, 'the table is wider than the side bar: the case under test');
  assert.equal(m.boxScrolls, 'auto', 'the table scrolls in its own box');
  assert.ok(m.transcriptOverflow <= 0, `the transcript does not scroll sideways (${m.transcriptOverflow}px)`);
  assert.equal(m.overflowing, 0, 'the long word and the URL wrap inside the side bar');
  assert.ok(m.keywordColoured, 'keywords are coloured apart from the rest of the code');
  assert.ok(m.blockTopAbove, 'the block starts above the visible area');
  assert.ok(m.copyInView, 'the Copy / Insert bar stays in view on a long block');
  assert.equal(m.hit, 'copy', 'nothing covers Copy');
  const copy = answer.locator('[data-code-action="copy"]');
  await copy.click();
  await answer.locator('[data-code-action="copy"]', { hasText: 'Copied' }).waitFor({ timeout: 15_000 });
  await wb.shot('rendering-side-bar');
});

e2e('after a window reload the transcript comes back from the server, the stopped answer still marked Interrupted and a failed turn with its error and buttons', 5, async () => {
  const prompt = wb.chat().locator('#prompt');
  await prompt.fill('Ask the model something; this one fails');
  await prompt.press('Enter');
  const live = wb.chat().locator('.msg.assistant .error .error-text', { hasText: 'The e2e model refuses this prompt' });
  await live.waitFor({ timeout: LONG });
  const liveText = (await live.textContent())!;
  const actionsOf = (error: Locator) => error.locator('.error-actions button').allTextContents();
  const liveActions = await actionsOf(wb.chat().locator('.msg.assistant .error', { hasText: 'The e2e model refuses this prompt' }));
  assert.ok(liveActions.length > 0, 'the live error offers its fix');
  await wb.chat().locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
  await wb.command('Developer: Reload Window');
  await wb.page.waitForSelector('.monaco-workbench .statusbar', { timeout: LONG });
  const first = wb.chat().locator('.msg.user').first();
  await first.waitFor({ timeout: LONG });
  assert.equal((await first.textContent())?.replace(/^You/, '').trim(), 'Write a greeting function');
  await wb.chat().locator('.msg.assistant .markdown pre code').first().waitFor({ timeout: LONG });
  // The answer stopped earlier comes back marked as such, not as a complete answer.
  const stopped = wb.chat().locator('.msg.assistant', { has: wb.chat().locator('.markdown', { hasText: /^step0 step1 step2/ }) });
  await stopped.locator('.badge', { hasText: 'Interrupted' }).waitFor({ timeout: LONG });
  // The failed turn comes back with the error it showed live (recorded in the session), not a generic line.
  const reopened = wb.chat().locator('.msg.assistant .error', { hasText: 'The e2e model refuses this prompt' });
  await reopened.waitFor({ timeout: LONG });
  assert.equal(await reopened.locator('.error-text').textContent(), liveText);
  assert.deepEqual(await actionsOf(reopened), liveActions, 'the same buttons as live');
  await wb.shot('after-reload');
});

const CONVENTION = 'Tests here never mock the database';

e2e('"Remember this convention" on a selected line saves a project memory, listed in the Memory view (light and dark)', 4, async () => {
  mkdirSync(path.join(wb.workspace, 'docs'), { recursive: true });
  writeFileSync(path.join(wb.workspace, 'docs', 'testing.md'), `# Testing\n\n${CONVENTION}\n\nRun them with pytest.\n`);
  await wb.openFile('testing.md');
  const input = wb.page.locator('.quick-input-widget input');
  await wb.page.locator('.monaco-editor .view-line', { hasText: CONVENTION }).waitFor({ timeout: 15_000 });
  // Select line 3 the way a user does: go to the line, then Shift+End.
  await wb.page.keyboard.press('Control+G');
  await input.waitFor({ timeout: 15_000 });
  await input.fill(':3');
  await wb.page.keyboard.press('Enter');
  await wb.page.keyboard.press('Home');
  await wb.page.keyboard.press('Shift+End');
  await wb.page.locator('.monaco-editor .selected-text').first().waitFor({ timeout: 15_000 });
  await wb.command('Qwen: Remember this convention');
  // The line is no comment in Markdown: the box holds it as it is, and Enter accepts it.
  await (await wb.inputBox('Remember this convention', CONVENTION)).press('Enter');
  const slug = 'tests-here-never-mock-the-database.md';
  const toast = wb.page.locator('.notifications-toasts .notification-toast', { hasText: `Remembered “${CONVENTION}” as a project memory` });
  await toast.waitFor({ timeout: LONG });
  assert.match((await toast.textContent())!, new RegExp(`Remembered “${CONVENTION}” as a project memory in ~/\\.qwen/projects/[^/]+/memory/feedback/${slug.replace(/\./g, '\\.')}`));
  // qwen/memoryChanged: the chat's notice names the saved file (the MEMORY.md index is left out).
  const notice = wb.chat().locator('.notice', { hasText: 'Memory updated' });
  await notice.waitFor({ timeout: LONG });
  assert.match((await notice.textContent())!, new RegExp(`Memory updated \\(project\\): saved ${slug.replace(/\./g, '\\.')}`));
  // The file on disk, in Qwen Code's format, under the scratch HOME's project memory.
  const file = path.join(wb.projectStateDir(), 'memory', 'feedback', slug);
  assert.ok(existsSync(file), `no memory file at ${file}`);
  const saved = readFileSync(file, 'utf8');
  assert.match(saved, new RegExp(`^---\\nname: ${CONVENTION}\\ndescription: ${CONVENTION}\\ntype: feedback\\n---\\n\\n${CONVENTION}\\n$`));
  // The Memory view (collapsed in the Qwen container until opened): Project → the memory by name.
  const header = wb.page.locator('.pane-header', { hasText: 'Memory' });
  await header.click();
  const tree = wb.page.locator('.pane', { has: header }).locator('.pane-body');
  const group = tree.locator('.monaco-list-row', { hasText: 'Project' }).first();
  await group.waitFor({ timeout: LONG });
  assert.equal(await group.getAttribute('aria-expanded'), 'true');
  const row = tree.locator('.monaco-list-row', { hasText: CONVENTION }).first();
  await row.waitFor({ timeout: LONG });
  assert.equal(await row.getAttribute('aria-level'), '2', 'the memory is listed under its scope');
  await wb.page.keyboard.press('Escape'); // the toast stays in the shot only while it is fresh
  await wb.setTheme('Light Modern');
  await wb.shot('memory-view-light');
  await wb.setTheme('Dark Modern');
  await wb.shot('memory-view-dark');
});

e2e('notices are lines in the transcript: after two of them a streamed answer is shown whole, with nothing stacked above it (light and dark)', 4, async () => {
  // Opening docs/testing.md switched on docs-helper and remembering saved a memory: two notices.
  const header = wb.page.locator('.pane-header', { hasText: 'Memory' });
  if ((await header.getAttribute('aria-expanded')) === 'true') await header.click(); // the chat gets the side bar back
  const chat = wb.chat();
  await chat.locator('.notice', { hasText: 'Activated docs-helper — triggered by docs/testing.md' }).waitFor({ timeout: LONG });
  await chat.locator('.notice', { hasText: 'Memory updated (project)' }).waitFor({ timeout: LONG });
  assert.equal(await chat.locator('.notice').count(), await chat.locator('#messages > .notice').count(), 'every notice is in the transcript');
  const prompt = chat.locator('#prompt');
  await prompt.click();
  await prompt.fill('Write the greeting function once more');
  await prompt.press('Enter');
  const answer = chat.locator('.msg.assistant').last();
  await chat.locator('.msg.user', { hasText: 'once more' }).waitFor({ timeout: LONG });
  await chat.locator('.msg.assistant:not(.streaming)', { hasText: 'Call it with' }).last().waitFor({ timeout: LONG });
  await chat.locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
  assert.match((await answer.textContent())!, /Here is a greeting function:.*def hello\(name\).*Call it with hello\("Qwen"\)\./s);
  const order = await chat.locator('#messages > *').evaluateAll((els) => els.map((e) => (e.classList.contains('notice') ? 'notice' : e.classList.contains('user') ? 'user' : 'other')));
  assert.ok(order.lastIndexOf('notice') < order.lastIndexOf('user'), `the notices come before the turn that followed them: ${order.join(' ')}`);
  const inView = async (): Promise<void> => {
    const box = (await chat.locator('#transcript').boundingBox())!;
    const a = (await answer.boundingBox())!;
    assert.ok(a.height > 40 && a.y >= box.y - 1 && a.y + a.height <= box.y + box.height + 1, `the whole answer is in view: answer ${a.y}..${a.y + a.height}, transcript ${box.y}..${box.y + box.height}`);
    const composer = (await chat.locator('#prompt').boundingBox())!;
    assert.ok(box.y + box.height <= composer.y, 'the transcript ends above the composer');
  };
  await inView();
  await wb.setTheme('Dark Modern');
  await inView();
  await wb.shot('notices-answer-dark');
  await wb.setTheme('Light Modern');
  await inView();
  await wb.shot('notices-answer-light');
});

e2e('"Compact" in the panel summarizes the model\'s copy of the chat; the transcript stays and says how much smaller', 4, async () => {
  const compact = wb.chat().locator('#compact');
  await compact.waitFor({ timeout: LONG });
  await wb.chat().locator('#compact:not([disabled])').waitFor({ timeout: LONG }); // the resumed chat has a session
  const before = await wb.chat().locator('.msg.user').count();
  assert.ok(before >= 2, 'the earlier turns are in the panel');
  await compact.click();
  const line = wb.chat().locator('.status-line:not(.pending)', { hasText: /Compact/ }).last();
  await line.waitFor({ timeout: LONG });
  const text = (await line.textContent())!;
  const m = /Compacted: ([\d,]+) → ([\d,]+) tokens\. Your conversation stays in this panel/.exec(text);
  assert.ok(m, `not a successful compaction: ${text}`);
  const [from, to] = [Number(m[1].replace(/,/g, '')), Number(m[2].replace(/,/g, ''))];
  assert.ok(to < from, `the history did not get smaller: ${from} → ${to}`);
  assert.equal(await wb.chat().locator('.msg.user').count(), before, 'the transcript the person reads is kept');
  await wb.chat().locator('#compact:not([disabled])', { hasText: 'Compact' }).waitFor({ timeout: 30_000 });
  // The session file records the model's summary (its <analysis> draft stripped).
  const chats = path.join(wb.projectStateDir(), 'chats');
  const recorded = readdirSync(chats).filter((f) => f.endsWith('.jsonl')).map((f) => readFileSync(path.join(chats, f), 'utf8')).join('\n');
  assert.match(recorded, /summarized by the e2e model/);
  assert.doesNotMatch(recorded, /then for a slow explanation they stopped/, 'the <analysis> draft is not kept');
  await wb.shot('compacted-dark');
});

// Before the edit case: that one points the chat at another scripted model.
e2e('a question asked with a selection reaches the model with it; leaving it out in the panel drops it for that message only', 5, async () => {
  await wb.openFile('users.py');
  await wb.page.locator('.editor-instance .view-lines').first().click();
  await wb.page.keyboard.press('Control+A');
  const line = wb.chat().locator('#editor-context');
  await line.locator('.editor-context-label', { hasText: 'users.py · lines 1–2 selected' }).waitFor({ timeout: 30_000 });
  // Left out: this message goes without it.
  await line.getByRole('button', { name: /Leave out editor context/ }).click();
  await line.locator('.editor-context-label', { hasText: 'left out of the next message' }).waitFor({ timeout: 15_000 });
  const prompt = wb.chat().locator('#prompt');
  await prompt.fill('Without it: what do I have selected?');
  await prompt.press('Enter');
  const answers = wb.chat().locator('.msg.assistant:not(.streaming)');
  await answers.filter({ hasText: 'No editor context came with this message.' }).last().waitFor({ timeout: LONG });
  await line.locator('.editor-context-label', { hasText: /^users\.py · lines 1–2 selected$/ }).waitFor({ timeout: 15_000 });
  // The next message carries it again, the selected text included.
  await wb.chat().locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
  await prompt.fill('And now: what do I have selected?');
  await prompt.press('Enter');
  const got = answers.filter({ hasText: 'The editor selection I got' }).last();
  await got.waitFor({ timeout: LONG });
  assert.match((await got.locator('pre code').textContent()) ?? '', /def list_users\(\):\n\s+return \[\]/);
  await wb.shot('editor-context-light');
});

e2e('an edit asks first: the permission card and the proposed change in the diff editor; Allow applies it, closing the diff denies', 5, async () => {
  const target = path.join(wb.workspace, 'src', 'api', 'users.py');
  editing = await startEditingModel(target, [
    { when: 'Rename', old: 'def list_users', new: 'def all_users' },
    { old: 'return []', new: "return ['ada']" },
  ]);
  // The chat moves to a model that edits, through the setting a user would change (machine-scoped, so the Machine file).
  const machine = path.join(wb.profile, 'data', 'Machine', 'settings.json');
  const sent = () => (wb.qwenLog().match(/Sending notification 'workspace\/didChangeConfiguration'/g) ?? []).length;
  const before = sent();
  writeFileSync(machine, JSON.stringify({ ...JSON.parse(readFileSync(machine, 'utf8')), 'qwen.model.baseUrl': editing.baseUrl }));
  await waitFor(() => sent() > before, 'the new model URL sent to the server', LONG);
  // users.py (opened by the skill step) in front, so the edit lands in its buffer; then back to the composer.
  await wb.page.locator('.tabs-container .tab', { hasText: 'users.py' }).first().click();
  await wb.page.locator('.tabs-container .tab.active', { hasText: 'users.py' }).waitFor({ timeout: LONG });
  const prompt = wb.chat().locator('#prompt');
  await prompt.click();
  await prompt.fill('Make list_users return ada');
  await prompt.press('Enter');
  const card = wb.chat().locator('.approval');
  await card.waitFor({ timeout: LONG });
  assert.match((await card.textContent())!, /Edit src\/api\/users\.py.*\(\+1 −1\), shown in the diff editor/);
  // "Allow always (this chat)" says what it would let through, in the server's words: this tool on this file.
  assert.equal(
    await card.locator('.approval-covers').textContent(),
    'Covers: Every edit (the edit tool) of src/api/users.py in this chat; other files and other tools still ask',
  );
  const diff = wb.page.locator('.monaco-diff-editor').first();
  await diff.waitFor({ timeout: LONG });
  await wb.page.locator('.tabs-container .tab', { hasText: 'users.py: proposed change (Qwen)' }).waitFor({ timeout: LONG });
  await diff.locator('.modified-in-monaco-diff-editor .view-line', { hasText: "return ['ada']" }).waitFor({ timeout: LONG });
  assert.equal(await wb.chat().locator('#prompt').evaluate((el) => el === document.activeElement), true, 'the composer kept focus');
  await wb.page.waitForTimeout(700); // past the card's arming delay
  await wb.shot('permission-card-diff');
  await card.locator('button[data-option="allow"]').click();
  await wb.chat().locator('.tool', { hasText: 'src/api/users.py' }).locator('.tool-decision', { hasText: 'allowed' }).waitFor({ timeout: LONG });
  await wb.page.locator('.tabs-container .tab', { hasText: 'proposed change' }).waitFor({ state: 'detached', timeout: 20_000 });
  assert.equal(await wb.chat().locator('.approval').count(), 0, 'the card is gone');
  // applyEdit went to the open buffer (users.py was opened by the skill step): changed, not saved.
  await wb.page.locator('.monaco-editor .view-line', { hasText: "return ['ada']" }).first().waitFor({ timeout: LONG });
  assert.equal(readFileSync(target, 'utf8'), 'def list_users():\n    return []\n', 'nothing written behind the editor');
  await prompt.fill('Rename it to all_users');
  await prompt.press('Enter');
  await card.waitFor({ timeout: LONG });
  await wb.page.locator('.tabs-container .tab', { hasText: 'proposed change' }).waitFor({ timeout: LONG });
  await wb.command('View: Close Editor'); // the diff tab is the active editor: closing it is a Deny
  await wb.chat().locator('.tool-decision.decision-deny').waitFor({ timeout: LONG });
  assert.equal(await wb.chat().locator('.approval').count(), 0, 'the card went with the diff');
  await wb.chat().locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
  await wb.shot('permission-denied');
});
