// A hostile repository and a hostile model against the host side: the server is started with no
// workspace directory on its module path (a repository's qwen_lsp/__main__.py, yaml.py, … never
// run; checked with the real server process), links from the transcript open only files really
// inside the workspace (the family of escapes: .. segments, percent-encoded dots, symlinks,
// other hosts, backslashes, case, prefixes), the one visible-text escaping writes out every class
// of hidden character (and hides exactly what the server's qwen_lsp/text/visible.py hides), and
// an approval never offers Allow for less than it approves (a cut diff, a diff editor that did
// not open it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { EXT_ROOT, python, startScripted, startServer, tempDir } from './support';
import { resolveServerCommand, SAFE_PATH, serverCwd } from '../src/serverCommand';
import type { Probes } from '../src/serverCommand';
import { bundleUnfit, hasPackage, isExecutable } from '../src/serverProbes';
import { resolveInside } from '../src/links';
import type { ContainmentFs, FileLink } from '../src/links';
import { NEWLINE_MARK, shownTitle, visible } from '../src/shared/visibleText';
import { approvalRequestFor, HOLD_CUT, HOLD_NOT_SHOWN, HOLD_OPENING, LARGE_CHANGE_LINES, PermissionBroker } from '../src/permission';
import type { DiffView, PermissionUi } from '../src/permission';
import { diffIsWhole } from '../src/unifiedDiff';
import { toolDetail } from '../src/transcript';
import type { ApprovalRequest } from '../src/shared/messages';
import type { PermissionParams } from '../src/shared/protocol';

// ---- the server's start: no workspace directory on the module path -------------------------

/** A repository that would run its own code if its folder were on sys.path: each writes a marker. */
function hostileRepo(): { ws: string; markers: string } {
  const ws = tempDir('qwen-hostile-ws-');
  const markers = tempDir('qwen-hostile-markers-');
  const plant = (rel: string) => {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    const name = rel.replace(/[^\w]/g, '_');
    writeFileSync(path.join(ws, rel), `open(${JSON.stringify(path.join(markers, name))}, "w").write("ran")\n`);
  };
  for (const rel of ['qwen_lsp/__init__.py', 'qwen_lsp/__main__.py', 'yaml.py', 'httpx.py', 'pydantic.py', 'pygls/__init__.py', 'json.py', 'typing_extensions.py', 'sitecustomize.py', 'usercustomize.py']) plant(rel);
  return { ws, markers };
}

function realProbes(cwd: string, env: NodeJS.ProcessEnv = process.env): Probes {
  return {
    isExecutable,
    hasPackage: (py) => hasPackage(py, cwd),
    pythonInterpreter: async () => undefined,
    bundledLauncher: undefined,
    bundleUnfit: (py, l) => bundleUnfit(py, l, cwd),
    env,
    platform: process.platform,
  };
}

test('server start: every way of running Python puts -P first (no script or current directory on sys.path)', async () => {
  const probes = (over: Partial<Probes>): Probes => ({
    isExecutable: async () => true,
    hasPackage: async () => true,
    pythonInterpreter: async () => undefined,
    bundledLauncher: undefined,
    bundleUnfit: async () => undefined,
    env: { PATH: '/usr/bin' },
    platform: 'linux',
    ...over,
  });
  const setting = await resolveServerCommand('/v/bin/python3', probes({}));
  const pythonExt = await resolveServerCommand('', probes({ pythonInterpreter: async () => '/env/bin/python' }));
  const bundled = await resolveServerCommand('', probes({ bundledLauncher: '/ext/bundled/launch.py' }));
  for (const cmd of [setting, pythonExt, bundled]) assert.equal(cmd.args[0], SAFE_PATH, `${cmd.source}: ${cmd.args.join(' ')}`);
  assert.deepEqual(setting.args, ['-P', '-m', 'qwen_lsp', 'serve', '--stdio']);
  assert.deepEqual(bundled.args, ['-P', '/ext/bundled/launch.py', 'serve', '--stdio']);
  assert.deepEqual((await resolveServerCommand('/opt/qwen-lsp', probes({}))).args, ['serve', '--stdio'], 'an executable is not a Python: no flag for it');
});

