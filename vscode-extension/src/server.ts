/**
 * Starts, restarts and watches the qwen-lsp process through vscode-languageclient. The API key
 * comes from SecretStorage into the server's environment only; settings go as
 * initializationOptions, then per folder through workspace/configuration (a change is signalled
 * with workspace/didChangeConfiguration and the server pulls again). In Restricted Mode (an
 * untrusted folder) nothing is started, so no program runs and the key goes nowhere; trusting
 * the folder starts the server (extension.ts).
 */
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { CloseAction, DidChangeConfigurationNotification, ErrorAction, LanguageClient, State } from 'vscode-languageclient/node';
import type { Executable, LanguageClientOptions } from 'vscode-languageclient/node';
import { resolveServerCommand, serverCwd, ServerNotFound, staleServerWarning } from './serverCommand';
import { bundleUnfit, hasPackage, isExecutable } from './serverProbes';
import type { Probes, ServerCommand } from './serverCommand';
import { buildServerSettings, droppedKeys } from './settings';
import { qwenCapabilitiesFeature } from './qwenCapabilities';
import type { ServerFailureLike } from './errors';

export const API_KEY_SECRET = 'qwen.apiKey';
const CRASH_WINDOW_MS = 3 * 60_000;
const MAX_RESTARTS = 3;

/** `restricted`: the folder is not trusted, so no server is started (docs/security.md, "The VS Code extension"). */
export type ServerState = 'starting' | 'running' | 'stopped' | 'failed' | 'restricted';

/** What the panel and the status bar say in Restricted Mode. */
export const RESTRICTED_MESSAGE =
  'This folder is open in Restricted Mode, so Qwen starts no server: the server would read the folder\'s files and settings and send them to the model with your API key. Trust the folder to start it.';

export function qwenSettings(scope?: vscode.Uri): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration('qwen', scope);
  return buildServerSettings((key) => cfg.inspect(key), vscode.workspace.isTrusted);
}

async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const api: any = ext.isActive ? ext.exports : await ext.activate();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const exec = api?.settings?.getExecutionDetails?.(folder)?.execCommand;
    if (Array.isArray(exec) && typeof exec[0] === 'string') return exec[0];
    const envPath = api?.environments?.getActiveEnvironmentPath?.(folder);
    const resolved = envPath ? await api.environments.resolveEnvironment(envPath) : undefined;
    return resolved?.executable?.uri?.fsPath;
  } catch {
    return undefined;
  }
}

export class ServerManager implements vscode.Disposable {
  client: LanguageClient | undefined;
  state: ServerState = 'stopped';
  command: ServerCommand | undefined;
  /** The last start failure, shown in the panel with its fix; cleared once the server runs. */
  failure: ServerFailureLike | undefined;
  private crashes: number[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly clientEmitter = new vscode.EventEmitter<LanguageClient>();
  /** Fires with each new client before it starts, so notification handlers can be registered. */
  readonly onDidCreateClient = this.clientEmitter.event;
  private starting: Promise<LanguageClient | undefined> | undefined;
  /** The settings the running server got as initializationOptions (see notifySettingsChanged). */
  private initOptions: Record<string, unknown> = {};
  /** Sees every workspace/executeCommand the client runs for the server's code actions (`next` sends it unchanged). */
  commandHook: ((client: LanguageClient, command: string, args: unknown[], next: () => Promise<unknown>) => Promise<unknown>) | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.OutputChannel,
  ) {}

  private setState(s: ServerState): void {
    this.state = s;
    if (s === 'running') this.failure = undefined;
    this.stateEmitter.fire(s);
  }

  /** The running client, starting the server first if needed; undefined when it cannot start. */
  ready(): Promise<LanguageClient | undefined> {
    if (this.state === 'restricted' && !vscode.workspace.isTrusted) return Promise.resolve(undefined);
    if (this.client && this.state === 'running') return Promise.resolve(this.client);
    return (this.starting ??= this.start().finally(() => (this.starting = undefined)));
  }

