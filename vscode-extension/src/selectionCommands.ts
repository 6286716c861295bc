/**
 * The editor's two ways to keep a selection: "Remember this convention" (a project `feedback`
 * memory) and "Add to QWEN.md" (under `## Qwen Added Memories`). Both report the same way: a
 * non-modal notice naming the file with an "Open" button (focus stays in the editor unless the
 * user clicks it). The server offers both as code actions too; those run through the client's
 * executeCommand middleware (`runServerCommand`), so the lightbulb and the menu report alike and
 * a refusal is not turned into the client's generic "request failed" error.
 */
import * as vscode from 'vscode';
import { homedir } from 'node:os';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { ServerManager } from './server';
import { describeError } from './errors';
import { conventionText, NO_MEMORY_SUPPORT, REMEMBER_COMMAND, rememberSelection, savedNotice, tildify } from './memory';
import type { RememberOutcome } from './memory';
import { sendVia } from './memoryView';
import { commands } from './rpc.generated';
import type { SelectionArgs } from './shared/protocol';

/** The server-side command behind "Add to QWEN.md" (docs/protocol.md). */
export const ADD_TO_RULES_COMMAND = 'qwen.addToProjectRules';

function selection(): { text: string; uri: string } | undefined {
  const editor = vscode.window.activeTextEditor;
  const text = editor?.document.getText(editor.selection);
  return editor && text?.trim() ? { text, uri: editor.document.uri.toString() } : undefined;
}

function serverCommands(client: LanguageClient): string[] {
  return client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
}

async function showSaved(what: 'memory' | 'rules', file: string, scope?: string): Promise<void> {
  const shown = tildify(vscode.workspace.asRelativePath(file), homedir());
  const pick = await vscode.window.showInformationMessage(savedNotice(what, shown, scope), 'Open');
  if (pick === 'Open') await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
}

function reportRemember(outcome: RememberOutcome): void {
  switch (outcome.kind) {
    case 'saved':
      if (outcome.result?.path) void showSaved('memory', outcome.result.path, outcome.result.scope);
      else void vscode.window.showInformationMessage('Remembered.');
      break;
    case 'unsupported':
      void vscode.window.showInformationMessage(NO_MEMORY_SUPPORT);
      break;
    case 'refused':
      void vscode.window.showWarningMessage(outcome.message);
      break;
    case 'failed':
      void vscode.window.showErrorMessage(describeError(outcome.error).message);
      break;
  }
}

export async function rememberConvention(server: ServerManager): Promise<void> {
  const sel = selection();
  if (!sel) return void vscode.window.showInformationMessage('Select the convention to remember first.');
  const client = await server.ready();
  if (!client) return;
  reportRemember(await rememberSelection(sendVia(client), serverCommands(client), asConvention(sel)));
}

/** The selection as a convention: comment markers and a "Convention:" label dropped (conventionText). */
function asConvention(sel: { text: string; uri?: string }): { text: string; uri?: string } {
  const languageId = vscode.workspace.textDocuments.find((d) => d.uri.toString() === sel.uri)?.languageId;
  return { ...sel, text: conventionText(sel.text, languageId) };
}

async function addToRules(client: LanguageClient, args: unknown[]): Promise<unknown> {
  try {
    const r = await client.sendRequest(commands.addToProjectRules, { command: ADD_TO_RULES_COMMAND, arguments: args as [SelectionArgs] });
    void showSaved('rules', r.path);
    return r;
  } catch (err) {
    void vscode.window.showErrorMessage(describeError(err).message);
    return undefined;
  }
}

export async function addSelectionToProjectRules(server: ServerManager): Promise<void> {
  const sel = selection();
  if (!sel) return void vscode.window.showInformationMessage('Select the text to add to QWEN.md first.');
  const client = await server.ready();
  if (!client) return;
  await addToRules(client, [sel]);
}

/**
 * executeCommand middleware: the two selection commands, when run from the server's code
 * actions, are sent here and reported like the menu items; every other command goes on as is.
 */
export async function runServerCommand(client: LanguageClient, command: string, args: unknown[], next: () => Promise<unknown>): Promise<unknown> {
  if (command === ADD_TO_RULES_COMMAND) return addToRules(client, args);
  if (command !== REMEMBER_COMMAND) return next();
  const sel = args[0] as { text: string; uri?: string };
  reportRemember(await rememberSelection(sendVia(client), [REMEMBER_COMMAND], asConvention(sel)));
  return undefined;
}
