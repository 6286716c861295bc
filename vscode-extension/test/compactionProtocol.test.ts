// "Compact Conversation" against the real Python server over stdio, through src/compaction.ts as
// the extension runs it. A server with compaction: work-done progress "Compressing conversation
// history…" while it runs (the client declares window.workDoneProgress, as vscode-languageclient
// does), a result worded for the panel, qwen/contextStatus afterwards for the meter, and the chat
// going on after it. A server without it answers -32601, which becomes the friendly line.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { compactSession, NO_COMPACTION_SUPPORT } from '../src/compaction';
import type { Send } from '../src/rpc.generated';
import { meterView } from '../src/meter';
import { Transcript } from '../src/transcript';
import { startScripted, startServer, tempDir, waitFor } from './support';
import type { Scripted, Server } from './support';
import type { ChatEvent, ChatResult, ContextStatus } from '../src/shared/protocol';

const REPLY = 'Noted.';
let scripted: Scripted;
const servers: Server[] = [];

before(async () => {
  scripted = await startScripted(REPLY);
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  scripted.stop();
});

const PROGRESS_TITLE = 'Compressing conversation history…';

interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
}

/**
 * $/progress values per token, in arrival order. vscode-jsonrpc routes $/progress to handlers
 * registered per token (the language client's ProgressPart) and reports the rest as unhandled.
 */
function recordProgress(s: Server): () => ProgressValue[][] {
  const byToken = new Map<string | number, ProgressValue[]>();
  s.conn.onUnhandledProgress((p) => {
    const list = byToken.get(p.token) ?? [];
    list.push(p.value as ProgressValue);
    byToken.set(p.token, list);
  });
  return () => [...byToken.values()];
}

const statuses = (s: Server, sessionId: string): ContextStatus[] =>
  s.notifications.filter((n) => n.method === 'qwen/contextStatus' && n.params.sessionId === sessionId).map((n) => n.params);

test('qwen/compress: progress while it runs, a worded result, the meter updated, the chat goes on — or the friendly -32601 line', async () => {
  const s = await startServer(tempDir('qwen-ws-'), scripted.baseUrl, {}, { window: { workDoneProgress: true } });
  servers.push(s);
  const progress = recordProgress(s);
  const send: Send = (type, params) => s.conn.sendRequest(type, params);
  // A conversation long enough to summarise: several turns with sizeable prompts.
  let sessionId: string | undefined;
  for (let i = 0; i < 4; i++) {
    const prompt = `Step ${i}: ${'please review the module and list what to change; '.repeat(40)}`;
    const r: ChatResult = await s.conn.sendRequest('qwen/chat', { prompt, ...(sessionId ? { sessionId } : {}) });
    sessionId = r.sessionId;
  }
  assert.ok(sessionId);
  await waitFor(() => statuses(s, sessionId!).length >= 4, 'a contextStatus per turn');
  const seenBefore = s.notifications.length;
  const meterBefore = statuses(s, sessionId).at(-1)!;

  const full = await compactSession(send, sessionId, 'full');
  if (full.text === NO_COMPACTION_SUPPORT) {
    // Today's server: one friendly line, nothing else happened, and the chat is untouched.
    assert.equal(full.tone, 'info');
    assert.equal(full.compacted, false);
    assert.equal(progress().length, 0, 'no progress was started');
    const after: ChatResult = await s.conn.sendRequest('qwen/chat', { prompt: 'still there?', sessionId });
    assert.equal(after.text, REPLY);
    return;
  }

  // A server with compaction.
  // Four long prompts answered "Noted." and summarised as "Noted.": the history shrinks.
  assert.equal(full.compacted, true, `qwen/compress did not compact: ${full.text}`);
  const [before, after] = /^Compacted: ([\d,]+) → ([\d,]+) tokens\. Your conversation stays in this panel; only the model’s copy was summarized\.$/
    .exec(full.text)!
    .slice(1)
    .map((n) => Number(n.replace(/,/g, '')));
  assert.ok(after < before, full.text);
  // The server starts and ends its progress without holding up the answer, so it may trail it.
  const compressing = (): ProgressValue[][] => progress().filter((v) => v[0]?.kind === 'begin' && v[0].title === PROGRESS_TITLE);
  const run = await waitFor(() => compressing().find((v) => v.some((x) => x.kind === 'end')), `work-done progress "${PROGRESS_TITLE}" begun and ended`);
  assert.equal(compressing().length, 1, 'one progress for one compaction');
  assert.ok(run.at(-1)!.message, `the progress ends with the outcome (${run.at(-1)!.message})`);
  const status = await waitFor(
    () => s.notifications.slice(seenBefore).find((n) => n.method === 'qwen/contextStatus' && n.params.sessionId === sessionId)?.params as ContextStatus,
    'qwen/contextStatus after the compaction',
  );
  assert.equal(status.promptTokens, after, 'the meter shows the size the result line names');
  assert.ok(status.promptTokens < meterBefore.promptTokens && status.percentLeft >= meterBefore.percentLeft);
  assert.match(meterView(status).text, /^\$\(dashboard\) Qwen \d+% left$/);
  const fast = await compactSession(send, sessionId, 'fast');
  assert.match(fast.text, /^(Compacted \(fast\)|Nothing to compact yet)/, fast.text);
  const next: ChatResult = await s.conn.sendRequest('qwen/chat', { prompt: 'and now?', sessionId });
  assert.equal(next.text, REPLY, 'the chat continues after compaction');
});

