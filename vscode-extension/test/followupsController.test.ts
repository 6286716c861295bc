// ChatController's wiring of follow-ups and proposed skills (src/chatController.ts with the
// `vscode` API faked by fakeVscode.ts, a fake language client and a fake webview): qwen/suggestion and
// qwen/skillProposed reach the webview and its snapshot; accepting runs as a turn of the chat
// (applied → the transcript re-read from the session; not applied → the streamed turn); typing,
// a new chat and Retry; an older server.
import { executed, settings } from './fakeVscode';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseError } from 'vscode-jsonrpc/node';
import { ChatController } from '../src/chatController';
import { ChatRouter } from '../src/chat/router';
import { NO_SUGGESTION_SUPPORT } from '../src/followups';
import type { ServerManager } from '../src/server';
import type { HostToWebview, WebviewToHost } from '../src/shared/messages';
import type { ChatEvent, ChatResult } from '../src/shared/protocol';
import type * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';

type Answer = (params: any) => unknown;

/** The language client as ChatController uses it: notifications in, requests out (unknown methods: -32601). */
class FakeClient {
  readonly sent: [string, any][] = [];
  readonly answers: Record<string, Answer> = {};
  private readonly handlers = new Map<string, (p: unknown) => void>();
  /** Like the real client: a typed message object (rpc.generated.ts) or a method name. */
  onNotification(type: string | { method: string }, h: (p: unknown) => void) {
    this.handlers.set(typeof type === 'string' ? type : type.method, h);
    return { dispose() {} };
  }
  onRequest() {
    return { dispose() {} };
  }
  /** The editor-context tracker re-sends on a (re)start; this fake never changes state. */
  onDidChangeState() {
    return { dispose() {} };
  }
  isRunning(): boolean {
    return true;
  }
  async sendNotification(): Promise<void> {}
  async sendRequest(type: string | { method: string }, params: unknown) {
    const method = typeof type === 'string' ? type : type.method;
    this.sent.push([method, params]);
    const a = this.answers[method];
    if (!a) throw new ResponseError(-32601, `Unhandled method: ${method}`);
    return a(params);
  }
  notify(method: string, params: unknown): void {
    this.handlers.get(method)?.(params);
  }
  methods(): string[] {
    return this.sent.map(([m]) => m);
  }
}

class FakeWebview {
  posted: HostToWebview[] = [];
  private handler: ((m: WebviewToHost) => Promise<void>) | undefined;
  onDidReceiveMessage(h: (m: WebviewToHost) => Promise<void>) {
    this.handler = h;
    return { dispose() {} };
  }
  postMessage(m: HostToWebview) {
    this.posted.push(structuredClone(m)); // the host mutates its transcript afterwards
    return Promise.resolve(true);
  }
  say(m: WebviewToHost): Promise<void> {
    return this.handler!(m);
  }
  of<T extends HostToWebview['type']>(type: T): Extract<HostToWebview, { type: T }>[] {
    return this.posted.filter((m): m is Extract<HostToWebview, { type: T }> => m.type === type);
  }
}

function setup() {
  const client = new FakeClient();
  const server = { ready: async () => client, output: { show() {} } } as unknown as ServerManager;
  const context = { workspaceState: { get: () => undefined, update: async () => undefined } } as unknown as vscode.ExtensionContext;
  const chat = new ChatController(context, server);
  new ChatRouter(chat).bindClient(client as unknown as LanguageClient); // the window's notifications reach their chat through the router
  const view = new FakeWebview();
  chat.attach(view as unknown as vscode.Webview);
  return { client, chat, view };
}

const event = (turnId: string, seq: number, text: string): ChatEvent => ({ sessionId: 's1', turnId, seq, kind: 'text', text });

/** A first turn so the chat has session s1; qwen/chat streams one event, as the server does before answering. */
async function firstTurn(client: FakeClient, view: FakeWebview): Promise<void> {
  client.answers['qwen/chat'] = (p: { prompt: string }): ChatResult => {
    client.notify('qwen/chatEvent', event(`t-${p.prompt}`, 0, `Answer to ${p.prompt}`));
    return { sessionId: 's1', turnId: `t-${p.prompt}`, text: `Answer to ${p.prompt}`, finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 } };
  };
  await view.say({ type: 'ready' });
  await view.say({ type: 'send', prompt: 'add a test' });
}

