// Follow-ups in the panel against the real Python server over stdio, through src/followups.ts as
// the extension runs it. The server side (speculation, skill review) is built on other branches;
// each test first asks the server whether it has the method (an older server answers -32601) and
// then checks what the panel must do with that server:
//  - with follow-ups: a chat's qwen/suggestion is offered for that chat, its speculation reports
//    `ready`, and accepting it as a turn ends with the suggestion and its answer in the session;
//    without: accept is the friendly line with Retry, dismiss is quiet;
//  - proposed skills: accepting a proposal the server does not (or no longer) have is a readable
//    notice (the card stays when the server has the feature), and the server keeps answering.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { acceptSuggestionTurn, Followups, NO_SKILL_REVIEW_SUPPORT, NO_SUGGESTION_SUPPORT } from '../src/followups';
import type { FollowupUi } from '../src/followups';
import type { RequestType } from 'vscode-jsonrpc';
import type { Send } from '../src/rpc.generated';
import { requests } from '../src/rpc.generated';
import { Transcript } from '../src/transcript';
import { isMethodNotFound } from '../src/errors';
import { python, REPO_ROOT, startServer, tempDir, waitFor } from './support';
import type { Scripted, Server } from './support';
import type { SkillProposal, Suggestion } from '../src/shared/messages';
import type { ChatEvent, SuggestionNotice } from '../src/shared/protocol';

const SUGGESTION = 'Run the tests';

/**
 * A scripted model for follow-ups (tests/support/scripted_openai.py, driven inline): a request
 * without tools (the suggestion's side query) answers the suggestion as JSON; every other
 * request answers "Noted.".
 */
const FOLLOWUP_MODEL = `
import json, sys, threading
sys.path.insert(0, sys.argv[1])
from tests.support.scripted_openai import Reply, ScriptedOpenAI
def reply(body):
    if not body.get("tools"):
        return Reply(chunks=[json.dumps({"suggestion": sys.argv[2]})])
    return Reply(chunks=["Noted."])
server = ScriptedOpenAI(0, default=reply)
server.start()
print(server.base_url, flush=True)
threading.Event().wait()
`;

let scripted: Scripted;
const servers: Server[] = [];

before(async () => {
  const proc = spawn(python(), ['-c', FOLLOWUP_MODEL, REPO_ROOT, SUGGESTION], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`scripted follow-up model exited ${code}`)));
  });
  scripted = { baseUrl: line.trim(), proc, stop: () => proc.kill() };
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  scripted.stop();
});

/** Edits without asking and speculation on (off by default, as Qwen Code 0.24.4's ui.enableSpeculation); memory off keeps the model's queue to the turn. */
const OPTIONS = { tools: { approvalMode: 'auto-edit' }, followup: { speculate: true }, memory: { enabled: false, autoExtract: false, autoDream: false } };

async function open(): Promise<{ s: Server; send: Send }> {
  const s = await startServer(tempDir('qwen-ws-'), scripted.baseUrl, OPTIONS);
  servers.push(s);
  return { s, send: (type, params) => s.conn.sendRequest(type, params) };
}

/** Whether the server has `method`: an older one answers -32601; any other answer (an unknown id) means it has it. */
async function has<P>(send: Send, type: RequestType<P, unknown, void>, params: P): Promise<boolean> {
  try {
    await send(type, params);
    return true;
  } catch (err) {
    return !isMethodNotFound(err);
  }
}

class RecordingUi implements FollowupUi {
  sessionId: string | undefined;
  chips: (Suggestion | null)[] = [];
  lists: SkillProposal[][] = [];
  notices: string[] = [];
  chat() {
    return { sessionId: this.sessionId, running: false };
  }
  suggestion(s: Suggestion | null): void {
    this.chips.push(s);
  }
  proposals(list: SkillProposal[]): void {
    this.lists.push(list);
  }
  notice(text: string): void {
    this.notices.push(text);
  }
  skillSaved(): void {}
}

