// qwen/permission over JSON-RPC. With the real Python server: the client initialises
// with the capabilities the extension declares (the StaticFeature plus what vscode-languageclient
// declares for workspace/applyEdit); a scripted model calls `edit`; the server asks; the host's
// PermissionBroker answers through the card; the edit arrives as workspace/applyEdit and equals the
// diff editor's "after" (src/unifiedDiff.ts over the server's real diff); a cancelled turn
// withdraws the question. Over a plain connection pair: the handler answers allow / deny with a reason,
// and $/cancelRequest (the server withdrawing) removes the card and closes the diff.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { CancellationTokenSource, createMessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import type { ClientCapabilities } from 'vscode-languageclient/node';
import { startEditingModel, startServer, tempDir, waitFor } from './support';
import type { Scripted, Server } from './support';
import { PermissionBroker } from '../src/permission';
import type { PermissionUi } from '../src/permission';
import { qwenCapabilitiesFeature } from '../src/qwenCapabilities';
import { applyUnifiedDiff } from '../src/unifiedDiff';
import { Transcript } from '../src/transcript';
import type { ApprovalRequest } from '../src/shared/messages';
import type { ChatEvent, ChatResult, PermissionParams } from '../src/shared/protocol';

const ORIGINAL = 'def f():\n    return 1\n';
const servers: Server[] = [];
const scripteds: Scripted[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const s of scripteds) s.stop();
});

/** What the extension declares in initialize: vscode-languageclient's workspace-edit support plus the qwen feature. */
function extensionCapabilities(): ClientCapabilities {
  const caps: ClientCapabilities = {
    workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] } },
  };
  qwenCapabilitiesFeature.fillClientCapabilities(caps);
  return caps;
}

class RecordingUi implements PermissionUi {
  cards: (ApprovalRequest | null)[] = [];
  diffs: PermissionParams[] = [];
  closed = 0;
  card(r: ApprovalRequest | null): void {
    this.cards.push(r);
  }
  async openDiff(params: PermissionParams) {
    this.diffs.push(params);
    return { close: () => void this.closed++ };
  }
  get shown(): ApprovalRequest | null | undefined {
    return this.cards[this.cards.length - 1];
  }
}

/** Applies a WorkspaceEdit's single whole-file text edit to `before` (what VS Code does with it). */
function applyWorkspaceEdit(before: string, edit: any): string {
  const changes = edit.documentChanges ?? Object.values(edit.changes ?? {}).map((edits) => ({ edits }));
  const edits = changes.flatMap((c: any) => c.edits ?? []);
  assert.equal(edits.length, 1, 'one text edit');
  const lines = before.split('\n');
  const { start, end } = edits[0].range;
  assert.deepEqual(start, { line: 0, character: 0 });
  assert.equal(end.line, lines.length - 1, 'the edit covers the whole text');
  return edits[0].newText;
}

async function editSetup() {
  const ws = tempDir('qwen-perm-ws-');
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  mkdirSync(path.join(ws, '.git'));
  const target = path.join(ws, 'src', 'x.py');
  writeFileSync(target, ORIGINAL);
  const log = path.join(tempDir('qwen-perm-log-'), 'requests.jsonl');
  const model = await startEditingModel(target, [{ old: 'return 1', new: 'return 2' }], log);
  scripteds.push(model);
  const s = await startServer(ws, model.baseUrl, { tools: { approvalMode: 'default' } }, extensionCapabilities() as Record<string, unknown>);
  servers.push(s);
  assert.ok(serverAsks(s), 'the server advertises permissionRequests');
  const applied: any[] = [];
  s.conn.onRequest('workspace/applyEdit', (p: any) => {
    applied.push(p.edit);
    return { applied: true };
  });
  const offeredTools = () =>
    readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => ((JSON.parse(l).tools ?? []) as any[]).map((t) => t.function.name));
  return { ws, target, s, applied, offeredTools };
}

const serverAsks = (s: Server) => s.initializeResult?.capabilities?.experimental?.qwen?.permissionRequests === true;

