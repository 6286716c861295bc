// Follow-ups and proposed skills in the chat webview (headless Chromium, real bundle, CSS, CSP):
// the follow-up suggestion chip (Tab / Enter in the empty composer accepts, typing dismisses,
// the "result ready" marker, replacement, restore from the snapshot, B13: Tab is never taken
// otherwise) and the proposed-skill cards (Accept / Discard, arming as the approval card's B11,
// no focus stealing B10). The host side is tested in followups.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { msg, snapshot, useWebview } from './webviewHarness';
import type { Panel } from './webviewHarness';
import type { SkillProposal, Suggestion } from '../src/shared/messages';

const web = useWebview();

/** Longer than the cards' arming delay (ARM_MS in webview/approval.ts). */
const ARMED_AFTER_MS = 800;

const chat = () => snapshot([msg('user', 'add a test for parse()'), msg('assistant', 'Added `test_parse` in tests/test_parse.py.')]);
const suggest = (id: string, text: string, ready = false): Suggestion => ({ id, text, ready });
const ofType = async (p: Panel, type: string) => (await p.posted()).filter((m) => m.type === type);
const focused = (p: Panel) => p.page.evaluate(() => document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || document.activeElement?.tagName || '');
const chipShown = (p: Panel) => p.page.locator('#suggestion').isVisible();

test('B13 suggestion keys: Tab or Enter in the empty composer accepts; with text, Shift, a running turn or no suggestion Tab moves focus', async () => {
  const p = await web.open();
  await p.host(chat());
  const box = p.page.locator('#prompt');
  await box.focus();
  // No suggestion: Tab leaves the composer as always.
  await p.page.keyboard.press('Tab');
  assert.notEqual(await focused(p), 'prompt', 'without a suggestion Tab moves focus');
  await box.focus();
  await p.host({ type: 'suggestion', suggestion: suggest('s1', 'Run the tests') });
  assert.equal(await chipShown(p), true);
  assert.equal(await p.page.locator('.suggestion-text').textContent(), 'Run the tests');
  assert.equal(await box.getAttribute('placeholder'), 'Run the tests (Tab to use it)', 'the ghost text in the empty composer');
  assert.equal(await focused(p), 'prompt', 'the chip did not take focus');
  // Shift+Tab is focus navigation, never an accept.
  await p.page.keyboard.press('Shift+Tab');
  assert.notEqual(await focused(p), 'prompt');
  assert.deepEqual(await ofType(p, 'acceptSuggestion'), []);
  await box.focus();
  // An IME Enter (isComposing / keyCode 229) does not accept either.
  await box.evaluate((el) => {
    el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', isComposing: true, bubbles: true, cancelable: true }));
    el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Tab', keyCode: 229, bubbles: true, cancelable: true }));
  });
  assert.deepEqual(await ofType(p, 'acceptSuggestion'), []);
  // Tab in the empty composer accepts: one message, the chip goes, focus stays in the composer.
  await p.page.keyboard.press('Tab');
  assert.deepEqual(await ofType(p, 'acceptSuggestion'), [{ type: 'acceptSuggestion', id: 's1' }]);
  assert.equal(await chipShown(p), false);
  assert.equal(await focused(p), 'prompt', 'the accepting Tab did not move focus');
  assert.equal(await box.getAttribute('placeholder'), 'Ask Qwen… (Enter to send, Shift+Enter for a new line)', 'the placeholder is back');
  assert.deepEqual(await ofType(p, 'send'), []);
  // With the chip gone the next Tab is ordinary again.
  await p.page.keyboard.press('Tab');
  assert.notEqual(await focused(p), 'prompt');
  assert.equal((await ofType(p, 'acceptSuggestion')).length, 1);
  // Enter accepts too (and sends nothing).
  await box.focus();
  await p.host({ type: 'suggestion', suggestion: suggest('s2', 'Commit the change') });
  await p.page.keyboard.press('Enter');
  assert.deepEqual((await ofType(p, 'acceptSuggestion')).slice(1), [{ type: 'acceptSuggestion', id: 's2' }]);
  assert.deepEqual(await ofType(p, 'send'), []);
  // While a turn runs, the keys are left alone.
  await p.host([{ type: 'suggestion', suggestion: suggest('s3', 'Open a PR') }, { type: 'running', running: true }]);
  await box.focus();
  await p.page.keyboard.press('Tab');
  assert.notEqual(await focused(p), 'prompt', 'Tab moved focus while running');
  assert.equal((await ofType(p, 'acceptSuggestion')).length, 2);
  await p.page.context().close();
});

