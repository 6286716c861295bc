// The panel's set-up, host side and pure: the model-less and server-down errors name the
// extension's fixes, numeric settings are unset by default (the model's own) and a cleared value
// is noticed so the server can be restarted without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describeError, NO_MODEL_MESSAGE } from '../src/errors';
import { buildServerSettings, droppedKeys } from '../src/settings';
import { EXT_ROOT } from './support';

const manifest = JSON.parse(readFileSync(path.join(EXT_ROOT, 'package.json'), 'utf8'));

test('errors: no model names the extension\'s settings, not the server\'s, and offers Set up model, Set API key and Retry', () => {
  const server = 'No model is configured: the model name (OPENAI_MODEL, or model.name in settings) and the base URL (OPENAI_BASE_URL, or model.baseUrl in settings) are missing.';
  const e = describeError({ code: -31001, message: server, data: { kind: 'config' } });
  assert.equal(e.message, NO_MODEL_MESSAGE);
  assert.match(e.message, /qwen\.model\.baseUrl.*qwen\.model\.name/);
  assert.doesNotMatch(e.message, /OPENAI_|model\.apiKey/);
  assert.deepEqual(e.actions, ['configureModel', 'setApiKey', 'retry']);
});

test('errors: a server that was not found offers its path; one that crashed offers a restart only', () => {
  const missing = describeError(new Error('Client is not running'), { message: 'qwen.server.path is set to "/x", which is not an executable file.', missing: true });
  assert.equal(missing.kind, 'server_down');
  assert.match(missing.message, /^The qwen-lsp server is not running: qwen\.server\.path is set to "\/x"/);
  assert.deepEqual(missing.actions, ['setServerPath', 'restartServer', 'showLog']);
  const crashed = describeError(new Error('Client is not running'), { message: 'It stopped 4 times in 3 minutes.', missing: false });
  assert.deepEqual(crashed.actions, ['restartServer', 'showLog']);
  assert.deepEqual(describeError(new Error('Client is not running')).actions, ['restartServer', 'showLog'], 'no known cause: as before');
  assert.deepEqual(describeError({ message: 'x', data: { kind: 'auth' } }, { message: 'm', missing: true }).kind, 'auth', 'only a down server uses the cause');
});

test('settings: the numeric model settings are unset by default (null, no error in the Settings editor) and unset is not sent', () => {
  const props = manifest.contributes.configuration.properties as Record<string, Record<string, unknown>>;
  for (const key of ['qwen.model.contextWindow', 'qwen.model.maxOutputTokens', 'qwen.compression.threshold']) {
    assert.equal(props[key].default, null, `${key} defaults to null (the model's own)`);
    assert.ok(Array.isArray(props[key].type) && (props[key].type as string[]).includes('null'), `${key} accepts null`);
  }
  // What VS Code reports for a key cleared in the Settings editor: null, which means "not set".
  assert.deepEqual(buildServerSettings((k) => (k === 'model.contextWindow' ? { globalValue: null } : k === 'model.maxOutputTokens' ? { globalValue: 4096 } : undefined)), {
    model: { maxOutputTokens: 4096 },
  });
  const commands = (manifest.contributes.commands as { command: string }[]).map((c) => c.command);
  assert.ok(commands.includes('qwen.configureModel') && commands.includes('qwen.setServerPath'), 'the set-up commands are contributed');
});

test('settings: a key the server started with and that is now unset is reported (a pull cannot unset it)', () => {
  const before = { model: { name: 'm', contextWindow: 32768 }, memory: { enabled: false }, folderTrust: false };
  assert.deepEqual(droppedKeys(before, before), []);
  assert.deepEqual(droppedKeys(before, { model: { name: 'other', contextWindow: 1000 }, memory: { enabled: true }, folderTrust: false }), [], 'changed values are pulled');
  assert.deepEqual(droppedKeys(before, { model: { name: 'm' } }), ['model.contextWindow', 'memory.enabled', 'folderTrust']);
  assert.deepEqual(droppedKeys({}, { model: { name: 'new' } }), [], 'a newly set key is pulled');
});
