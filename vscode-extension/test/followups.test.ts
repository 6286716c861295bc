// Follow-ups on the host (src/followups.ts, what ChatController forwards qwen/suggestion,
// qwen/skillProposed and the webview's answers to), with a fake transport and a fake UI: which
// suggestions are offered, replaced, finished and dismissed; the accept as a turn (applied →
// the session re-read, not applied → what streamed, older server → a friendly line with Retry);
// proposed skills accepted, refused and discarded; an older server (-32601) staying quiet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseError } from 'vscode-jsonrpc/node';
import { acceptSuggestionTurn, Followups, MAX_PROPOSALS, MAX_SUGGESTION_CHARS, NO_SKILL_REVIEW_SUPPORT, NO_SUGGESTION_SUPPORT } from '../src/followups';
import type { FollowupUi } from '../src/followups';
import type { Send } from '../src/rpc.generated';
import type { SkillProposal, Suggestion } from '../src/shared/messages';
import type { SuggestionNotice } from '../src/shared/protocol';

/** A transport that records what was sent and answers from a table (a function to throw or compute); unknown methods are -32601. */
function recorder(answers: Record<string, unknown>): { send: Send; sent: [string, unknown][] } {
  const sent: [string, unknown][] = [];
  const send: Send = async ({ method }, params) => {
    sent.push([method, params]);
    const a = answers[method];
    if (typeof a === 'function') return (a as (p: unknown) => never)(params);
    if (a === undefined) throw new ResponseError(-32601, `Unhandled method ${method}`);
    return a as never;
  };
  return { send, sent };
}

class FakeUi implements FollowupUi {
  sessionId: string | undefined = 's1';
  running = false;
  chips: (Suggestion | null)[] = [];
  lists: SkillProposal[][] = [];
  notices: [string, string | undefined][] = [];
  saved = 0;
  chat() {
    return { sessionId: this.sessionId, running: this.running };
  }
  suggestion(s: Suggestion | null): void {
    this.chips.push(s);
  }
  proposals(list: SkillProposal[]): void {
    this.lists.push(list);
  }
  notice(text: string, path?: string): void {
    this.notices.push([text, path]);
  }
  skillSaved(): void {
    this.saved++;
  }
  get chip(): Suggestion | null | undefined {
    return this.chips[this.chips.length - 1];
  }
}

const note = (suggestionId: string, extra: Partial<SuggestionNotice> = {}): SuggestionNotice => ({ sessionId: 's1', suggestionId, text: 'Run the tests', ...extra });
const tick = () => new Promise((r) => setImmediate(r));

test('suggestion: shown for the open chat; the same id only updates ready; a new one replaces it; other chats, running turns and junk are ignored', () => {
  const ui = new FakeUi();
  const f = new Followups(recorder({}).send, ui);
  f.onSuggestion(note('a'));
  assert.deepEqual(ui.chip, { id: 'a', text: 'Run the tests', ready: false });
  assert.deepEqual(f.suggestion, ui.chip, 'a snapshot carries it');
  f.onSuggestion(note('a'));
  assert.equal(ui.chips.length, 1, 'the same notice again changes nothing');
  f.onSuggestion(note('a', { ready: true }));
  assert.deepEqual(ui.chip, { id: 'a', text: 'Run the tests', ready: true }, 'the ready marker');
  f.onSuggestion(note('b', { text: 'Commit it' }));
  assert.deepEqual(ui.chip, { id: 'b', text: 'Commit it', ready: false }, 'replaced');
  f.onSuggestion(note('a', { ready: true }));
  assert.equal(f.suggestion?.id, 'b', 'a late ready for the replaced id does not bring it back');
  const shown = ui.chips.length;
  f.onSuggestion(note('c', { sessionId: 'other' }));
  ui.running = true;
  f.onSuggestion(note('d'));
  ui.running = false;
  for (const junk of [null, {}, { sessionId: 's1', suggestionId: 'e' }, { sessionId: 's1', suggestionId: 'e', text: '   ' }, { sessionId: 1, suggestionId: 'e', text: 'x' }, { sessionId: 's1', suggestionId: 7, text: 'x' }]) {
    f.onSuggestion(junk as Partial<SuggestionNotice>);
  }
  assert.equal(ui.chips.length, shown, 'another chat, a running turn and malformed notices show nothing');
  f.onSuggestion(note('long', { text: 'x'.repeat(MAX_SUGGESTION_CHARS * 3) }));
  assert.equal(f.suggestion!.text.length, MAX_SUGGESTION_CHARS, 'a huge text is cut');
});

