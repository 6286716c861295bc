// Packages the extension for one VS Code target with the server inside (scripts/bundle.py fills
// bundled/libs with qwen_lsp from this checkout and its dependencies' wheels for that target):
//   node scripts/package.mjs [target] [out.vsix]
// target: linux-x64, linux-arm64, darwin-arm64 or win32-x64 (default: this machine's);
// out: qwen-lsp-<target>.vsix by default. `npm run package` makes qwen-lsp.vsix for this machine,
// the file the end-to-end tests install. PYTHON picks the interpreter that runs bundle.py (3.11+, with pip).
import { copyFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-arm64', 'win32-x64'];
const host = `${process.platform}-${process.arch}`;
const target = process.argv[2] ?? host;
if (!TARGETS.includes(target)) {
  console.error(`package.mjs: target must be one of ${TARGETS.join(', ')} (got ${target})`);
  process.exit(2);
}
const out = process.argv[3] ?? `qwen-lsp-${target}.vsix`;
const run = (cmd, args) => execFileSync(cmd, args, { stdio: 'inherit', shell: process.platform === 'win32' });

run('node', ['esbuild.mjs']);
copyFileSync('../LICENSE', 'LICENSE');
run(process.env.PYTHON ?? (process.platform === 'win32' ? 'python' : 'python3'), ['scripts/bundle.py', target]);
run('npx', ['vsce', 'package', '--target', target, '--no-dependencies', '--allow-missing-repository', '-o', out]);