test('edit with the real server: asked through qwen/permission, Allow on the card, applied via workspace/applyEdit as the diff editor showed it', async () => {
  const { target, s, applied, offeredTools } = await editSetup();
  const ui = new RecordingUi();
  const broker = new PermissionBroker(ui);
  const asked: PermissionParams[] = [];
  s.conn.onRequest('qwen/permission', (p: PermissionParams, token) => {
    asked.push(p);
    const answer = broker.ask(p, token);
    // The user clicks Allow once it is on: when the diff editor has the change open.
    void waitFor(() => (ui.shown && !ui.shown.hold ? ui.shown : undefined), 'Allow on').then((card) => broker.reply(card.id, 'allow'));
    return answer;
  });
  const t = new Transcript();
  t.begin('make f return 2');
  s.listeners.push((m, ev: ChatEvent) => m === 'qwen/chatEvent' && void t.apply(ev));
  const r: ChatResult = await s.conn.sendRequest('qwen/chat', { prompt: 'make f return 2' });
  assert.equal(r.finishReason, 'stop');
  assert.ok(offeredTools()[0].includes('edit'), 'the model is offered edit');
  assert.equal(asked.length, 1, 'asked once');
  const p = asked[0];
  assert.equal(p.tool, 'edit');
  assert.equal(p.toolCallId, 'e0');
  assert.equal(p.sessionId, r.sessionId);
  assert.equal(p.turnId, r.turnId);
  assert.equal(p.path, target);
  assert.deepEqual(ui.diffs.map((d) => d.toolCallId), ['e0'], 'the diff editor was opened');
  assert.equal(ui.shown, null, 'the card is gone after the answer');
  assert.equal(ui.closed, 1, 'and the diff closed');
  const proposed = applyUnifiedDiff(ORIGINAL, p.diff!);
  assert.equal(proposed, 'def f():\n    return 2\n', "the diff editor's after");
  assert.equal(applied.length, 1, 'one workspace/applyEdit');
  assert.equal(applyWorkspaceEdit(ORIGINAL, applied[0]), proposed, 'the applied edit is what the user saw');
  assert.equal(readFileSync(target, 'utf8'), ORIGINAL, 'the server wrote nothing itself');
  const card = t.messages[1].tools?.find((c) => c.id === 'e0');
  assert.equal(card?.name, 'edit');
  assert.equal(card?.decision, 'allow', 'the tool card says it was allowed');
  assert.equal(card?.isError, false);
});

test('edit with the real server: a turn cancelled while the card waits withdraws it — card removed, diff closed, nothing applied', async () => {
  const { target, s, applied } = await editSetup();
  const ui = new RecordingUi();
  const broker = new PermissionBroker(ui);
  let asked = 0;
  s.conn.onRequest('qwen/permission', (p: PermissionParams, token) => {
    asked++;
    return broker.ask(p, token); // nobody answers
  });
  const cts = new CancellationTokenSource();
  const chat = s.conn.sendRequest('qwen/chat', { prompt: 'make f return 2' }, cts.token).then(
    (r) => r as ChatResult,
    (e) => e as ResponseError<unknown>,
  );
  await waitFor(() => ui.shown, 'the permission card');
  assert.equal(ui.diffs.length, 1);
  cts.cancel();
  const r = await chat;
  assert.ok(r instanceof ResponseError ? r.code === -32800 : r.finishReason === 'cancelled', 'the turn was cancelled');
  assert.equal(asked, 1);
  await waitFor(() => ui.shown === null, 'the card removed by $/cancelRequest');
  assert.equal(ui.closed, 1, 'the diff closed');
  assert.equal(broker.current, undefined);
  assert.equal(applied.length, 0);
  assert.equal(readFileSync(target, 'utf8'), ORIGINAL);
});

/** Two vscode-jsonrpc connections back to back: `server` sends, `client` answers with the broker. */
function connectionPair() {
  const up = new PassThrough();
  const down = new PassThrough();
  const server = createMessageConnection(new StreamMessageReader(up), new StreamMessageWriter(down));
  const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
  const ui = new RecordingUi();
  const broker = new PermissionBroker(ui);
  client.onRequest('qwen/permission', (p: PermissionParams, token) => broker.ask(p, token));
  server.listen();
  client.listen();
  return { server, client, ui, broker, dispose: () => (server.dispose(), client.dispose()) };
}

const EDIT: PermissionParams = {
  sessionId: 's1',
  turnId: 't1',
  toolCallId: 'e1',
  tool: 'edit',
  title: 'Edit src/x.py',
  path: '/ws/src/x.py',
  diff: '--- a/src/x.py\n+++ b/src/x.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n',
};

test('handler over JSON-RPC: the card answers Allow always / Deny with a reason; a shell command opens no diff', async () => {
  const pair = connectionPair();
  try {
    const first = pair.server.sendRequest('qwen/permission', EDIT);
    await waitFor(() => pair.ui.shown && !pair.ui.shown.hold, 'card, its diff open');
    assert.equal(pair.ui.diffs.length, 1);
    pair.broker.reply(pair.ui.shown!.id, 'allowAlways');
    assert.deepEqual(await first, { decision: 'allowAlways' });
    const shell = pair.server.sendRequest('qwen/permission', { ...EDIT, toolCallId: 'c1', tool: 'run_shell_command', title: 'Run a shell command', path: undefined, diff: undefined, command: 'make' });
    await waitFor(() => pair.ui.shown, 'card');
    assert.equal(pair.ui.shown!.detail, '$ make');
    assert.equal(pair.ui.diffs.length, 1, 'no diff editor for a command');
    pair.broker.reply(pair.ui.shown!.id, 'deny', 'not now');
    assert.deepEqual(await shell, { decision: 'deny', reason: 'not now' });
  } finally {
    pair.dispose();
  }
});

test('handler over JSON-RPC: $/cancelRequest from the server removes the card and closes the diff', async () => {
  const pair = connectionPair();
  try {
    const cts = new CancellationTokenSource();
    const asked = pair.server.sendRequest('qwen/permission', EDIT, cts.token).catch((e) => e);
    await waitFor(() => pair.ui.shown, 'card');
    cts.cancel();
    await waitFor(() => pair.ui.shown === null, 'card removed');
    assert.equal(pair.ui.closed, 1);
    await asked;
  } finally {
    pair.dispose();
  }
});
