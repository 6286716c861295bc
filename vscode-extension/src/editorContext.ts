/**
 * Tells the server what the user is looking at (`qwen/editorContext`, docs/editor-context.md): the
 * focused editor, its cursor and its selection, debounced, re-sent to a restarted server. Open files
 * need nothing here: the language client's didOpen/didClose carry them.
 *
 * As Qwen Code's VS Code companion does, focus moving to a non-editor (the chat view, a terminal)
 * keeps the last editor as the active file; only closing its document clears it. Files outside the
 * workspace folders are not described (the server would drop them anyway), and with
 * `qwen.editorContext.enabled` off nothing is sent or shown.
 */
import * as vscode from 'vscode';
import * as path from 'node:path';
import type { LanguageClient } from 'vscode-languageclient/node';
import { editorContextLabel, editorContextParams } from './editorContextLabel';
import type { FocusedEditor } from './editorContextLabel';
import { clientNotifications } from './rpc.generated';

const DEBOUNCE_MS = 100;

export function editorContextEnabled(): boolean {
  return vscode.workspace.getConfiguration('qwen').get<boolean>('editorContext.enabled', true) !== false;
}

export class EditorContextTracker implements vscode.Disposable {
  private editor: vscode.TextEditor | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private client: LanguageClient | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  /** `onChange` gets the panel's label for what goes along, or undefined when nothing does. */
  constructor(private readonly onChange: (label: string | undefined) => void) {
    this.editor = usable(vscode.window.activeTextEditor);
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (usable(e)) this.update(e);
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (usable(e.textEditor)) this.update(e.textEditor);
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (this.editor && this.editor.document === doc) this.update(undefined);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('qwen.editorContext')) this.update(this.editor);
      }),
    );
  }

  /** A (re)started client gets the current context at once. */
  bind(client: LanguageClient): void {
    this.client = client;
    client.onDidChangeState(() => {
      if (this.client === client && client.isRunning()) this.flush();
    });
  }

  get label(): string | undefined {
    return editorContextEnabled() ? editorContextLabel(describe(this.editor)) : undefined;
  }

  private update(editor: vscode.TextEditor | undefined): void {
    this.editor = editor;
    this.onChange(this.label);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), DEBOUNCE_MS);
  }

  private flush(): void {
    this.timer = undefined;
    const params = editorContextParams(editorContextEnabled() ? describe(this.editor) : undefined);
    if (this.client?.isRunning()) void this.client.sendNotification(clientNotifications.editorContext, params).catch(() => undefined);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

function usable(e: vscode.TextEditor | undefined): vscode.TextEditor | undefined {
  return e && e.document.uri.scheme === 'file' && vscode.workspace.getWorkspaceFolder(e.document.uri) ? e : undefined;
}

function describe(e: vscode.TextEditor | undefined): FocusedEditor | undefined {
  if (!e) return undefined;
  const s = e.selection;
  return {
    uri: e.document.uri.toString(),
    name: path.basename(e.document.uri.fsPath),
    cursor: { line: s.active.line, character: s.active.character },
    selection: { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } },
  };
}
