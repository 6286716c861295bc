// The few parts of the `vscode` API that src/chatController.ts (and the DiffEditorUi it builds)
// touch, so the controller's wiring runs under plain `node --test`, outside VS Code. Import this
// first: it answers `require('vscode')` for the modules imported after it (the test bundles keep
// 'vscode' external). Cancellation is vscode-jsonrpc's real CancellationTokenSource, the same
// implementation VS Code's API exposes. Records executeCommand calls, messages shown and settings written.
import Module from 'node:module';
import { pathToFileURL } from 'node:url';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';

const noEvent = () => ({ dispose() {} });

class Disposable {
  constructor(private readonly onDispose: () => void) {}
  dispose(): void {
    this.onDispose();
  }
}

const uri = (s: string) => ({ toString: () => s, fsPath: s.startsWith('file://') ? new URL(s).pathname : s, scheme: s.split(':')[0] });

export const executed: unknown[][] = [];
export const shown: string[] = [];
/** `qwen.*` settings as `getConfiguration('qwen')` reads and updates them (keys without the prefix). */
export const settings = new Map<string, unknown>();

export const fakeVscode = {
  Disposable,
  CancellationTokenSource,
  TabInputText: class {},
  TabInputTextDiff: class {},
  TabInputWebview: class {},
  ViewColumn: { Active: -1, Beside: -2 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  Uri: { file: (p: string) => uri(pathToFileURL(p).toString()), parse: (s: string) => uri(s) },
  workspace: {
    getConfiguration: () => ({
      get: (key: string, fallback?: unknown) => settings.get(key) ?? fallback,
      inspect: (key: string) => ({ globalValue: settings.get(key) }),
      update: async (key: string, value: unknown) => void settings.set(key, value),
    }),
    asRelativePath: (p: string | { fsPath: string }) => String(typeof p === 'string' ? p : p.fsPath).replace(/^\/ws\//, ''),
    registerTextDocumentContentProvider: noEvent,
    onDidCloseTextDocument: noEvent,
    onDidChangeConfiguration: noEvent,
    getWorkspaceFolder: () => undefined,
  },
  window: {
    activeTextEditor: undefined,
    onDidChangeActiveTextEditor: noEvent,
    onDidChangeTextEditorSelection: noEvent,
    tabGroups: { onDidChangeTabs: noEvent, all: [] },
    showInformationMessage: async (m: string) => void shown.push(m),
    showErrorMessage: async (m: string) => void shown.push(m),
  },
  commands: { executeCommand: async (...args: unknown[]) => void executed.push(args) },
};

const M = Module as unknown as { _load(request: string, ...rest: unknown[]): unknown };
const load = M._load;
M._load = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? fakeVscode : load.call(this, request, ...rest);
};