test('server start: the working directory is outside every workspace folder, and holds none', () => {
  const ext = '/home/u/.vscode/extensions/qwen-lsp';
  const candidates = [ext, '/home/u', '/tmp'];
  assert.equal(serverCwd(['/work/repo'], candidates, path.posix), ext);
  assert.equal(serverCwd([], candidates, path.posix), ext, 'no folder: still the extension\'s');
  assert.equal(serverCwd(['/home/u/.vscode'], candidates, path.posix), '/tmp', 'a workspace holding the extension: neither it nor home (which holds the workspace)');
  assert.equal(serverCwd(['/home/u/.vscode/extensions/qwen-lsp/sub'], candidates, path.posix), '/tmp', 'a workspace inside the extension folder');
  assert.equal(serverCwd(['/home/u/.vscode/extensions/qwen-lsp-evil'], candidates, path.posix), ext, 'a sibling with the same prefix is not inside');
  assert.equal(serverCwd(['/'], candidates, path.posix), undefined, 'the root folder holds everything');
  assert.equal(serverCwd(['C:\\Users\\u\\proj'], ['c:\\ext', 'C:\\Users\\u', 'C:\\Temp'], path.win32), 'c:\\ext');
  assert.equal(serverCwd(['C:\\ext\\x'], ['c:\\ext', 'C:\\Users\\u', 'C:\\Temp'], path.win32), 'C:\\Users\\u');
});

test('server start: a repository with its own qwen_lsp/__main__.py, yaml.py, pydantic.py… runs none of them; the real server answers', { timeout: 120_000 }, async () => {
  const { ws, markers } = hostileRepo();
  const cwd = serverCwd([ws], [EXT_ROOT, homedir(), tmpdir()])!;
  assert.ok(cwd && !cwd.startsWith(ws));
  const cmd = await resolveServerCommand(python(), realProbes(cwd));
  const scripted = await startScripted('hello from the scripted model');
  const server = await startServer(ws, scripted.baseUrl, {}, {}, { command: cmd.command, args: cmd.args, env: process.env, cwd });
  try {
    assert.equal(server.initializeResult?.serverInfo?.name, 'qwen-lsp', 'the real server answered initialize');
    const r: { text?: string } = await server.conn.sendRequest('qwen/chat', { prompt: 'hi' });
    assert.match(JSON.stringify(r), /hello from the scripted model/);
  } finally {
    await server.stop();
    scripted.stop();
  }
  assert.deepEqual(readdirSync(markers), [], 'no file of the repository ran');
});

test('server start: the control — without -P, from the workspace, the repository\'s own qwen_lsp/__main__.py runs (so the test above can fail)', () => {
  const { ws, markers } = hostileRepo();
  try {
    execFileSync(python(), ['-m', 'qwen_lsp', '--version'], { cwd: ws, stdio: 'ignore', timeout: 30_000 });
  } catch {
    // the planted package is no server: it may exit with an error after writing its marker
  }
  assert.ok(readdirSync(markers).some((m) => m.startsWith('qwen_lsp')), `the planted package ran: ${readdirSync(markers)}`);
});

test('server start: the probe for qwen_lsp is not fooled by a workspace\'s own qwen_lsp package', async () => {
  const { ws, markers } = hostileRepo();
  // A Python without qwen_lsp installed: only the planted one could answer, and -P keeps it out.
  const bare = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  const bareHasIt = await hasPackage(bare, EXT_ROOT);
  if (!bareHasIt) assert.equal(await hasPackage(bare, ws), false, 'the planted qwen_lsp does not count');
  assert.equal(await hasPackage(python(), ws), true, 'the real one is found from anywhere');
  assert.deepEqual(readdirSync(markers), [], 'the probe ran none of the planted files');
});

// ---- links from the transcript ------------------------------------------------------------