test('typing anything dismisses the suggestion (one dismiss, with its id); after that Tab with text moves focus and sends nothing', async () => {
  const p = await web.open();
  await p.host([chat(), { type: 'suggestion', suggestion: suggest('s1', 'Run the tests') }]);
  const box = p.page.locator('#prompt');
  await box.focus();
  await p.page.keyboard.type('n');
  assert.deepEqual(await ofType(p, 'dismissSuggestion'), [{ type: 'dismissSuggestion', id: 's1' }]);
  assert.equal(await chipShown(p), false);
  await p.page.keyboard.type('o, explain it');
  assert.equal((await ofType(p, 'dismissSuggestion')).length, 1, 'dismissed once');
  assert.equal(await box.inputValue(), 'no, explain it', 'every keystroke is in the draft');
  // A suggestion arriving while the composer has text: Tab is focus navigation, not an accept.
  await p.host({ type: 'suggestion', suggestion: suggest('s2', 'Run the tests') });
  await box.focus();
  await p.page.keyboard.press('Tab');
  assert.notEqual(await focused(p), 'prompt', 'Tab moved focus: the composer has text');
  assert.deepEqual(await ofType(p, 'acceptSuggestion'), []);
  // Sending the draft replaces the suggestion.
  await box.focus();
  await p.page.keyboard.press('Enter');
  assert.deepEqual(await ofType(p, 'send'), [{ type: 'send', prompt: 'no, explain it' }]);
  assert.equal(await chipShown(p), false, 'a sent prompt clears the chip');
  assert.deepEqual(await ofType(p, 'acceptSuggestion'), []);
  // A paste dismisses too; so does the chip's own × (focus goes back to the composer).
  await p.host({ type: 'suggestion', suggestion: suggest('s3', 'Run the tests') });
  await box.focus();
  await p.page.keyboard.insertText('pasted');
  assert.deepEqual((await ofType(p, 'dismissSuggestion')).map((m) => m.id), ['s1', 's3']);
  await box.fill('');
  await p.host({ type: 'suggestion', suggestion: suggest('s4', 'Run the tests') });
  await p.page.getByRole('button', { name: 'Dismiss suggestion' }).click();
  assert.deepEqual((await ofType(p, 'dismissSuggestion')).map((m) => m.id), ['s1', 's3', 's4']);
  assert.equal(await focused(p), 'prompt');
  await p.page.context().close();
});

test('"result ready" marker for the same id; a new suggestion replaces the old; the chip is a named button for the mouse and keyboard', async () => {
  const p = await web.open();
  await p.host([chat(), { type: 'suggestion', suggestion: suggest('s1', 'Run the tests') }]);
  const ready = p.page.locator('.suggestion-ready');
  assert.equal(await ready.isVisible(), false, 'no marker while the speculation runs');
  await p.page.locator('.suggestion-text').evaluate((el) => ((el as any).__tag = 'kept'));
  await p.host({ type: 'suggestion', suggestion: suggest('s1', 'Run the tests', true) });
  assert.equal(await ready.isVisible(), true);
  assert.equal(await ready.textContent(), 'result ready');
  assert.equal(await p.page.locator('.suggestion-text').evaluate((el) => (el as any).__tag), 'kept', 'same chip, updated in place');
  const use = p.page.getByRole('button', { name: 'Use suggestion (result ready): Run the tests' });
  assert.equal(await use.count(), 1);
  // Replacement: another id, not ready.
  await p.host({ type: 'suggestion', suggestion: suggest('s2', 'Update the changelog') });
  assert.equal(await p.page.locator('.suggestion-text').textContent(), 'Update the changelog');
  assert.equal(await ready.isVisible(), false);
  assert.equal(await p.page.locator('#suggestion .suggestion-use').count(), 1, 'one chip at a time');
  // A click on the chip accepts the one shown.
  await p.page.getByRole('button', { name: 'Use suggestion: Update the changelog' }).click();
  assert.deepEqual(await ofType(p, 'acceptSuggestion'), [{ type: 'acceptSuggestion', id: 's2' }]);
  // The host clearing it removes it.
  await p.host({ type: 'suggestion', suggestion: suggest('s3', 'x') });
  await p.host({ type: 'suggestion', suggestion: null });
  assert.equal(await chipShown(p), false);
  await p.page.context().close();
});

