/**
 * The editor's two ways to keep a selection: "Remember this convention" (a project `feedback`
 * memory) and "Add to QWEN.md" (under `## Qwen Added Memories`). "Remember this convention" first
 * asks for the convention in words (an input box prefilled from the selection, comment markers
 * dropped; Escape saves nothing): a selected code line is no rule a later chat can follow. Both
 * report the same way: a non-modal notice naming what was written and the file, with "Open"
 * (and, for a memory, "Undo", which forgets it again); focus stays in the editor unless the user
 * clicks. The server offers both as code actions too; those run through the client's
 * executeCommand middleware (`runServerCommand`), so the lightbulb and the menu report alike and
 * a refusal is not turned into the client's generic "request failed" error.
 */
import * as vscode from 'vscode';
import { homedir } from 'node:os';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { ServerManager } from './server';
import { describeError } from './errors';
import { conventionText, forget, NO_MEMORY_SUPPORT, REMEMBER_COMMAND, rememberSelection, savedNotice, tildify, undoneNotice } from './memory';
import type { RememberOutcome } from './memory';
import type { Send } from './rpc.generated';
import { sendVia } from './memoryView';
import { commands } from './rpc.generated';
import type { MemoryRememberResult, SelectionArgs } from './shared/protocol';

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

function shownPath(file: string): string {
  return tildify(vscode.workspace.asRelativePath(file), homedir());
}

async function open(file: string): Promise<void> {
  await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
}

async function showSaved(file: string): Promise<void> {
  if ((await vscode.window.showInformationMessage(savedNotice('rules', shownPath(file)), 'Open')) === 'Open') await open(file);
}

/** The memory by name and file, with Open and Undo (Undo is qwen/memory/forget of that one file). */
async function showRemembered(send: Send, r: MemoryRememberResult): Promise<void> {
  const name = r.name || r.path;
  const pick = await vscode.window.showInformationMessage(savedNotice('memory', shownPath(r.path), r.scope, name), 'Open', 'Undo');
  if (pick === 'Open') return open(r.path);
  if (pick !== 'Undo') return;
  try {
    const done = undoneNotice(name, (await forget(send, [r.path])).includes(r.path));
    void (done.severity === 'info' ? vscode.window.showInformationMessage(done.text) : vscode.window.showWarningMessage(done.text));
  } catch (err) {
    void vscode.window.showErrorMessage(describeError(err).message);
  }
}

function reportRemember(send: Send, outcome: RememberOutcome): void {
  switch (outcome.kind) {
    case 'saved':
      if (outcome.result?.path) void showRemembered(send, outcome.result);
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
  await rememberAsked(client, serverCommands(client), sel);
}

/**
 * Asks for the convention in words, prefilled with the selection as a convention (comment markers
 * and a "Convention:" label dropped, conventionText); undefined when the user pressed Escape.
 */
async function askConvention(sel: { text: string; uri?: string }): Promise<string | undefined> {
  const languageId = vscode.workspace.textDocuments.find((d) => d.uri.toString() === sel.uri)?.languageId;
  return vscode.window.showInputBox({
    title: 'Remember this convention',
    prompt: 'The convention as a rule a later chat can follow; saved as a project memory.',
    value: conventionText(sel.text, languageId),
    validateInput: (v) => (v.trim() ? undefined : 'Say the convention in a few words.'),
  });
}

async function rememberAsked(client: LanguageClient, declared: readonly string[], sel: { text: string; uri?: string }): Promise<void> {
  const words = await askConvention(sel);
  if (!words?.trim()) return;
  const send = sendVia(client);
  reportRemember(send, await rememberSelection(send, declared, { ...sel, convention: words.trim() }));
}

async function addToRules(client: LanguageClient, args: unknown[]): Promise<unknown> {
  try {
    const r = await client.sendRequest(commands.addToProjectRules, { command: ADD_TO_RULES_COMMAND, arguments: args as [SelectionArgs] });
    void showSaved(r.path);
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
  await rememberAsked(client, [REMEMBER_COMMAND], args[0] as { text: string; uri?: string });
  return undefined;
}