test('controller: qwen/suggestion for the open chat reaches the webview and its snapshot; ready updates it; other chats do not', async () => {
  const { client, view } = setup();
  await firstTurn(client, view);
  client.notify('qwen/suggestion', { sessionId: 's1', suggestionId: 'g1', text: 'Run the tests' });
  client.notify('qwen/suggestion', { sessionId: 's1', suggestionId: 'g1', text: 'Run the tests', ready: true });
  client.notify('qwen/suggestion', { sessionId: 'elsewhere', suggestionId: 'g2', text: 'Other chat' });
  assert.deepEqual(view.of('suggestion'), [
    { type: 'suggestion', suggestion: { id: 'g1', text: 'Run the tests', ready: false } },
    { type: 'suggestion', suggestion: { id: 'g1', text: 'Run the tests', ready: true } },
  ]);
  await view.say({ type: 'ready' }); // the view was hidden and shown again, or reloaded
  assert.deepEqual(view.of('snapshot').at(-1)!.snapshot.suggestion, { id: 'g1', text: 'Run the tests', ready: true });
});

test('controller: accepting a suggestion that ran as a normal turn (applied: false) shows the streamed turn under the suggestion text', async () => {
  const { client, chat, view } = setup();
  await firstTurn(client, view);
  client.notify('qwen/suggestion', { sessionId: 's1', suggestionId: 'g1', text: 'Run the tests' });
  client.answers['qwen/suggestion/accept'] = () => {
    client.notify('qwen/chatEvent', event('t2', 0, 'All 12 '));
    client.notify('qwen/chatEvent', event('t2', 1, 'pass.'));
    return { applied: false, turnId: 't2' };
  };
  view.posted = [];
  await view.say({ type: 'acceptSuggestion', id: 'g1' });
  assert.deepEqual(client.sent.at(-1), ['qwen/suggestion/accept', { suggestionId: 'g1' }]);
  assert.deepEqual(view.of('suggestion'), [{ type: 'suggestion', suggestion: null }], 'the chip went first');
  const messages = view.of('message').map((m) => m.message);
  assert.equal(messages[0].role, 'user');
  assert.equal(messages[0].text, 'Run the tests');
  assert.equal(messages.at(-1)!.text, 'All 12 pass.', 'the streamed answer is kept as the final text');
  assert.equal(messages.at(-1)!.streaming, false);
  assert.deepEqual(view.of('running').map((m) => m.running), [true, false]);
  assert.deepEqual(chat.transcript.messages.slice(-2).map((m) => [m.role, m.text]), [['user', 'Run the tests'], ['assistant', 'All 12 pass.']]);
  assert.ok(!client.methods().includes('qwen/sessions/resume'), 'nothing to re-read');
  assert.deepEqual(executed.at(-1), ['setContext', 'qwen.chatRunning', false]);
  // The same id again (a double Tab, a stale view) sends nothing.
  await view.say({ type: 'acceptSuggestion', id: 'g1' });
  assert.equal(client.methods().filter((m) => m === 'qwen/suggestion/accept').length, 1);
});

test('controller: an applied speculative result (applied: true) is the turn the server replayed, tool card included; nothing is re-read', async () => {
  const { client, chat, view } = setup();
  await firstTurn(client, view);
  client.notify('qwen/suggestion', { sessionId: 's1', suggestionId: 'g1', text: 'Run the tests', ready: true });
  client.answers['qwen/suggestion/accept'] = () => {
    // The server replays the speculative turn's events under the accept's turn id before answering.
    client.notify('qwen/chatEvent', event('t2', 0, 'Running them. '));
    client.notify('qwen/chatEvent', { sessionId: 's1', turnId: 't2', seq: 1, kind: 'toolCall', tool: { id: 'c1', name: 'edit', args: { file_path: 'tests/test_x.py' } } });
    client.notify('qwen/chatEvent', { sessionId: 's1', turnId: 't2', seq: 2, kind: 'toolResult', text: 'Edited tests/test_x.py', tool: { id: 'c1', name: 'edit', decision: 'auto' } });
    client.notify('qwen/chatEvent', event('t2', 3, 'All 12 pass.'));
    return { applied: true, turnId: 't2' };
  };
  view.posted = [];
  await view.say({ type: 'acceptSuggestion', id: 'g1' });
  assert.deepEqual(client.sent.at(-1), ['qwen/suggestion/accept', { suggestionId: 'g1' }]);
  assert.ok(!client.methods().includes('qwen/sessions/resume'), 'no re-read: it would turn the tool card into text');
  const last = chat.transcript.messages.at(-1)!;
  assert.deepEqual(chat.transcript.messages.slice(-2).map((m) => [m.role, m.text]), [['user', 'Run the tests'], ['assistant', 'Running them. All 12 pass.']]);
  assert.deepEqual(last.tools?.map((t) => [t.name, t.decision]), [['edit', 'auto']]);
  assert.equal(last.streaming, false);
  assert.deepEqual(view.of('running').at(-1), { type: 'running', running: false });
});