test('suggestion: take() hands over the one on show once; dismiss tells the server once; clear(true) dismisses, clear(false) does not; a late ready never revives', async () => {
  const ui = new FakeUi();
  const t = recorder({ 'qwen/suggestion/dismiss': {} });
  const f = new Followups(t.send, ui);
  f.onSuggestion(note('a'));
  assert.equal(f.take('zzz'), undefined, 'not the one on show');
  assert.deepEqual(f.take('a'), { id: 'a', text: 'Run the tests', ready: false });
  assert.equal(ui.chip, null, 'the chip goes');
  assert.equal(f.take('a'), undefined, 'accepted once');
  f.onSuggestion(note('a', { ready: true }));
  assert.equal(f.suggestion, undefined, 'the ready that follows an accept does not bring it back');
  f.onSuggestion(note('b'));
  f.dismiss('b');
  f.dismiss('b');
  f.onSuggestion(note('b', { ready: false }));
  assert.equal(f.suggestion, undefined, 'a dismissed id stays dismissed');
  f.onSuggestion(note('c'));
  f.clear(true); // a new chat
  f.onSuggestion(note('d'));
  f.clear(false); // a sent prompt: the server aborts on qwen/chat
  f.clear(true); // nothing on show: nothing sent
  await tick();
  assert.deepEqual(t.sent, [
    ['qwen/suggestion/dismiss', { suggestionId: 'b' }],
    ['qwen/suggestion/dismiss', { suggestionId: 'c' }],
  ]);
  assert.equal(ui.chip, null);
});

test('suggestion: an older server (-32601) is quiet: a refused dismiss changes nothing and throws nothing', async () => {
  const ui = new FakeUi();
  const t = recorder({});
  const f = new Followups(t.send, ui);
  f.onSuggestion(note('a'));
  f.dismiss('a');
  await tick();
  assert.deepEqual(t.sent, [['qwen/suggestion/dismiss', { suggestionId: 'a' }]]);
  assert.deepEqual(ui.notices, [], 'no notice for a dismiss');
  assert.equal(ui.chip, null);
});

test('accept as a turn: applied or not, what streamed is the answer (the server replays an applied turn as chat events); nothing is re-read', async () => {
  const applied = recorder({ 'qwen/suggestion/accept': { applied: true, turnId: 't9' } });
  assert.deepEqual(await acceptSuggestionTurn(applied.send, 'a'), {});
  assert.deepEqual(applied.sent, [['qwen/suggestion/accept', { suggestionId: 'a' }]], 'no qwen/sessions/resume: it would turn tool cards into text');
  const ran = recorder({ 'qwen/suggestion/accept': { applied: false, turnId: 't9' } });
  assert.deepEqual(await acceptSuggestionTurn(ran.send, 'a'), {});
  assert.deepEqual(ran.sent.map(([m]) => m), ['qwen/suggestion/accept']);
});

test('accept as a turn: -32601 is the friendly line with Retry; a cancelled accept is "cancelled"; other errors keep their kind and offer Retry', async () => {
  assert.deepEqual(await acceptSuggestionTurn(recorder({}).send, 'a'), { error: { kind: 'unsupported', message: NO_SUGGESTION_SUPPORT, actions: ['retry'] } });
  const cancelled = recorder({ 'qwen/suggestion/accept': () => { throw new ResponseError(-32800, 'Request cancelled'); } });
  assert.deepEqual(await acceptSuggestionTurn(cancelled.send, 'a'), { cancelled: true });
  const stale = recorder({ 'qwen/suggestion/accept': () => { throw new ResponseError(-32602, 'No suggestion a (it was dismissed or has expired).', { kind: 'bad_request' }); } });
  const r = await acceptSuggestionTurn(stale.send, 'a');
  assert.equal(r.error?.message, 'No suggestion a (it was dismissed or has expired).');
  assert.deepEqual(r.error?.actions, ['retry', 'configureModel', 'openSettings']);
  const auth = recorder({ 'qwen/suggestion/accept': () => { throw new ResponseError(-32001, 'bad key', { kind: 'auth' }); } });
  assert.deepEqual((await acceptSuggestionTurn(auth.send, 'a')).error?.actions, ['setApiKey', 'retry'], 'Retry is not added twice');
});