test('qwen/compress for a session that does not exist: a failure line that says nothing was lost (or the -32601 line)', async () => {
  const s = await startServer(tempDir('qwen-ws-'), scripted.baseUrl);
  servers.push(s);
  const outcome = await compactSession((type, params) => s.conn.sendRequest(type, params), 'no-such-session', 'full');
  assert.equal(outcome.compacted, false);
  if (outcome.text === NO_COMPACTION_SUPPORT) return;
  assert.equal(outcome.tone, 'error');
  assert.match(outcome.text, /^Compaction failed: .+ Nothing was lost: the conversation and the model’s history are unchanged\.$/);
});

test('a turn past the auto threshold compacts first: its status chat event becomes a note on the answer (none on a server without compaction)', async () => {
  // A small window (auto at 0.7 of it, 3,500 tokens) that a few long turns fill.
  const s = await startServer(tempDir('qwen-ws-'), scripted.baseUrl, { model: { contextWindow: 5000 } });
  servers.push(s);
  const supported = await s.conn.sendRequest('qwen/compress', { sessionId: 'probe' }).then(
    () => true,
    (err: { code?: number }) => err.code !== -32601,
  );
  let sessionId: string | undefined;
  const notes: string[] = [];
  for (let i = 0; i < 8 && !notes.length; i++) {
    const t = new Transcript();
    t.begin(`turn ${i}`);
    const listener = (m: string, ev: ChatEvent) => m === 'qwen/chatEvent' && void t.apply(ev);
    s.listeners.push(listener);
    const prompt = `Turn ${i}: ${'describe the module layout in detail, file by file; '.repeat(30)}`;
    const r: ChatResult = await s.conn.sendRequest('qwen/chat', { prompt, ...(sessionId ? { sessionId } : {}) });
    s.listeners.splice(s.listeners.indexOf(listener), 1);
    sessionId = r.sessionId;
    const answer = t.end({ text: r.text })!;
    assert.equal(answer.text, REPLY, 'a note is never part of the answer');
    notes.push(...(answer.notes ?? []));
  }
  const level = statuses(s, sessionId!).map((c) => c.level);
  if (!supported) {
    assert.ok(level.includes('auto') || level.includes('hard'), `the window filled up (levels ${level.join(', ')})`);
    assert.deepEqual(notes, [], 'no compaction, no notes');
    return;
  }
  assert.equal(notes.length, 1, `one turn compacted first and said so (levels ${level.join(', ')})`);
  assert.match(notes[0], /^Compressed the conversation history: [\d,]+ → [\d,]+ tokens\.$/);
});