test('a suggestion is readable in a side-bar-wide panel: the text wraps to two lines before it is cut, the markers move below it', async () => {
  const p = await web.open();
  await p.page.setViewportSize({ width: 300, height: 640 });
  await p.host(chat());
  const text = 'Make list_users return ada and bob';
  await p.host({ type: 'suggestion', suggestion: suggest('w1', text, true) });
  const shown = p.page.locator('.suggestion-text');
  const box = await shown.evaluate((el) => ({ sw: el.scrollWidth, cw: el.clientWidth, sh: el.scrollHeight, ch: el.clientHeight, lh: parseFloat(getComputedStyle(el).lineHeight) || 16 }));
  assert.ok(box.sw <= box.cw + 1 && box.sh <= box.ch + 1, `the whole text is shown: ${JSON.stringify(box)}`);
  assert.ok(box.ch > box.lh * 1.5, `it took a second line rather than an ellipsis: ${JSON.stringify(box)}`);
  // A very long one is cut after two lines, with the full text as the tooltip.
  await p.host({ type: 'suggestion', suggestion: suggest('w2', 'word '.repeat(80).trim()) });
  const cut = await shown.evaluate((el) => ({ sh: el.scrollHeight, ch: el.clientHeight, lh: parseFloat(getComputedStyle(el).lineHeight) || 16 }));
  assert.ok(cut.ch < cut.lh * 2.6 && cut.sh > cut.ch, `two lines, the rest hidden: ${JSON.stringify(cut)}`);
  assert.equal(await shown.getAttribute('title'), 'word '.repeat(80).trim());
  await p.page.context().close();
});

test('B9 the suggestion comes back with the snapshot after hide or reload, ready marker included; a snapshot without one clears it', async () => {
  const p = await web.open();
  const withChip = snapshot([msg('user', 'q'), msg('assistant', 'a')], { suggestion: suggest('s1', 'Run the tests', true) });
  await p.host(withChip);
  assert.equal(await chipShown(p), true);
  await p.reload();
  assert.equal(await chipShown(p), false, 'a fresh page has no chip until the snapshot');
  await p.host(withChip);
  assert.equal(await chipShown(p), true, 'back after the reload');
  assert.equal(await p.page.locator('.suggestion-ready').isVisible(), true);
  await p.page.locator('#prompt').focus();
  await p.page.keyboard.press('Tab');
  assert.deepEqual(await ofType(p, 'acceptSuggestion'), [{ type: 'acceptSuggestion', id: 's1' }], 'and it still accepts');
  await p.host(withChip);
  await p.host(snapshot([]));
  assert.equal(await chipShown(p), false, 'a new chat (snapshot without a suggestion) clears it');
  await p.page.context().close();
});

let pn = 0;
function proposal(name = 'run-tests'): SkillProposal {
  return {
    id: `p${pn++}`,
    name,
    description: 'Run the project tests the way this repository does',
    text: `---\nname: ${name}\ndescription: Run the project tests\n---\n\n1. <b>make</b> test\n2. read the failures`,
  };
}

