// Serves the real webview (the HTML from src/html.ts with its CSP, the built bundle and CSS) on
// 127.0.0.1 and opens it in Debian's headless Chromium with a stub acquireVsCodeApi that records
// posted messages and keeps setState() in sessionStorage (so it survives a page reload, as
// VS Code's webview state does).
import { after, before } from 'node:test';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { chatHtml, makeNonce } from '../src/html';
import { EXT_ROOT } from './support';
import type { HostToWebview, Snapshot, TranscriptMessage } from '../src/shared/messages';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
export const ARTIFACTS = path.join(EXT_ROOT, 'test-artifacts');

export type Theme = 'light' | 'dark' | 'hc-dark' | 'hc-light';
const BODY_CLASS: Record<Theme, string> = {
  light: 'vscode-light',
  dark: 'vscode-dark',
  'hc-dark': 'vscode-high-contrast',
  'hc-light': 'vscode-high-contrast-light',
};

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.map': 'application/json' };

export async function startPageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const origin = `http://${req.headers.host}`;
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(chatHtml({ cspSource: origin, nonce: makeNonce(), scriptUri: `${origin}/dist/webview.js`, styleUri: `${origin}/dist/webview.css` }));
      return;
    }
    const m = /^\/(dist|themes)\/([\w.-]+)$/.exec(url.pathname);
    const file = m && path.join(EXT_ROOT, m[1] === 'dist' ? 'dist' : 'test/themes', m[2]);
    if (!file || !existsSync(file)) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { server, origin: `http://127.0.0.1:${port}` };
}

export function launch(): Promise<Browser> {
  // Playwright hides scrollbars in headless mode; the scrollbar-drag test needs them.
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, ignoreDefaultArgs: ['--hide-scrollbars'] });
}

const STUB = `
  window.__posted = [];
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => JSON.parse(sessionStorage.getItem('vscode-state') || 'null'),
    setState: (s) => sessionStorage.setItem('vscode-state', JSON.stringify(s)),
  });
`;

export interface Panel {
  page: Page;
  host(msg: HostToWebview | HostToWebview[]): Promise<void>;
  posted(): Promise<any[]>;
  frame(): Promise<void>;
  /**
   * Fakes the page's clock and stops it: from here time moves only by `page.clock.runFor`, and
   * `frame()` produces its frames by moving the clock 40 ms. Playwright's installed clock keeps
   * flowing with real time, so on a loaded machine a 600 ms timer could fire between two steps.
   */
  stopClock(): Promise<void>;
  applyTheme(theme: Theme): Promise<void>;
  reload(): Promise<void>;
}

export async function openPanel(browser: Browser, origin: string, o: { theme?: Theme; reducedMotion?: 'reduce' | 'no-preference'; height?: number } = {}): Promise<Panel> {
  const context = await browser.newContext({ viewport: { width: 420, height: o.height ?? 640 }, reducedMotion: o.reducedMotion ?? 'no-preference' });
  await context.addInitScript(STUB);
  const page = await context.newPage();
  let clockStopped = false;
  const panel: Panel = {
    page,
    // Each message is its own task, as VS Code delivers them. The webview applies what they
    // carry in the next animation frame, so this resolves only after two frames have been
    // produced: a read right after it sees the result (reading earlier raced the frame and
    // failed on a loaded CI machine). `postMessage` only queues the message event, so each
    // post waits for that event: a listener added after the webview's own runs after it, so
    // the message has been handled (and its frame requested) before the frames are produced.
    // Without that wait, a stopped clock could run its frames before the message arrived.
    host: async (msg) => {
      for (const m of Array.isArray(msg) ? msg : [msg]) {
        await page.evaluate(
          (x) =>
            new Promise<void>((resolve) => {
              window.addEventListener('message', () => resolve(), { once: true });
              window.postMessage(x, '*');
            }),
          m,
        );
      }
      await panel.frame();
    },
    posted: () => page.evaluate(() => (window as any).__posted),
    // Resolves after the next frame has been produced (patches apply in requestAnimationFrame).
    frame: () =>
      clockStopped ? page.clock.runFor(40) : page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())))),
    stopClock: async () => {
      await page.clock.install();
      await page.clock.pauseAt(Date.now() + 1_000);
      clockStopped = true;
    },
    applyTheme: async (theme) => {
      await page.evaluate(([cls]) => {
        document.body.className = cls;
        document.getElementById('theme')?.remove();
      }, [BODY_CLASS[theme]]);
      const tag = await page.addStyleTag({ url: `${origin}/themes/${theme}.css` });
      await tag.evaluate((el) => ((el as HTMLElement).id = "theme"));
    },
    reload: async () => {
      await page.reload();
      await page.waitForFunction(() => (window as any).__posted?.some((m: any) => m.type === 'ready'));
      if (o.theme) await panel.applyTheme(o.theme);
    },
  };
  await page.goto(origin);
  await page.waitForFunction(() => (window as any).__posted?.some((m: any) => m.type === 'ready'));
  await panel.applyTheme(o.theme ?? 'dark');
  return panel;
}

let n = 0;
export function msg(role: 'user' | 'assistant', text: string, extra: Partial<TranscriptMessage> = {}): TranscriptMessage {
  return { id: `t${n++}`, role, text, ...extra };
}

export function snapshot(messages: TranscriptMessage[], extra: Partial<Snapshot> = {}): HostToWebview {
  return { type: 'snapshot', snapshot: { sessionId: 's1', messages, running: false, attachments: [], notices: [], ...extra } };
}

/** A test file's page server and Chromium: started before its tests, closed after; `open` gives a fresh panel. */
export interface WebviewSuite {
  readonly origin: string;
  open(o?: Parameters<typeof openPanel>[2]): Promise<Panel>;
}

export function useWebview(): WebviewSuite {
  let browser: Browser | undefined;
  let server: Server | undefined;
  let origin = '';
  before(async () => {
    ({ server, origin } = await startPageServer());
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    server?.close();
  });
  return {
    get origin() {
      return origin;
    },
    open: (o) => openPanel(browser!, origin, o),
  };
}