/** A file: href split as vscode.Uri.parse does it: the authority, and the path percent-decoded, not normalised. */
function fileLink(href: string): FileLink {
  const m = /^file:\/\/([^/]*)(.*)$/i.exec(href)!;
  return { authority: m[1], fsPath: decodeURIComponent(m[2]) };
}

const LOCAL: ContainmentFs = { realpath: (p) => realpath(p), path, caseInsensitive: false };

test('links: only a file really inside the workspace opens — the family of ways out opens nothing', async () => {
  const root = realpathSync(tempDir('qwen-links-'));
  const ws = path.join(root, 'ws');
  const out = path.join(root, 'outside');
  mkdirSync(path.join(ws, 'src', 'deep'), { recursive: true });
  mkdirSync(out, { recursive: true });
  mkdirSync(path.join(root, 'ws-evil'), { recursive: true });
  writeFileSync(path.join(ws, 'src', 'a.py'), 'x = 1\n');
  writeFileSync(path.join(out, 'secret.txt'), 'secret\n');
  writeFileSync(path.join(root, 'ws-evil', 'b.txt'), 'prefix trap\n');
  symlinkSync(out, path.join(ws, 'link-out'));
  symlinkSync(path.join(out, 'secret.txt'), path.join(ws, 'secret-link.txt'));
  symlinkSync(path.join(ws, 'src', 'a.py'), path.join(ws, 'inside-link.py'));
  symlinkSync('../../outside', path.join(ws, 'src', 'rel-out'));
  const inside = path.join(ws, 'src', 'a.py');
  const opens = async (href: string) => resolveInside(fileLink(href), [ws], LOCAL);

  assert.equal(await opens(`file://${inside}`), inside);
  assert.equal(await opens(`file://${ws}/src/deep/../a.py`), inside, '.. that stays inside is fine');
  assert.equal(await opens(`file://${ws}/inside-link.py`), inside, 'a symlink to a file inside opens its real path');
  assert.equal(await opens(`file://${ws}/src/%61.py`), inside, 'percent-encoded letters');

  const ways = [
    `file://${ws}/../outside/secret.txt`,
    `file://${ws}/src/../../outside/secret.txt`,
    `file://${ws}/src/deep/../../../outside/secret.txt`,
    `file://${ws}/${'../'.repeat(20)}etc/passwd`,
    `file://${ws}/%2e%2e/outside/secret.txt`,
    `file://${ws}/%2E%2E/outside/secret.txt`,
    `file://${ws}/.%2e/outside/secret.txt`,
    `file://${ws}/%2e./outside/secret.txt`,
    `file://${ws}/src%2f..%2f..%2foutside%2fsecret.txt`,
    `file://${ws}/link-out/secret.txt`,
    `file://${ws}/secret-link.txt`,
    `file://${ws}/src/rel-out/secret.txt`,
    `file://${ws}/link-out/../outside/secret.txt`,
    `file://${ws}/..\\outside\\secret.txt`,
    `file://${ws}\\..\\outside\\secret.txt`,
    `file://${out}/secret.txt`,
    'file:///etc/passwd',
    `file://${root}/ws-evil/b.txt`,
    `file://${ws}-evil/b.txt`,
    `file://${ws.toUpperCase()}/src/a.py`,
    `file://otherhost${inside}`,
    `file://localhost${inside}`,
    `file://${ws}/src/missing.py`,
    `file://${ws}/src/a.py%00.txt`,
    `file://src/a.py`,
    'file://',
  ];
  for (const href of ways) assert.equal(await opens(href), undefined, href);
});