test('controller: typing dismisses (qwen/suggestion/dismiss); a new chat dismisses; a sent prompt clears it without a dismiss', async () => {
  const { client, view } = setup();
  await firstTurn(client, view);
  client.answers['qwen/suggestion/dismiss'] = () => ({});
  client.notify('qwen/suggestion', { sessionId: 's1', suggestionId: 'g1', text: 'Run the tests' });
  await view.say({ type: 'dismissSuggestion', id: 'g1' });
  client.notify('qwen/suggestion', { sessionId: 's1', suggestionId: 'g2', text: 'Commit it' });
  await view.say({ type: 'send', prompt: 'something else' });
  client.notify('qwen/suggestion', { sessionId: 's1', suggestionId: 'g3', text: 'Open a PR' });
  await view.say({ type: 'newChat' });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(client.sent.filter(([m]) => m === 'qwen/suggestion/dismiss'), [
    ['qwen/suggestion/dismiss', { suggestionId: 'g1' }],
    ['qwen/suggestion/dismiss', { suggestionId: 'g3' }],
  ]);
  assert.equal(view.of('snapshot').at(-1)!.snapshot.suggestion, undefined, 'the new chat has no chip');
  assert.equal(view.of('suggestion').at(-1)!.suggestion, null);
});

test('controller: a proposed skill reaches the webview and its snapshot; Accept saves it, a notice opens it, the Skills view refreshes', async () => {
  const { client, chat, view } = setup();
  let refreshed = 0;
  chat.onSkillSaved = () => refreshed++;
  await view.say({ type: 'ready' });
  const text = '---\nname: run-tests\ndescription: Run the tests\n---\n\nmake test\n';
  client.notify('qwen/skillProposed', { proposalId: 'p1', name: 'run-tests', description: 'Run the tests', text });
  assert.deepEqual(view.of('skillProposals').at(-1)!.proposals, [{ id: 'p1', name: 'run-tests', description: 'Run the tests', text }]);
  await view.say({ type: 'ready' });
  assert.equal(view.of('snapshot').at(-1)!.snapshot.skillProposals?.length, 1, 'in the snapshot');
  client.answers['qwen/skillProposal/accept'] = () => ({ path: '/ws/.qwen/skills/run-tests/SKILL.md' });
  await view.say({ type: 'skillProposalReply', id: 'p1', accept: true });
  assert.deepEqual(client.sent.at(-1), ['qwen/skillProposal/accept', { proposalId: 'p1' }]);
  assert.deepEqual(view.of('skillProposals').at(-1)!.proposals, []);
  const notice = view.of('notices').at(-1)!.notices.at(-1)!;
  assert.equal(notice.text, 'Skill run-tests saved to .qwen/skills/run-tests/SKILL.md');
  assert.equal(notice.uri, 'file:///ws/.qwen/skills/run-tests/SKILL.md');
  assert.equal(notice.openLabel, 'Open skill');
  assert.equal(refreshed, 1);
});

