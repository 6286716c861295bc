// The extension's import graph has no cycle: a module that imports (even for types only) a module
// that imports it back cannot be read, tested or loaded on its own. A tiny scanner of the relative
// imports in src/ (the only edges a cycle can run through) instead of a dependency-graph package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { EXT_ROOT } from './support';

const IMPORT = /^\s*(?:import|export)\b[^'"`;]*?(?:\bfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]/gm;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return full.endsWith('.ts') && !full.endsWith('.d.ts') ? [full] : [];
  });
}

function resolve(from: string, spec: string): string {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${path.relative(EXT_ROOT, from)}: cannot resolve import '${spec}'`);
}

/** Module → the modules it imports, from its `import … from './x'` and `export … from './x'` lines. */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(root)) {
    const text = readFileSync(file, 'utf8');
    graph.set(file, [...text.matchAll(IMPORT)].map((m) => resolve(file, m[1])));
  }
  return graph;
}

/** Every cycle's path (first module repeated at the end), found by depth-first search. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    const at = stack.indexOf(node);
    if (at >= 0) {
      found.push([...stack.slice(at), node]);
      return;
    }
    if (done.has(node)) return;
    stack.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    stack.pop();
    done.add(node);
  };
  for (const node of graph.keys()) visit(node);
  return found;
}

test('import graph: the scanner sees a cycle when there is one', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['a']],
  ]);
  assert.deepEqual(cycles(graph), [['a', 'b', 'c', 'a']]);
  assert.deepEqual(cycles(new Map([['a', ['b']], ['b', []]])), []);
});

test('import graph: the scanner reads type-only and re-export lines as edges', () => {
  const src = path.join(EXT_ROOT, 'src');
  const graph = importGraph(src);
  assert.ok(graph.size > 10, 'it found the sources');
  const controller = graph.get(path.join(src, 'chatController.ts')) ?? [];
  assert.ok(controller.includes(path.join(src, 'server.ts')), "`import type { ServerManager } from './server'` is an edge");
});

test('import graph: no module of src/ imports itself through others', () => {
  const src = path.join(EXT_ROOT, 'src');
  const rel = (p: string) => path.relative(src, p);
  assert.deepEqual(cycles(importGraph(src)).map((c) => c.map(rel).join(' → ')), []);
});