test('B11 a proposed skill: name, description, SKILL.md as code (collapsed); an early click does nothing; after arming Accept and Discard answer', async () => {
  const p = await web.open();
  await p.host(chat());
  await p.stopClock(); // the page's timers wait for the test: however slow the machine, the presses below come early
  const a = proposal();
  await p.host({ type: 'skillProposals', proposals: [a] });
  const card = p.page.getByRole('group', { name: `Proposed skill: ${a.name}` });
  assert.equal(await card.locator('.proposal-title').textContent(), 'Proposed skill: run-tests');
  assert.equal(await card.locator('.proposal-description').textContent(), a.description);
  assert.equal(await card.locator('details').getAttribute('open'), null, 'the text starts collapsed');
  assert.equal(await card.locator('pre code').textContent(), a.text, 'the exact text, as code');
  assert.equal(await card.locator('b').count(), 0, 'no HTML from the proposal is rendered');
  const accept = p.page.getByRole('button', { name: 'Accept skill run-tests' });
  const discard = p.page.getByRole('button', { name: 'Discard skill run-tests' });
  assert.equal(await accept.getAttribute('aria-disabled'), 'true');
  await accept.click({ force: true });
  await accept.focus();
  await p.page.keyboard.press('Enter');
  assert.deepEqual(await ofType(p, 'skillProposalReply'), [], 'an early click or Enter does nothing');
  await p.page.clock.runFor(ARMED_AFTER_MS);
  assert.equal(await accept.getAttribute('aria-disabled'), null, 'armed');
  await accept.click();
  await accept.click({ force: true });
  assert.deepEqual(await ofType(p, 'skillProposalReply'), [{ type: 'skillProposalReply', id: a.id, accept: true }], 'answered once');
  // The host keeps the card (the accept failed) by sending the list again: it is answerable again.
  await p.host({ type: 'skillProposals', proposals: [a] });
  await discard.click();
  assert.deepEqual((await ofType(p, 'skillProposalReply')).slice(1), [{ type: 'skillProposalReply', id: a.id, accept: false }]);
  // A second proposal arriving does not re-arm or rebuild the first.
  const b = proposal('lint-fix');
  await p.host({ type: 'skillProposals', proposals: [a, b] });
  assert.equal(await p.page.locator('.proposal').count(), 2);
  assert.equal(await p.page.getByRole('button', { name: 'Discard skill lint-fix' }).getAttribute('aria-disabled'), 'true', 'the new card arms on its own');
  await p.host({ type: 'skillProposals', proposals: [] });
  assert.equal(await p.page.locator('#proposals').isVisible(), false);
  await p.page.context().close();
});

test('B10 a proposed skill never takes focus: typing, Enter and digits in the composer go to the draft; the card comes back with the snapshot', async () => {
  const p = await web.open();
  await p.host(chat());
  const box = p.page.locator('#prompt');
  await box.focus();
  await p.page.keyboard.type('next ');
  const a = proposal();
  await p.host({ type: 'skillProposals', proposals: [a] });
  await p.page.keyboard.type('1 2');
  await p.page.waitForTimeout(ARMED_AFTER_MS);
  await p.page.keyboard.type(' y');
  await p.page.keyboard.press('Shift+Enter');
  assert.equal(await focused(p), 'prompt');
  assert.equal(await box.inputValue(), 'next 1 2 y\n');
  assert.deepEqual(await ofType(p, 'skillProposalReply'), []);
  // Keyboard only: the SKILL.md summary opens with Enter, and Tab reaches Accept.
  await p.page.locator('.proposal summary').focus();
  await p.page.keyboard.press('Enter');
  assert.equal(await p.page.locator('.proposal details').getAttribute('open'), '');
  await p.page.keyboard.press('Tab');
  assert.equal(await focused(p), 'Accept skill run-tests');
  // Hide / reload: back from the snapshot; the host removing it while focused returns focus to the composer.
  await p.reload();
  await p.host(snapshot([], { skillProposals: [a] }));
  assert.equal(await p.page.locator('.proposal').count(), 1);
  await p.page.locator('.proposal summary').focus();
  await p.host({ type: 'skillProposals', proposals: [] });
  assert.equal(await focused(p), 'prompt', 'focus did not fall to <body>');
  await p.page.context().close();
});
