/**
 * The server's slash commands and `@` files in the panel: the command list for the composer's
 * completion (qwen/commands/list), a `/…` message run through qwen/command (asking in a modal
 * when the command asks), and the files an `@` completes to (qwen/files/complete).
 */
import * as vscode from 'vscode';
import { requests } from '../rpc.generated';
import type { Send } from '../rpc.generated';
import type { ServerManager } from '../server';
import type { CommandInfo, CommandResult } from '../shared/protocol';
import type { WebviewHub } from './hub';

export class SlashCommands {
  private commands: CommandInfo[] = [];

  constructor(
    private readonly hub: WebviewHub,
    private readonly server: ServerManager,
  ) {}

  /** Sends the command list to the views (fetched once per server). */
  async publish(webview?: vscode.Webview): Promise<void> {
    if (!this.commands.length) {
      const client = await this.server.ready();
      if (!client) return;
      try {
        this.commands = (await client.sendRequest(requests.commandsList, {})).commands;
      } catch {
        return; // an older server without commands: the composer offers none
      }
    }
    const msg = { type: 'commands', commands: this.commands } as const;
    if (webview) this.hub.post(webview, msg);
    else this.hub.broadcast(msg);
  }

  /** A new server may have other commands. */
  forget(): void {
    this.commands = [];
  }

  async completeFiles(query: string, webview: vscode.Webview): Promise<void> {
    const client = await this.server.ready();
    if (!client) return;
    try {
      const r = await client.sendRequest(requests.filesComplete, { query, limit: 30 });
      this.hub.post(webview, { type: 'fileCompletions', query, items: r.items });
    } catch {
      this.hub.post(webview, { type: 'fileCompletions', query, items: [] });
    }
  }
}

/**
 * Runs `text` through qwen/command; when the command asks first, the question is a modal and a
 * "Yes" sends the same line again with the token. No: the result says it was cancelled.
 */
export async function runCommand(send: Send, text: string, sessionId: string | undefined): Promise<CommandResult> {
  const base = { text, ...(sessionId ? { sessionId } : {}) };
  const first = await send(requests.command, base);
  if (first.status !== 'confirm' || !first.confirm) return first;
  const yes = await vscode.window.showWarningMessage(first.text, { modal: true }, 'Yes');
  if (yes !== 'Yes') return { status: 'done', text: 'Cancelled.', ...(first.command ? { command: first.command } : {}) };
  return send(requests.command, { ...base, confirm: first.confirm });
}
