// The extension sends and receives qwen/* messages only through the typed constants generated from
// qwen_lsp/protocol.py (src/rpc.generated.ts), so a renamed method or field fails the type check
// instead of failing at run time. This scan keeps method strings from creeping back into src/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { EXT_ROOT } from './support';

const STRING_METHOD = /\b(?:sendRequest|sendNotification|onRequest|onNotification)\(\s*['"`]/;

test('typed rpc: no sendRequest / sendNotification / onRequest / onNotification with a method string in src/', () => {
  const src = path.join(EXT_ROOT, 'src');
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, name.name);
      if (name.isDirectory()) walk(full);
      else if (name.name.endsWith('.ts')) {
        readFileSync(full, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (STRING_METHOD.test(line)) found.push(`${path.relative(src, full)}:${i + 1}: ${line.trim()}`);
          });
      }
    }
  };
  walk(src);
  assert.deepEqual(found, []);
  assert.ok(STRING_METHOD.test("client.sendRequest('qwen/sessions/list', {})"), 'the scan sees a method string');
});
