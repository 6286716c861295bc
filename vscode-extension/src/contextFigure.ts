/**
 * The chat's context figure, kept in one place so the status bar, the Context view and the panel
 * show the same number (meter.ts says which number and how it is worded). It follows the open
 * chat: qwen/contextStatus after each model round sets it; a chat whose last round is not known
 * (new, resumed, or the one a window reload brings back) asks qwen/context, so the meter shows a
 * figure from the start instead of only "Qwen". The last qwen/context report is kept too: it is
 * what the Context view lists, so that view is filled without clicking the meter.
 */
import * as vscode from 'vscode';
import { figureOfReport } from './meter';
import type { ContextFigure } from './meter';
import { requests } from './rpc.generated';
import type { ServerManager } from './server';
import type { ContextResult, ContextStatus } from './shared/protocol';

export class ContextFigures implements vscode.Disposable {
  private sessionId: string | undefined;
  /** The prompt size of the chat's last model round, when the server said it. */
  private lastRound: ContextStatus | undefined;
  /** The resumed chat's recorded prompt size, until a round of this window replaces it. */
  private recorded: number | undefined;
  report: ContextResult | undefined;
  /** Why the last report could not be had (the Context view says it). */
  error: unknown;
  figure: ContextFigure | undefined;
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;
  /** One qwen/context at a time; a request asked for meanwhile runs once after it. */
  private inFlight: Promise<void> | undefined;
  private again = false;

  constructor(private readonly server: ServerManager) {}

  /** The chat shown changed (new, resumed, restored after a reload): its figure is fetched. */
  follow(sessionId: string | undefined, promptTokens?: number): void {
    if (sessionId !== this.sessionId || sessionId === undefined) {
      this.sessionId = sessionId;
      this.lastRound = undefined;
    }
    this.recorded = promptTokens && promptTokens > 0 ? promptTokens : undefined;
    void this.refresh();
  }

  /** qwen/contextStatus: the figure of the chat's last round (another chat's status is ignored). */
  onStatus(s: ContextStatus, currentSession: string | undefined): void {
    if (currentSession !== undefined && s.sessionId !== currentSession) return;
    this.sessionId = s.sessionId;
    this.lastRound = s;
    this.recorded = undefined;
    this.publish();
  }

  /** Asks qwen/context for the chat (its parts for the Context view, and the figure before its first round). */
  refresh(): Promise<void> {
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    this.inFlight = (async () => {
      do {
        this.again = false;
        await this.load();
      } while (this.again);
      this.inFlight = undefined;
    })();
    return this.inFlight;
  }

  private async load(): Promise<void> {
    const client = await this.server.ready();
    if (!client) {
      this.error = new Error('The qwen-lsp server is not running');
      this.report = undefined;
      return this.publish();
    }
    const sid = this.sessionId;
    try {
      this.report = await client.sendRequest(requests.context, sid ? { sessionId: sid } : {});
      this.error = undefined;
    } catch (err) {
      this.report = undefined;
      this.error = err;
    }
    this.publish();
  }

  private publish(): void {
    const r = this.lastRound;
    if (r) this.figure = { promptTokens: r.promptTokens, window: r.window, percentLeft: r.percentLeft, level: r.level, thresholds: r.thresholds };
    // No model configured (the report names none): no figure, the window would belong to no model.
    else this.figure = this.report?.model ? figureOfReport(this.report, this.recorded) : undefined;
    this.emitter.fire();
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