  private async start(): Promise<LanguageClient | undefined> {
    if (!vscode.workspace.isTrusted) {
      // Nothing of the folder's runs or is read: no probe, no interpreter the folder may have chosen, no server.
      this.failure = { message: RESTRICTED_MESSAGE, missing: false, restricted: true };
      this.output.appendLine(`[qwen] ${RESTRICTED_MESSAGE}`);
      this.setState('restricted');
      return undefined;
    }
    this.setState('starting');
    const launcher = path.join(this.context.extensionPath, 'bundled', 'launch.py');
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    // Outside every folder; a folder holding all three (`/`) leaves the extension's own, where -P still keeps it off sys.path.
    const cwd = serverCwd(folders, [this.context.extensionPath, homedir(), tmpdir()]) ?? this.context.extensionPath;
    const probes: Probes = {
      isExecutable,
      hasPackage: (python) => hasPackage(python, cwd),
      pythonInterpreter: pythonExtensionInterpreter,
      bundledLauncher: existsSync(path.join(this.context.extensionPath, 'bundled', 'libs', 'target.json')) ? launcher : undefined,
      bundleUnfit: (python, l) => bundleUnfit(python, l, cwd),
      env: process.env,
      platform: process.platform,
    };
    let cmd: ServerCommand;
    try {
      cmd = await resolveServerCommand(vscode.workspace.getConfiguration('qwen').inspect<string>('server.path')?.globalValue, probes);
    } catch (err) {
      this.failure = { message: err instanceof ServerNotFound ? err.message : String(err), missing: true };
      this.setState('failed');
      this.showStartError(this.failure.message);
      return undefined;
    }
    this.command = cmd;
    this.output.appendLine(`[qwen] starting the server (${cmd.source}) in ${cwd}: ${cmd.command} ${cmd.args.join(' ')}`);
    const env: NodeJS.ProcessEnv = { ...process.env };
    const key = await this.context.secrets.get(API_KEY_SECRET);
    if (key) env.OPENAI_API_KEY = key;
    const exe: Executable = { command: cmd.command, args: cmd.args, options: { env, cwd } };
    this.initOptions = qwenSettings();
    const options: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      initializationOptions: this.initOptions,
      outputChannel: this.output,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          const now = Date.now();
          this.crashes = [...this.crashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
          if (this.crashes.length <= MAX_RESTARTS) return { action: CloseAction.Restart };
          this.failure = { message: `The qwen-lsp server (${cmd.command}) stopped ${MAX_RESTARTS + 1} times in 3 minutes. The log says why.`, missing: false };
          this.setState('failed');
          this.showStartError(this.failure.message);
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        executeCommand: (command, args, next) =>
          this.commandHook ? this.commandHook(client, command, args, async () => next(command, args)) : next(command, args),
        workspace: {
          // The server pulls section "qwen": answer with only the explicitly set values.
          configuration: (params) =>
            params.items.map((item) => (item.section === 'qwen' ? qwenSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined) : null)),
        },
      },
    };
    const client = new LanguageClient('qwen', 'Qwen', exe, options);
    client.registerFeature(qwenCapabilitiesFeature);
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.setState('running');
      else if (e.newState === State.Stopped && this.state !== 'failed') this.setState('stopped');
    });
    this.clientEmitter.fire(client);
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      const why = err instanceof Error ? err.message : String(err);
      this.failure = { message: `The qwen-lsp server (${cmd.command} ${cmd.args.join(' ')}) did not start: ${why}. Check that it runs in a terminal, or set qwen.server.path.`, missing: true };
      this.setState('failed');
      this.showStartError(this.failure.message);
      return undefined;
    }
    this.setState('running');
    const stale = staleServerWarning(cmd, client.initializeResult?.serverInfo?.version, String(this.context.extension.packageJSON.version));
    if (stale) {
      this.output.appendLine(`[qwen] ${stale}`);
      void vscode.window.showWarningMessage(stale);
    }
    return client;
  }

  async restart(): Promise<LanguageClient | undefined> {
    this.crashes = [];
    await this.stop();
    return this.ready();
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) {
      try {
        await c.stop(5000);
      } catch {
        // already gone
      }
    }
    this.setState('stopped');
  }

  /**
   * Signals a change without values: the server pulls section `qwen` again for each folder (with its
   * `scopeUri`), so a folder's own resource-scoped settings are never replaced by the window's.
   */
  notifySettingsChanged(): void {
    const c = this.client;
    if (!c || this.state !== 'running') return;
    const dropped = droppedKeys(this.initOptions, qwenSettings());
    if (dropped.length) {
      // A pull cannot unset what the server started with: a restart makes the cleared value "the model's own" again.
      this.output.appendLine(`[qwen] ${dropped.map((k) => `qwen.${k}`).join(', ')} cleared: restarting the server`);
      void vscode.commands.executeCommand('qwen.restartServer');
      return;
    }
    void c.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
  }

  private showStartError(message: string): void {
    this.output.appendLine(`[qwen] ${message}`);
    void vscode.window.showErrorMessage(message, 'Restart server', 'Set server path', 'Show log').then((pick) => {
      if (pick === 'Restart server') void vscode.commands.executeCommand('qwen.restartServer');
      // The set-up command writes the scope a remote window reads (Settings hides machine keys on its User tab there).
      else if (pick === 'Set server path') void vscode.commands.executeCommand('qwen.setServerPath');
      else if (pick === 'Show log') this.output.show(true);
    });
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.clientEmitter.dispose();
  }
}