test('controller: an older server (-32601 on accept) ends the turn with the friendly line; Retry sends the suggestion as a message, in place of the failed turn', async () => {
  const { chat, client, view } = setup();
  await firstTurn(client, view);
  client.notify('qwen/suggestion', { sessionId: 's1', suggestionId: 'g1', text: 'Run the tests' });
  view.posted = [];
  await view.say({ type: 'acceptSuggestion', id: 'g1' });
  const final = view.of('message').at(-1)!.message;
  assert.deepEqual(final.error, { kind: 'unsupported', message: NO_SUGGESTION_SUPPORT, actions: ['retry'] });
  assert.deepEqual(view.of('running').at(-1), { type: 'running', running: false });
  await view.say({ type: 'action', action: 'retry' });
  assert.deepEqual(client.sent.at(-1), ['qwen/chat', { prompt: 'Run the tests', sessionId: 's1', retry: true }], 'sent as a Retry: the server takes back a failed turn it recorded');
  const asked = chat.transcript.messages.filter((m) => m.role === 'user' && m.text === 'Run the tests');
  assert.equal(asked.length, 1, 'the prompt is shown once: the failed turn was taken back');
  assert.ok(!chat.transcript.messages.some((m) => m.error?.actions.includes('retry')), 'no failed turn with a Retry is left');
  const sent = client.sent.length;
  await view.say({ type: 'action', action: 'retry' });
  assert.equal(client.sent.length, sent, 'Retry on a turn that did not fail sends nothing');
});

test('controller: the mode picker writes qwen.tools.approvalMode; snapshots and changes show the mode in effect', async () => {
  settings.delete('tools.approvalMode');
  const { chat, view } = setup();
  await view.say({ type: 'ready' });
  assert.equal(view.of('snapshot').at(-1)!.snapshot.approvalMode, 'default');
  await view.say({ type: 'setApprovalMode', mode: 'auto' });
  assert.equal(settings.get('tools.approvalMode'), 'auto');
  chat.approvalModeChanged(); // what extension.ts calls when VS Code reports the change
  assert.deepEqual(view.of('approvalMode').at(-1), { type: 'approvalMode', mode: 'auto' });
  await view.say({ type: 'setApprovalMode', mode: 'sometimes' as never });
  assert.equal(settings.get('tools.approvalMode'), 'auto', 'an unknown mode is not written');
  settings.delete('tools.approvalMode');
});

test('controller: Retry of a failed message sends its attachments again (a pasted image is not dropped), and leaves the composer\'s new chips alone', async () => {
  const { client, view } = setup();
  await firstTurn(client, view);
  client.answers['qwen/attachments/paste'] = () => ({ path: '/home/u/.qwen/tmp/clipboard/clipboard-1-0.png', name: 'clipboard-1-0.png', bytes: 68 });
  await view.say({ type: 'pasteImage', data: 'iVBORw0KGgo=' });
  client.answers['qwen/chat'] = () => {
    throw new ResponseError(-32099, 'Nothing is listening at http://127.0.0.1:9/v1', { kind: 'connect' });
  };
  await view.say({ type: 'send', prompt: 'what is in this picture?' });
  const failed = client.sent.at(-1)![1] as { attachments?: unknown[] };
  assert.deepEqual(failed.attachments, [{ uri: 'file:///home/u/.qwen/tmp/clipboard/clipboard-1-0.png' }]);
  assert.ok(view.of('message').at(-1)!.message.error?.actions.includes('retry'), 'the failed turn offers Retry');
  client.answers['qwen/attachments/paste'] = () => ({ path: '/home/u/.qwen/tmp/clipboard/clipboard-2-0.png', name: 'clipboard-2-0.png', bytes: 68 });
  await view.say({ type: 'pasteImage', data: 'iVBORw0KGgo=' }); // a new chip for the next message
  client.answers['qwen/chat'] = (): ChatResult => ({ sessionId: 's1', turnId: 't-r', text: 'A cat.', finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 } });
  await view.say({ type: 'action', action: 'retry' });
  assert.deepEqual(client.sent.at(-1), [
    'qwen/chat',
    { prompt: 'what is in this picture?', sessionId: 's1', attachments: [{ uri: 'file:///home/u/.qwen/tmp/clipboard/clipboard-1-0.png' }], retry: true },
  ]);
  assert.deepEqual(view.of('attachments').at(-1)!.attachments.map((a) => a.label), ['clipboard-2-0.png'], 'the new chip stays for the next message');
});