const proposed = (id: string, name = 'run-tests') => ({ proposalId: id, name, description: 'Run the tests', text: `---\nname: ${name}\ndescription: Run the tests\n---\n\nmake test\n` });

test('skill proposals: a card each (same id replaces, at most MAX_PROPOSALS, junk ignored); Accept saves, says where, refreshes the Skills view', async () => {
  const ui = new FakeUi();
  const t = recorder({ 'qwen/skillProposal/accept': { path: '/w/.qwen/skills/run-tests/SKILL.md' } });
  const f = new Followups(t.send, ui, (p) => p.replace('/w/', ''));
  f.onSkillProposed(proposed('p1'));
  assert.deepEqual(ui.lists.at(-1), [{ id: 'p1', name: 'run-tests', description: 'Run the tests', text: proposed('p1').text }]);
  f.onSkillProposed({ ...proposed('p1'), description: 'newer' });
  assert.deepEqual(f.proposals.map((p) => p.description), ['newer'], 'the same id replaces its card');
  for (const junk of [null, { proposalId: 'x' }, { proposalId: 'x', name: 'n' }, { proposalId: 'x', name: ' ', text: 't' }]) f.onSkillProposed(junk as never);
  assert.equal(f.proposals.length, 1);
  for (let i = 2; i <= MAX_PROPOSALS + 2; i++) f.onSkillProposed(proposed(`p${i}`, `s${i}`));
  assert.equal(f.proposals.length, MAX_PROPOSALS);
  assert.equal(f.proposals[0].id, 'p3', 'the oldest cards go first');
  f.onSkillProposed(proposed('keep'));
  await Promise.all([f.answerProposal('keep', true), f.answerProposal('keep', true)]);
  assert.deepEqual(t.sent, [['qwen/skillProposal/accept', { proposalId: 'keep' }]], 'a double click sends once');
  assert.ok(!f.proposals.some((p) => p.id === 'keep'), 'the card goes');
  assert.deepEqual(ui.notices, [['Skill run-tests saved to .qwen/skills/run-tests/SKILL.md', '/w/.qwen/skills/run-tests/SKILL.md']]);
  assert.equal(ui.saved, 1, 'the Skills view refreshes');
  await f.answerProposal('nope', true);
  assert.equal(t.sent.length, 1, 'an unknown id sends nothing');
});

test('skill proposals: a refused Accept keeps the card (shown again) and says why; Discard removes it whatever the server says; -32601 is the friendly line', async () => {
  const ui = new FakeUi();
  const t = recorder({
    'qwen/skillProposal/accept': () => { throw new ResponseError(-32602, 'A skill named run-tests already exists', { kind: 'bad_request' }); },
    'qwen/skillProposal/discard': () => { throw new ResponseError(-32603, 'disk full'); },
  });
  const f = new Followups(t.send, ui);
  f.onSkillProposed(proposed('p1'));
  const lists = ui.lists.length;
  await f.answerProposal('p1', true);
  assert.deepEqual(ui.notices, [['Skill run-tests was not saved: A skill named run-tests already exists', undefined]]);
  assert.equal(f.proposals.length, 1, 'kept');
  assert.equal(ui.lists.length, lists + 1, 'sent again so the card can be answered again');
  assert.equal(ui.saved, 0);
  await f.answerProposal('p1', false);
  assert.deepEqual(f.proposals, []);
  assert.deepEqual(t.sent.map(([m]) => m), ['qwen/skillProposal/accept', 'qwen/skillProposal/discard']);
  assert.equal(ui.notices.length, 1, 'a failed discard is quiet');
  const old = new FakeUi();
  const g = new Followups(recorder({}).send, old);
  g.onSkillProposed(proposed('p1'));
  await g.answerProposal('p1', true);
  assert.deepEqual(old.notices, [[NO_SKILL_REVIEW_SUPPORT, undefined]]);
  assert.deepEqual(g.proposals, [], 'nothing to keep: that server cannot save it');
});
