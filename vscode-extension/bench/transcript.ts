// Benchmark (not a test): keystroke-to-paint in the composer with a 500-message transcript,
// against the same panel with an empty transcript in the same run, and while an answer streams.
// Prints one JSON line. Keystroke-to-paint = keydown to the end of the next frame after it.
import { launch, msg, openPanel, snapshot, startPageServer } from '../test/webviewHarness';
import type { Panel } from '../test/webviewHarness';

const KEYS = 60;

function transcript(n: number) {
  return Array.from({ length: n }, (_, i) =>
    i % 2
      ? msg('assistant', `Answer ${i}: here is some **Markdown** with \`code\`.\n\n\`\`\`ts\nexport function f${i}(x: number): number {\n  return x * ${i};\n}\n\`\`\`\n\n- point one\n- point two\n\nA closing paragraph that wraps over a couple of lines in a narrow side panel.`)
      : msg('user', `Question ${i}: how does f${i + 1} work, and why?`),
  );
}

async function measure(p: Panel, streamingId?: string): Promise<number[]> {
  await p.page.locator('#prompt').click();
  await p.page.evaluate(() => {
    const w = window as any;
    w.__lat = [];
    document.getElementById('prompt')!.addEventListener('keydown', () => {
      const t0 = performance.now();
      requestAnimationFrame(() => setTimeout(() => w.__lat.push(performance.now() - t0), 0));
    }, { capture: true });
  });
  for (let i = 0; i < KEYS; i++) {
    if (streamingId) await p.host({ type: 'patches', patches: [{ op: 'append', id: streamingId, text: `token${i} ` + (i % 8 === 7 ? '\n\n' : '') }] });
    await p.page.keyboard.type('x');
    await p.page.waitForTimeout(20);
  }
  await p.page.waitForTimeout(100);
  return p.page.evaluate(() => (window as any).__lat as number[]);
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (f: number) => Number(s[Math.min(s.length - 1, Math.floor(f * s.length))].toFixed(2));
  return { p50: q(0.5), p95: q(0.95), max: Number(s[s.length - 1].toFixed(2)) };
}

(async () => {
  const { server, origin } = await startPageServer();
  const browser = await launch();
  try {
    const empty = await openPanel(browser, origin);
    await empty.host(snapshot([]));
    const base = await measure(empty);

    const big = await openPanel(browser, origin);
    const t0 = Date.now();
    await big.host(snapshot(transcript(500)));
    await big.frame();
    const loadMs = Date.now() - t0;
    const idle = await measure(big);
    const a = msg('assistant', '', { streaming: true });
    await big.host([{ type: 'message', message: msg('user', 'one more') }, { type: 'message', message: a }, { type: 'running', running: true }]);
    const streaming = await measure(big, a.id);
    const result = {
      bench: 'webview-transcript-keystroke-to-paint',
      messages: 500,
      keystrokes: KEYS,
      emptyMs: stats(base),
      idle500Ms: stats(idle),
      streaming500Ms: stats(streaming),
      ratioP95: Number((stats(idle).p95 / Math.max(0.01, stats(base).p95)).toFixed(2)),
      snapshotLoadMs: loadMs,
      targetMs: 50,
    };
    console.log(JSON.stringify(result));
  } finally {
    await browser.close();
    server.close();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
