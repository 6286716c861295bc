// "Compact Conversation" without the vscode API (src/compaction.ts and the transcript's status
// lines): each qwen/compress answer in words, the -32601 fallback, endpoint errors, statuses this
// version does not know, and the server's status notes folded into the answer being written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseError } from 'vscode-jsonrpc/node';
import { compactErrorText, compactingText, compactResultText, compactSession, NO_COMPACTION_SUPPORT } from '../src/compaction';
import type { Send } from '../src/rpc.generated';
import { Transcript } from '../src/transcript';
import type { ChatEvent } from '../src/shared/protocol';

const KEPT = 'Your conversation stays in this panel; only the model’s copy was summarized.';
const UNCHANGED = 'Nothing was lost: the conversation and the model’s history are unchanged.';

test('compress result: compressed names both sizes and says the transcript is kept; fast says what it cleared', () => {
  assert.deepEqual(compactResultText({ status: 'compressed', tokensBefore: 48210, tokensAfter: 9877 }), {
    text: `Compacted: 48,210 → 9,877 tokens. ${KEPT}`,
    tone: 'info',
    compacted: true,
  });
  const fast = compactResultText({ status: 'compressed', tokensBefore: 1200, tokensAfter: 800 }, 'fast');
  assert.equal(fast.text, 'Compacted (fast): 1,200 → 800 tokens. Your conversation stays in this panel; only old tool output was cleared from the model’s copy.');
  assert.equal(fast.compacted, true);
  const noSizes = compactResultText({ status: 'compressed', tokensBefore: Number.NaN, tokensAfter: -3 });
  assert.equal(noSizes.text, `Compacted. ${KEPT}`, 'sizes that are not counts are left out, not printed as NaN');
});

test('compress result: noop and every failure status in words, with nothing lost; Qwen Code’s compression_failed_* spelling too', () => {
  assert.deepEqual(compactResultText({ status: 'noop', tokensBefore: 5120, tokensAfter: 5120 }), {
    text: 'Nothing to compact yet: the conversation is already small (5,120 tokens). Nothing was changed.',
    tone: 'info',
    compacted: false,
  });
  assert.equal(
    compactResultText({ status: 'noop', tokensBefore: 5120, tokensAfter: 5120 }, 'fast').text,
    'Nothing to compact yet: there is no old tool output to clear (5,120 tokens). Nothing was changed.',
  );
  const reasons: [string, string][] = [
    ['failed_empty_summary', 'the model returned an empty summary'],
    ['failed_inflated_token_count', 'the summary would have been larger than the conversation it replaces'],
    ['failed_token_count_error', 'the size of the summary could not be counted'],
    ['failed_output_truncated', 'the summary was cut off at the model’s output limit'],
    ['compression_failed_empty_summary', 'the model returned an empty summary'],
    ['compression_failed_inflated_token_count', 'the summary would have been larger than the conversation it replaces'],
    ['COMPRESSION_FAILED_TOKEN_COUNT_ERROR', 'the size of the summary could not be counted'],
  ];
  for (const [status, reason] of reasons) {
    assert.deepEqual(compactResultText({ status, tokensBefore: 100, tokensAfter: 100 }), { text: `Compaction failed: ${reason}. ${UNCHANGED}`, tone: 'warning', compacted: false }, status);
  }
});

test('compress result: an unknown status is shown readably (bounded, no markup) and never counted as compacted', () => {
  const future = compactResultText({ status: 'failed_quota_exhausted', tokensBefore: 10, tokensAfter: 10 });
  assert.equal(future.text, `Compaction failed: the server reported “quota exhausted”. ${UNCHANGED}`);
  const odd = compactResultText({ status: 'partially_done<script>', tokensBefore: 900, tokensAfter: 700 });
  assert.equal(odd.text, 'Compaction finished with an unfamiliar result (“partially_donescript”): 900 → 700 tokens. Your conversation stays in this panel.');
  assert.equal(odd.compacted, false);
  const long = compactResultText({ status: 'x'.repeat(5000) });
  assert.ok(long.text.length < 200, 'a huge status string is cut short');
  assert.match(compactResultText(undefined).text, /unfamiliar result \(“no status”\)/);
  assert.match(compactResultText({ status: 42 as unknown as string }).text, /“no status”/);
});