test('links: Windows spelling — backslashes, drive-letter case, UNC hosts, .. and prefixes', async () => {
  // The containment on win32 paths, over a file system where every path exists as spelled (resolve only).
  const win: ContainmentFs = { realpath: async (p) => path.win32.resolve(p), path: path.win32, caseInsensitive: true };
  const opens = (fsPath: string, authority = '') => resolveInside({ authority, fsPath }, ['C:\\Users\\u\\ws'], win);
  assert.equal(await opens('C:\\Users\\u\\ws\\src\\a.py'), 'C:\\Users\\u\\ws\\src\\a.py');
  assert.ok(await opens('c:\\users\\U\\WS\\src\\a.py'), 'case differs only: the same file on Windows');
  assert.ok(await opens('C:/Users/u/ws/src/a.py'), 'forward slashes');
  for (const p of [
    'C:\\Users\\u\\ws\\..\\..\\..\\Windows\\win.ini',
    'C:\\Users\\u\\ws/../secret.txt',
    'c:\\USERS\\u\\WS\\..\\secret.txt',
    'C:\\Users\\u\\ws-evil\\a.py',
    'D:\\Users\\u\\ws\\a.py',
    '\\\\server\\share\\Users\\u\\ws\\a.py',
    'src\\a.py',
  ])
    assert.equal(await opens(p), undefined, p);
  assert.equal(await opens('C:\\Users\\u\\ws\\a.py', 'server'), undefined, 'a UNC host');
});

// ---- the one visible-text escaping ----------------------------------------------------------

/** One representative set per class the module doc names. */
const CLASSES: Record<string, number[]> = {
  'C0 controls': [0x00, 0x07, 0x08, 0x0b, 0x0c, 0x0d, 0x1b, 0x1f],
  'DEL and C1 controls': [0x7f, 0x80, 0x85, 0x9b, 0x9f],
  'bidi controls': [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069],
  'zero-width and format': [0x00ad, 0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2064, 0xfeff, 0x180e],
  'line and paragraph separators': [0x2028, 0x2029],
  'variation selectors': [0xfe00, 0xfe0e, 0xfe0f, 0xe0100, 0xe01ef, 0x180b, 0x180f],
  'combining grapheme joiner': [0x034f],
  'Hangul fillers': [0x115f, 0x1160, 0x3164, 0xffa0],
  'braille blank': [0x2800],
  'other default-ignorables': [0x17b4, 0x17b5, 0x2065, 0xfff0, 0x1bca0, 0x1d173, 0x1d17a],
  'tags': [0xe0001, 0xe0020, 0xe0041, 0xe007f, 0xe0fff],
  'lone surrogates': [0xd800, 0xdfff],
};

test('visible text: every class of hidden character is written out, alone and inside a command', () => {
  for (const [name, codes] of Object.entries(CLASSES)) {
    for (const code of codes) {
      const ch = String.fromCodePoint(code);
      const hex = code.toString(16);
      const shown = visible(`git status${ch} && echo ok`);
      assert.ok(!shown.includes(ch), `${name} U+${hex} is not shown as itself`);
      assert.match(shown, new RegExp(`\\\\(x${hex.padStart(2, '0')}|u${hex.padStart(4, '0')}|r)`), `${name} U+${hex}: ${JSON.stringify(shown)}`);
      assert.equal(visible(shown), shown, `${name} U+${hex}: idempotent`);
    }
  }
});

test('visible text: what shows as itself stays; newlines and tabs follow the layout', () => {
  for (const ok of ['git commit -m "fix"', 'naïve café', 'e\u0301', '日本語のテキスト', '한국어 문장', 'emoji 😀 ✅', 'Ελληνικά', 'مرحبا', 'a\u00a0b']) assert.equal(visible(ok), ok, ok);
  assert.equal(visible('a\nb\tc\r'), `a${NEWLINE_MARK}b\\tc\\r`);
  assert.equal(visible('a\nb\tc\r', 'lines'), 'a\nb\\tc\\r');
  assert.equal(visible('a\nb\tc\r', 'block'), 'a\nb\tc\\r');
  assert.equal(shownTitle('Run: ', 'echo \u3164 hi\nrm -rf x'), 'Run: echo \\u3164 hi⏎rm -rf x [multi-line: 2 lines]');
  assert.equal(toolDetail({ command: `rm -rf /tmp/x\u202e/ # ${'y'.repeat(1000)}` }).includes('\\u202e'), true, 'a shell row shows the written-out command');
  assert.match(toolDetail({ command: 'x'.repeat(2000) }), /… \[\+\d+ characters\]$/, 'a long command says how much is left out');
});

