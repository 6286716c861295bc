/**
 * What goes along with the next message from the editor: the attached selections and files, and
 * the editor context (the active file and selection, src/editorContext.ts) unless the user left it
 * out for that message. Also the editor the panel's "Insert" writes into.
 */
import * as vscode from 'vscode';
import * as path from 'node:path';
import type { LanguageClient } from 'vscode-languageclient/node';
import { EditorContextTracker } from '../editorContext';
import type { AttachmentChip, EditorContextChip } from '../shared/messages';
import type { AttachmentParam } from '../shared/protocol';
import { requests } from '../rpc.generated';
import type { WebviewHub } from './hub';

/** What one message takes along (and the chips are cleared for the next). */
export interface Outgoing {
  attachments: AttachmentParam[];
  leaveOutEditorContext: boolean;
}

export class OutgoingContext implements vscode.Disposable {
  private attachments: AttachmentChip[] = [];
  private leftOut = false;
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly tracker = new EditorContextTracker(() => this.publishEditorContext());
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly hub: WebviewHub) {
    this.disposables = [
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e) this.lastEditor = e;
      }),
      this.tracker,
    ];
  }

  bind(client: LanguageClient): void {
    this.tracker.bind(client);
  }

  get chips(): AttachmentChip[] {
    return this.attachments;
  }

  get editorContextChip(): EditorContextChip | undefined {
    const label = this.tracker.label;
    return label ? { label, leftOut: this.leftOut } : undefined;
  }

  /** The next message's attachments and editor-context choice; both reset for the message after. */
  take(): Outgoing {
    const attachments = this.attachments.map(({ uri, range }) => (range ? { uri, range } : { uri }));
    this.attachments = [];
    this.publishAttachments();
    const leaveOutEditorContext = this.leftOut; // for this message only
    this.leftOut = false;
    if (leaveOutEditorContext) this.publishEditorContext();
    return { attachments, leaveOutEditorContext };
  }

  toggleEditorContext(): void {
    this.leftOut = !this.leftOut;
    this.publishEditorContext();
  }

  attachSelection(): void {
    const editor = this.editor();
    if (!editor) return void vscode.window.showInformationMessage('Open a file to attach its selection.');
    const sel = editor.selection;
    if (sel.isEmpty) return this.attachFile();
    const name = path.basename(editor.document.uri.fsPath);
    this.add({
      uri: editor.document.uri.toString(),
      range: { start: { line: sel.start.line, character: 0 }, end: { line: sel.end.line, character: sel.end.character } },
      label: `${name}:${sel.start.line + 1}-${sel.end.line + 1}`,
    });
  }

  attachFile(): void {
    const editor = this.editor();
    if (!editor) return void vscode.window.showInformationMessage('Open a file to attach it.');
    this.add({ uri: editor.document.uri.toString(), label: path.basename(editor.document.uri.fsPath) });
  }

  /**
   * "Attach Files…": the system file picker, several at once (images too: the server sends them as
   * image parts to a model that takes images, and refuses them with a clear message otherwise).
   * Files outside the workspace are not offered to the server, which would refuse them.
   */
  async pickFiles(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const picked = await vscode.window.showOpenDialog({ canSelectMany: true, openLabel: 'Attach', title: 'Qwen: Attach files to the chat', ...(folder ? { defaultUri: folder.uri } : {}) });
    const outside: string[] = [];
    for (const uri of picked ?? []) {
      if (vscode.workspace.getWorkspaceFolder(uri)) this.add({ uri: uri.toString(), label: path.basename(uri.fsPath) });
      else outside.push(path.basename(uri.fsPath));
    }
    if (outside.length) void vscode.window.showWarningMessage(`Only files inside the workspace can be attached: ${outside.join(', ')}`);
  }

  /** An `@` completion picked a file (relative to the workspace folder): it goes along as a chip. */
  attachPath(relative: string): void {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder || relative.endsWith('/')) return; // a folder stays an @mention in the text (the server reads its files)
    const uri = vscode.Uri.joinPath(folder.uri, ...relative.split('/'));
    this.add({ uri: uri.toString(), label: path.basename(relative) });
  }

  /**
   * An image pasted into the composer: the server writes it to Qwen Code's clipboard folder
   * (~/.qwen/tmp/clipboard, never the project) and names it; it goes along as a chip like any
   * attachment. Not an image, or over 10 MB: the server's message says so.
   */
  async paste(client: LanguageClient, data: string): Promise<void> {
    try {
      const saved = await client.sendRequest(requests.attachmentsPaste, { data });
      this.add({ uri: vscode.Uri.file(saved.path).toString(), label: saved.name });
    } catch (err) {
      void vscode.window.showWarningMessage(`The pasted image was not attached: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  remove(index: number): void {
    this.attachments = this.attachments.filter((_, i) => i !== index);
    this.publishAttachments();
  }

  /** The panel's "Insert" on a code block: the text replaces every selection of the editor last used. */
  async insertAtCursor(text: string): Promise<void> {
    const editor = this.editor();
    if (!editor) return void vscode.window.showInformationMessage('Open a file to insert the code into.');
    await editor.edit((eb) => {
      for (const sel of editor.selections) eb.replace(sel, text);
    });
  }

  private add(chip: AttachmentChip): void {
    if (!this.attachments.some((a) => a.uri === chip.uri && JSON.stringify(a.range) === JSON.stringify(chip.range))) this.attachments.push(chip);
    this.publishAttachments();
  }

  /** The panel has the focus, so the active editor may be none: the one used last counts. */
  private editor(): vscode.TextEditor | undefined {
    return vscode.window.activeTextEditor ?? this.lastEditor;
  }

  private publishAttachments(): void {
    this.hub.broadcast({ type: 'attachments', attachments: this.attachments });
  }

  private publishEditorContext(): void {
    this.hub.broadcast({ type: 'editorContext', chip: this.editorContextChip ?? null });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
