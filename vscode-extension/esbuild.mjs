// Builds dist/extension.js (node, cjs), dist/webview.js (browser, iife) and dist/webview.css;
// with --tests also the test files into out/ (node, cjs), so `node --test` runs plain JS.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const tests = process.argv.includes('--tests');
const common = { bundle: true, sourcemap: true, logLevel: 'warning', target: 'es2022' };

const builds = [
  { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', external: ['vscode'], minify: !watch },
  { ...common, entryPoints: ['webview/main.ts'], outfile: 'dist/webview.js', platform: 'browser', format: 'iife', minify: !watch },
];
if (tests) {
  for (const dir of ['test', 'e2e', 'bench']) {
    const entries = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => `${dir}/${f}`);
    builds.push({ ...common, entryPoints: entries, outdir: `out/${dir}`, platform: 'node', format: 'cjs', external: ['playwright-core', 'vscode'] });
  }
}

mkdirSync('dist', { recursive: true });
copyFileSync('webview/style.css', 'dist/webview.css');
if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
