// The linux-x64 .vsix on a machine with only a plain Python 3.11+ and no network: the packaged
// qwen-lsp.vsix unzipped (as `code --install-extension` lays it out), its bundled server started
// by bundled/launch.py with a fresh `python3 -m venv --without-pip` (nothing installed, no pip to
// fetch anything), inside a new network namespace (`unshare -n`) that has only loopback, where the
// scripted model (tests/support/scripted_openai.py) also runs. It must answer LSP initialize and
// one qwen/chat. Needs root (or unprivileged user namespaces) for unshare; skipped, saying so, without.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { EXT_ROOT, REPO_ROOT, python, startServer, tempDir } from '../test/support';
import type { Server } from '../test/support';

const VSIX = path.join(EXT_ROOT, 'qwen-lsp.vsix');
const SYSTEM_PYTHON = process.env.QWEN_BARE_PYTHON ?? '/usr/bin/python3';
const PORT = 8765; // free: the namespace is new
const REPLY = 'Offline and bundled: hello.';
let server: Server | undefined;

after(async () => {
  await server?.stop();
});

const netnsWorks = spawnSync('unshare', ['-n', '-p', '--fork', '--', 'true']).status === 0;

test('the linux-x64 .vsix starts its bundled server with a bare Python 3.11+ and no network, and answers qwen/chat', { timeout: 180_000, skip: netnsWorks ? false : 'unshare -n is not permitted here (needs root or user namespaces)' }, async () => {
  assert.ok(existsSync(VSIX), `build the .vsix first (npm run package): ${VSIX} is missing`);
  const root = tempDir('qwen-offline-');
  execFileSync(SYSTEM_PYTHON, ['-m', 'zipfile', '-e', VSIX, path.join(root, 'vsix')]);
  const ext = path.join(root, 'vsix', 'extension');
  assert.equal(JSON.parse(readFileSync(path.join(ext, 'bundled', 'libs', 'target.json'), 'utf8')).target, 'linux-x64');
  execFileSync(SYSTEM_PYTHON, ['-m', 'venv', '--without-pip', path.join(root, 'venv')]);
  const bare = path.join(root, 'venv', 'bin', 'python');
  const version = execFileSync(bare, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim();
  assert.ok(Number(version.split('.')[1]) >= 11, `this test needs Python 3.11+ at ${SYSTEM_PYTHON}, found ${version}`);
  // Nothing installed: neither the server's dependencies nor pip.
  for (const mod of ['qwen_lsp', 'pydantic', 'pygls', 'pip']) {
    assert.notEqual(spawnSync(bare, ['-c', `import ${mod}`]).status, 0, `${mod} must not be importable from the bare venv`);
  }
  const probe = spawnSync(bare, [path.join(ext, 'bundled', 'launch.py'), '--probe'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
  assert.equal(probe.status, 0, `launch.py --probe refused ${bare}: ${probe.stderr}`);
  // In the namespace: loopback up, the scripted model on 127.0.0.1:PORT (started from the
  // repository's test Python, which is not the server's), then the bundled server on this stdio.
  const script = [
    'set -e',
    'ip link set lo up',
    'test -z "$(ip -o route show)"', // no route anywhere: the only network is loopback
    `"$1" "$2" --port ${PORT} --reply "$3" > "$4" 2>/dev/null &`,
    'while [ ! -s "$4" ]; do sleep 0.05; done',
    '"$5" "$6" serve --stdio',
  ].join('\n');
  // A PID namespace too, whose first process is this sh: when it ends (or unshare is killed,
  // --kill-child), the kernel ends the scripted model with it.
  const args = ['-n', '-p', '--fork', '--kill-child', '--', 'sh', '-c', script, 'sh', python(), path.join(REPO_ROOT, 'tests', 'support', 'scripted_openai.py'), REPLY, path.join(root, 'url'), bare, path.join(ext, 'bundled', 'launch.py')];
  const env = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', PIP_NO_INDEX: '1', HTTP_PROXY: 'http://127.0.0.1:9', HTTPS_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1' };
  const workspace = tempDir('qwen-offline-ws-');
  server = await startServer(workspace, `http://127.0.0.1:${PORT}/v1`, {}, {}, { command: 'unshare', args, env });
  assert.equal(server.initializeResult.serverInfo.name, 'qwen-lsp');
  const pkg = JSON.parse(readFileSync(path.join(ext, 'package.json'), 'utf8'));
  assert.equal(server.initializeResult.serverInfo.version, pkg.version, 'the bundled server is built from the same commit as the extension');
  const r = await server.conn.sendRequest<{ text: string; finishReason: string }>('qwen/chat', { prompt: 'hello' });
  assert.equal(r.text, REPLY);
  assert.equal(r.finishReason, 'stop');
  // Every native library the .vsix carries loads in the bare interpreter (a chat need not touch them all).
  const libs = path.join(ext, 'bundled', 'libs');
  const load = `import sys; sys.path[0:0] = [sys.argv[1], sys.argv[2]]
import re2, pydantic_core, tiktoken, regex, yaml, watchdog.observers, charset_normalizer
assert yaml.__with_libyaml__ and re2.search("a+", "caa")`;
  execFileSync(bare, ['-c', load, path.join(libs, `cp3${version.split('.')[1]}`), path.join(libs, 'common')], { env: { PATH: '/usr/bin:/bin' } });
});