test('visible text: hides exactly what the server\'s qwen_lsp/text/visible.py hides, with the same escapes', () => {
  // Every code point (but surrogates, which Python strings from JSON do not carry), through both.
  const script = [
    'import json, unicodedata',
    'from qwen_lsp.text.visible import visible',
    'hides = {c: visible(chr(c)) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and visible(chr(c)) != chr(c)}',
    'unknown = [c for c in range(0x110000) if unicodedata.category(chr(c)) == "Cn"]',
    'print(json.dumps({"hides": hides, "unknown": unknown}))',
  ].join('\n');
  const answer = JSON.parse(execFileSync(python(), ['-c', script], { encoding: 'utf8', maxBuffer: 64 << 20 })) as { hides: Record<string, string>; unknown: number[] };
  const serverHides = Object.entries(answer.hides);
  const unknownToPython = new Set(answer.unknown);
  assert.ok(serverHides.length > 100, 'the server hides controls and format characters at least');
  const missing: string[] = [];
  for (const [code, server] of serverHides) {
    const ch = String.fromCodePoint(Number(code));
    const shown = visible(ch);
    // Unicode versions differ a little between Python and Node: a code point one of them does not know yet is left out.
    if (/\p{Cn}/u.test(ch)) continue;
    if (shown !== server) missing.push(`U+${Number(code).toString(16)}: server ${JSON.stringify(server)}, panel ${JSON.stringify(shown)}`);
  }
  assert.deepEqual(missing, [], 'the panel writes out what the server writes out, the same way');
  const server = new Set(serverHides.map(([code]) => Number(code)));
  const extra: string[] = [];
  for (let code = 0; code < 0x110000; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const ch = String.fromCodePoint(code);
    if (/\p{Cn}/u.test(ch) || unknownToPython.has(code) || ch === '\n') continue; // a newer Unicode on one side
    if (visible(ch) !== ch && !server.has(code)) extra.push(`U+${code.toString(16)}`);
  }
  assert.deepEqual(extra, [], 'and the server writes out what the panel writes out');
});

// ---- an approval never shows less than it approves -------------------------------------------

const edit = (diff: string, extra: Partial<PermissionParams> = {}): PermissionParams => ({
  sessionId: 's',
  turnId: 't',
  toolCallId: 'c',
  tool: 'write_file',
  title: 'WriteFile big.txt',
  path: '/ws/big.txt',
  diff,
  ...extra,
});
const bigDiff = (n: number) => `--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,${n} @@\n${Array.from({ length: n }, (_, i) => `+line ${i + 1}\n`).join('')}`;

test('diff wholeness: a complete diff is whole; cut mid-hunk, cut with the server\'s old marker, or a wrong count is not', () => {
  const whole = bigDiff(5);
  assert.ok(diffIsWhole(whole));
  assert.ok(diffIsWhole(''), 'no change at all');
  assert.ok(diffIsWhole('--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n@@ -10 +10 @@\n-x\n+y\n'));
  assert.ok(!diffIsWhole(whole.split('\n').slice(0, 6).join('\n') + '\n'), 'cut mid-hunk');
  assert.ok(!diffIsWhole(whole + '... [diff cut at 200000 characters]\n'), 'the old cut marker');
  assert.ok(!diffIsWhole(whole.replace('+1,5', '+1,9')), 'a header promising more');
  assert.ok(!diffIsWhole('hello\n' + whole));
});

