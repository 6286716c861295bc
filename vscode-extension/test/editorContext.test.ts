// What the panel says goes along from the editor, and the qwen/editorContext params (pure functions),
// plus the line above the composer in the real webview bundle (headless Chromium).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { editorContextLabel, editorContextParams } from '../src/editorContextLabel';
import { msg, snapshot, useWebview } from './webviewHarness';

const at = (line: number, character = 0) => ({ line, character });

test('label: lines of a selection (an end at column 0 does not count its line), a single line, the cursor alone', () => {
  const base = { uri: 'file:///w/main.py', name: 'main.py', cursor: at(13, 2) };
  assert.equal(editorContextLabel({ ...base, selection: { start: at(9), end: at(13, 5) } }), 'main.py · lines 10–14 selected');
  assert.equal(editorContextLabel({ ...base, selection: { start: at(9), end: at(14, 0) } }), 'main.py · lines 10–14 selected');
  assert.equal(editorContextLabel({ ...base, selection: { start: at(14, 8), end: at(9, 1) } }), 'main.py · lines 10–15 selected', 'a backwards selection');
  assert.equal(editorContextLabel({ ...base, selection: { start: at(2, 1), end: at(2, 7) } }), 'main.py · line 3 selected');
  assert.equal(editorContextLabel({ ...base, selection: { start: at(6, 3), end: at(6, 3) } }), 'main.py · line 14', 'an empty selection is the cursor');
  assert.equal(editorContextLabel(undefined), undefined);
});

test('params: 0-based positions as LSP counts them; an empty selection is not sent; no editor is {}', () => {
  assert.deepEqual(editorContextParams(undefined), {});
  assert.deepEqual(editorContextParams({ uri: 'file:///w/a.py', name: 'a.py', cursor: at(1, 2), selection: { start: at(1, 2), end: at(1, 2) } }), {
    activeFile: { uri: 'file:///w/a.py', cursor: at(1, 2) },
  });
  assert.deepEqual(editorContextParams({ uri: 'file:///w/a.py', name: 'a.py', cursor: at(3, 0), selection: { start: at(1, 0), end: at(3, 0) } }), {
    activeFile: { uri: 'file:///w/a.py', cursor: at(3, 0), selection: { start: at(1, 0), end: at(3, 0) } },
  });
});

const web = useWebview();

test('webview: the editor line shows what goes along, × leaves it out (the host decides), Include takes it back', async () => {
  const p = await web.open();
  await p.host(snapshot([msg('user', 'hi')]));
  const line = p.page.locator('#editor-context');
  assert.equal(await line.isVisible(), false, 'nothing shown without an editor');
  await p.host({ type: 'editorContext', chip: { label: 'main.py · lines 10–14 selected', leftOut: false } });
  assert.equal(await line.isVisible(), true);
  assert.equal(await p.page.locator('.editor-context-label').textContent(), 'main.py · lines 10–14 selected');
  await p.page.getByRole('button', { name: /Leave out editor context/ }).click();
  assert.deepEqual((await p.posted()).filter((m) => m.type === 'toggleEditorContext'), [{ type: 'toggleEditorContext' }]);
  await p.host({ type: 'editorContext', chip: { label: 'main.py · lines 10–14 selected', leftOut: true } });
  assert.match((await p.page.locator('.editor-context-label').textContent()) ?? '', /left out of the next message/);
  assert.equal(await p.page.getByRole('button', { name: /Include editor context/ }).isVisible(), true);
  await p.host({ type: 'editorContext', chip: null });
  assert.equal(await line.isVisible(), false);
});

test('webview: the editor line survives a reload from the snapshot', async () => {
  const p = await web.open();
  await p.host(snapshot([msg('user', 'hi')], { editorContext: { label: 'util.ts · line 7', leftOut: false } }));
  assert.equal(await p.page.locator('.editor-context-label').textContent(), 'util.ts · line 7');
});
