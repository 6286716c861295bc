// Pasting into the composer in headless Chromium (the real bundle): an image on the clipboard goes to
// the host as base64 and nothing is typed; plain text pastes as text, even with an image alongside.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { snapshot, useWebview } from './webviewHarness';

const web = useWebview();

const PNG_HEX = '89504e470d0a1a0a0000000d4948445200000001000000010806000000';

/** Dispatch a paste on the composer with a PNG file and, when given, plain text; whether it was prevented. */
async function pasteInto(page: import('playwright-core').Page, text: string | null): Promise<boolean> {
  return page.evaluate(
    ({ hex, text }) => {
      const bytes = new Uint8Array(hex.match(/../g)!.map((b) => parseInt(b, 16)));
      const data = new DataTransfer();
      data.items.add(new File([bytes], 'image.png', { type: 'image/png' }));
      if (text !== null) data.setData('text/plain', text);
      const event = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
      return !document.querySelector('#prompt')!.dispatchEvent(event);
    },
    { hex: PNG_HEX, text },
  );
}

test('an image pasted into the composer goes to the host as base64; text with it stays text', async () => {
  const p = await web.open();
  await p.host(snapshot([]));
  assert.equal(await pasteInto(p.page, null), true, 'an image paste is taken over');
  await p.page.waitForFunction(() => (window as any).__posted.some((m: any) => m.type === 'pasteImage'));
  const sent = (await p.posted()).filter((m) => m.type === 'pasteImage');
  assert.deepEqual(sent, [{ type: 'pasteImage', data: Buffer.from(PNG_HEX, 'hex').toString('base64') }]);
  assert.equal(await p.page.locator('#prompt').inputValue(), '');

  assert.equal(await pasteInto(p.page, 'A1\tB1'), false, 'a paste holding text is left to the textarea');
  assert.equal((await p.posted()).filter((m) => m.type === 'pasteImage').length, 1);
});