test('follow-ups with the real server: offered for the chat, ready after its speculation, accepted as a turn in the session — or, on an older server, the friendly line with Retry', async () => {
  const { s, send } = await open();
  const ui = new RecordingUi();
  const f = new Followups(send, ui);
  const transcript = new Transcript();
  s.listeners.push((method, params) => {
    if (method === 'qwen/suggestion') f.onSuggestion(params as SuggestionNotice);
    if (method === 'qwen/chatEvent') transcript.apply(params as ChatEvent);
  });
  transcript.begin('what does f return?');
  const r = await send(requests.chat, { prompt: 'what does f return?' });
  transcript.end({ sessionId: r.sessionId, text: r.text });
  ui.sessionId = r.sessionId;
  assert.equal(r.text, 'Noted.');

  if (!(await has(send, requests.suggestionDismiss, { suggestionId: 'no-such-suggestion' }))) {
    // An older server: nothing to offer; an accept (a chip from before a server downgrade) is the friendly line.
    const [, answer] = transcript.begin(SUGGESTION);
    const outcome = await acceptSuggestionTurn(send, 'g1');
    assert.deepEqual(outcome, { error: { kind: 'unsupported', message: NO_SUGGESTION_SUPPORT, actions: ['retry'] } });
    assert.equal(transcript.end(outcome)!.id, answer.id);
    f.onSuggestion({ sessionId: r.sessionId, suggestionId: 'g1', text: SUGGESTION });
    f.dismiss('g1'); // refused with -32601: quiet
    assert.deepEqual(ui.notices, []);
    const again = await send(requests.chat, { prompt: 'still there?', sessionId: r.sessionId });
    assert.equal(again.text, 'Noted.', 'the server keeps answering');
    return;
  }

  // The suggestion for this chat, then its speculation's result.
  const offered = await waitFor(() => f.suggestion, 'qwen/suggestion');
  assert.equal(offered.text, SUGGESTION);
  await waitFor(() => f.suggestion?.ready, 'the speculation to be ready');
  const taken = f.take(offered.id)!;
  assert.equal(ui.chips.at(-1), null, 'the chip went on accept');
  transcript.begin(taken.text);
  const outcome = await acceptSuggestionTurn(send, taken.id);
  assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
  transcript.end(outcome);
  const tail = transcript.messages.slice(-2).map((m) => [m.role, m.text]);
  assert.deepEqual(tail, [['user', SUGGESTION], ['assistant', 'Noted.']], 'the accepted turn is in the chat, and in the session when it was applied');
  const resumed = await send(requests.sessionsResume, { sessionId: r.sessionId });
  assert.deepEqual(resumed.messages.slice(-2).map((m) => [m.role, m.text]), tail, 'the session has the turn');
  // Accepting the same id again is refused by the server; the line offers Retry.
  const twice = await acceptSuggestionTurn(send, taken.id);
  assert.ok(twice.error && twice.error.actions.includes('retry') && !/Traceback/.test(twice.error.message), JSON.stringify(twice));
});

test('proposed skills with the real server: accepting a proposal it does not have is a readable notice; the server keeps answering', async () => {
  const { send } = await open();
  const ui = new RecordingUi();
  const f = new Followups(send, ui);
  const supported = await has(send, requests.skillProposalDiscard, { proposalId: 'no-such-proposal' });
  f.onSkillProposed({ proposalId: 'no-such-proposal', name: 'run-tests', description: 'Run the tests', text: '---\nname: run-tests\n---\n' });
  await f.answerProposal('no-such-proposal', true);
  assert.equal(ui.notices.length, 1);
  if (supported) {
    assert.match(ui.notices[0], /^Skill run-tests was not saved: \S/);
    assert.ok(!/Traceback/.test(ui.notices[0]));
    assert.equal(f.proposals.length, 1, 'the card stays: it can still be discarded');
    await f.answerProposal('no-such-proposal', false);
    assert.deepEqual(f.proposals, []);
  } else {
    assert.equal(ui.notices[0], NO_SKILL_REVIEW_SUPPORT);
    assert.deepEqual(f.proposals, []);
  }
  const list = await send(requests.skillsList, {});
  assert.ok(Array.isArray(list.skills), 'the server keeps answering');
});