test('compress errors: -32601 is the friendly "cannot compact yet"; an endpoint failure says why and that nothing was lost', () => {
  assert.deepEqual(compactErrorText(new ResponseError(-32601, 'Unhandled method qwen/compress')), { text: NO_COMPACTION_SUPPORT, tone: 'info', compacted: false });
  assert.equal(NO_COMPACTION_SUPPORT, 'This server cannot compact yet (update qwen-lsp). Nothing was changed.');
  const endpoint = compactErrorText(new ResponseError(-32099, 'Compression failed; the history is unchanged. Nothing is listening at http://127.0.0.1:9/v1', { kind: 'connect' }));
  assert.deepEqual(endpoint, { text: `Compaction failed: Nothing is listening at http://127.0.0.1:9/v1. ${UNCHANGED}`, tone: 'error', compacted: false });
  const down = compactErrorText(new Error('Client is not running'));
  assert.match(down.text, /^Compaction failed: The qwen-lsp server is not running/);
  assert.equal(compactErrorText(new ResponseError(-32603, '', { kind: 'internal' })).text.startsWith('Compaction failed: '), true);
  assert.ok(compactErrorText(new Error('y'.repeat(10_000))).text.length < 450, 'a huge error message is cut short');
});

test('compactSession sends qwen/compress {sessionId, mode} and never throws, whatever the server answers', async () => {
  const sent: [string, unknown][] = [];
  const answering = (answer: () => unknown): Send => async ({ method }, params) => {
    sent.push([method, params]);
    return answer() as never;
  };
  const ok = await compactSession(answering(() => ({ status: 'compressed', tokensBefore: 48210, tokensAfter: 9877 })), 's1', 'full');
  assert.equal(ok.text, `Compacted: 48,210 → 9,877 tokens. ${KEPT}`);
  await compactSession(answering(() => ({ status: 'noop', tokensBefore: 1, tokensAfter: 1 })), 's2', 'fast');
  assert.deepEqual(sent, [
    ['qwen/compress', { sessionId: 's1', mode: 'full' }],
    ['qwen/compress', { sessionId: 's2', mode: 'fast' }],
  ]);
  const old = await compactSession(answering(() => { throw new ResponseError(-32601, 'Unhandled method qwen/compress'); }), 's1', 'full');
  assert.equal(old.text, NO_COMPACTION_SUPPORT);
  const nullAnswer = await compactSession(answering(() => null), 's1', 'full');
  assert.equal(nullAnswer.compacted, false);
});

test('compacting line: says what runs and that the composer stays usable', () => {
  assert.equal(compactingText('full'), 'Compacting the conversation (the model is summarizing it)… You can keep typing; a message sent now is answered after it.');
  assert.match(compactingText('fast'), /^Compacting the conversation \(fast: clearing old tool output\)…/);
});

const ev = (seq: number, kind: ChatEvent['kind'], extra: Partial<ChatEvent> = {}): ChatEvent => ({ sessionId: 's1', turnId: 't1', seq, kind, ...extra });

test('transcript: a status chat event (the turn compacted first) becomes a note on the answer; nothing else changes', () => {
  const t = new Transcript();
  const [, a] = t.begin('next question');
  const patch = t.apply(ev(0, 'status', { text: 'Compressed the conversation history: 48,210 → 9,877 tokens.' }));
  assert.deepEqual(patch, { op: 'note', id: a.id, text: 'Compressed the conversation history: 48,210 → 9,877 tokens.' });
  assert.equal(t.apply(ev(1, 'status', { text: '   ' })), undefined, 'an empty note is dropped');
  t.apply(ev(2, 'text', { text: 'Answer' }));
  const long = t.apply(ev(3, 'status', { text: 'z'.repeat(2000) }));
  assert.equal(long?.op === 'note' && long.text.length, 300, 'a note is one bounded line');
  const final = t.end({ text: 'Answer' })!;
  assert.equal(final.text, 'Answer', 'the note is not part of the answer text');
  assert.equal(final.notes?.length, 2);
});

test('transcript: a compaction status line is added after the conversation and settled in place; the messages stay', () => {
  const t = new Transcript();
  t.load({ sessionId: 's1', messages: [{ role: 'user', text: 'u' }, { role: 'assistant', text: 'a' }], promptTokens: 5 });
  const line = t.addStatus(compactingText('full'), { pending: true });
  assert.deepEqual(t.messages.map((m) => m.role), ['user', 'assistant', 'status']);
  assert.equal(line.pending, true);
  const settled = t.settleStatus(line.id, 'Compacted: 2 → 1 tokens.', 'info')!;
  assert.equal(settled.id, line.id);
  assert.equal(settled.pending, undefined);
  assert.deepEqual(t.messages.map((m) => m.text), ['u', 'a', 'Compacted: 2 → 1 tokens.'], 'the transcript is not cleared by compaction');
  assert.equal(t.settleStatus(t.messages[0].id, 'x', 'info'), undefined, 'only a status line is settled');
  const other = t.addStatus('Compacting…', { pending: true });
  t.reset();
  assert.equal(t.settleStatus(other.id, 'late', 'info'), undefined, 'a line cleared by New chat stays gone');
});