test('approval card: a change over the card\'s size says so; a cut one offers only Deny; a shell command shows its directory and what Allow always covers', () => {
  const big = approvalRequestFor('p1', edit(bigDiff(LARGE_CHANGE_LINES + 50)));
  assert.match(big.detail!, /\(\+250 −0\): too large to show here; it opens whole in the diff editor/);
  assert.equal(big.hold, HOLD_OPENING, 'Allow waits for the diff editor');
  const small = approvalRequestFor('p2', edit(bigDiff(3)));
  assert.match(small.detail!, /\(\+3 −0\), shown in the diff editor/);
  const cut = approvalRequestFor('p3', edit(bigDiff(50).split('\n').slice(0, 20).join('\n') + '\n... [diff cut at 200000 characters]\n'));
  assert.equal(cut.hold, HOLD_CUT);
  assert.deepEqual(cut.options.map((o) => o.kind), ['reject'], 'a change not shown whole cannot be allowed');
  const shell = approvalRequestFor('p4', {
    sessionId: 's',
    turnId: 't',
    toolCallId: 'c',
    tool: 'run_shell_command',
    title: 'x',
    command: 'git commit -m "\u3164"',
    directory: '/ws/sub\u202e',
    alwaysCovers: 'Commands starting with: git commit\u2800',
  });
  assert.equal(shell.directory, '/ws/sub\\u202e');
  assert.equal(shell.covers, 'Commands starting with: git commit\\u2800');
  assert.equal(shell.detail, '$ git commit -m "\\u3164"');
  assert.equal(shell.hold, undefined, 'a command has nothing to open first');
  const noCovers = approvalRequestFor('p5', { sessionId: 's', turnId: 't', toolCallId: 'c', tool: 'run_shell_command', title: 'x', command: 'ls' });
  assert.equal(noCovers.covers, undefined, 'without alwaysCovers the card is as before');
  assert.deepEqual(noCovers.options.map((o) => o.id), ['allow', 'allowAlways', 'deny']);
});

class FakeUi implements PermissionUi {
  cards: (ApprovalRequest | null)[] = [];
  opened = 0;
  constructor(private readonly open: () => Promise<DiffView | undefined>) {}
  card(r: ApprovalRequest | null): void {
    this.cards.push(r);
  }
  async openDiff(): Promise<DiffView | undefined> {
    this.opened++;
    return this.open();
  }
}

test('approval broker: Allow counts only once the diff editor has the whole change open; if it cannot open it, only Deny', async () => {
  let openIt!: (v: DiffView | undefined) => void;
  const ui = new FakeUi(() => new Promise((r) => (openIt = r)));
  const broker = new PermissionBroker(ui);
  const answer = broker.ask(edit(bigDiff(400)));
  const first = ui.cards[0]!;
  assert.equal(first.hold, HOLD_OPENING);
  assert.equal(broker.reply(first.id, 'allow'), false, 'an Allow before the diff editor opened is ignored');
  assert.equal(broker.reply(first.id, 'allowAlways'), false);
  openIt({ close() {} });
  await new Promise((r) => setImmediate(r));
  const released = ui.cards.at(-1)!;
  assert.equal(released.id, first.id);
  assert.equal(released.hold, undefined, 'the card is sent again without its hold');
  assert.equal(broker.reply(first.id, 'allow'), true);
  assert.deepEqual(await answer, { decision: 'allow' });

  const failing = new FakeUi(async () => undefined);
  const b2 = new PermissionBroker(failing);
  const a2 = b2.ask(edit(bigDiff(10)));
  await new Promise((r) => setImmediate(r));
  assert.equal(failing.cards.at(-1)!.hold, HOLD_NOT_SHOWN);
  assert.equal(b2.reply(failing.cards[0]!.id, 'allow'), false, 'not shown: not allowed');
  assert.equal(b2.reply(failing.cards[0]!.id, 'deny', 'too big'), true);
  assert.deepEqual(await a2, { decision: 'deny', reason: 'too big' });

  const throwing = new FakeUi(async () => {
    throw new Error('no editor');
  });
  const b3 = new PermissionBroker(throwing);
  void b3.ask(edit(bigDiff(10)));
  await new Promise((r) => setImmediate(r));
  assert.equal(throwing.cards.at(-1)!.hold, HOLD_NOT_SHOWN);
  assert.ok(existsSync(EXT_ROOT));
});
