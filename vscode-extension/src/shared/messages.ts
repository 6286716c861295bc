/**
 * Messages between the extension host and the chat webview, and the transcript they describe.
 * The host owns the transcript of the open session (the server owns the durable copy); the
 * webview only renders it, so a hidden-then-shown or reloaded view is rebuilt from a snapshot.
 */
import type { AttachmentParam, CommandInfo, CompressMode, ContextChange, ErrorKind, FileCompletionItem, Level, ToolDecision } from './protocol';

export interface ToolCard {
  /** The model's tool-call id; several OpenAI-compatible servers reuse it every round (`call_0`). */
  id: string;
  /** Unique within its message (the call's position in the answer): what rows and results are matched by. */
  key: string;
  name: string;
  detail: string;
  /** Where the row sits in the answer: after this many characters of its text. */
  at: number;
  /** The arguments as sent, pretty-printed and bounded, shown when the row is expanded. */
  args?: string;
  /** The file the call is about (absolute), offered as a link on the expanded row. */
  path?: string;
  /** The one-line summary of the output shown on the row. */
  result?: string;
  /** The output, bounded, shown when the row is expanded. */
  output?: string;
  isError?: boolean;
  /** For writes and commands: how it was approved (`auto`: the approval mode allowed it). */
  decision?: ToolDecision;
}

export type ErrorAction = 'setApiKey' | 'openSettings' | 'restartServer' | 'retry' | 'showLog' | 'configureModel' | 'setServerPath' | 'manageTrust';

/**
 * What the panel's welcome shows a new user, step by step, each with its fix: the server, the
 * model (the extension's settings), the API key, then a test message.
 */
export interface SetupState {
  /** `restricted`: the folder is not trusted, so no server runs (Restricted Mode). */
  server: 'starting' | 'running' | 'stopped' | 'failed' | 'restricted';
  /** Why the server is not running, and whether a server path would fix it. */
  serverProblem?: { message: string; missing: boolean };
  /** qwen.model.name and qwen.model.baseUrl as set in VS Code (they may also come from the environment or ~/.qwen). */
  model?: string;
  baseUrl?: string;
  apiKey: boolean;
  /** A model answered in this window since the model settings last changed: the test step is done. */
  answered?: boolean;
}

/**
 * What an inline error is about: the server's `data.kind` (generated from qwen_lsp/errors.py), or
 * one the extension finds itself: the server is down or back, a feature the server lacks, a
 * recorded error without a kind, or a failure nobody named.
 */
export type InlineErrorKind = ErrorKind | 'server_down' | 'server_back' | 'unsupported' | 'noAnswer' | 'unknown';

export interface InlineError {
  kind: InlineErrorKind;
  message: string;
  actions: ErrorAction[];
}

export type StatusTone = 'info' | 'warning' | 'error' | 'recap';

/**
 * A message, or (role `status`) one quiet line between messages, e.g. a manual compaction:
 * `pending` while it runs, then its result in place.
 */
export interface TranscriptMessage {
  id: string;
  role: 'user' | 'assistant' | 'status';
  text: string;
  /** Status notes the server sent during this answer (e.g. the history was compressed first). */
  notes?: string[];
  /** What the context of this turn's request gained (the server's contextChanges event): chips under the answer. */
  changes?: ContextChange[];
  pending?: boolean;
  tone?: StatusTone;
  thought?: string;
  tools?: ToolCard[];
  interrupted?: boolean;
  streaming?: boolean;
  error?: InlineError;
}

export interface AttachmentChip extends AttachmentParam {
  label: string;
}

export interface Notice {
  id: string;
  text: string;
  /** A file the notice is about; the webview offers to open it by the notice's id. */
  uri?: string;
  /** The open button's text and the start of its accessible name. */
  openLabel?: string;
  /**
   * How many transcript messages came before it: the webview shows the notice in the transcript
   * at that point, so notices scroll with the conversation instead of stacking above it.
   */
  at?: number;
}

/**
 * A tool call waiting for the user's decision. The webview renders it as a card above the
 * composer; the host fills it from the server's qwen/permission request (src/permission.ts).
 */
export interface ApprovalRequest {
  id: string;
  title: string;
  /** What would run or change (a command line, a path), shown as text. */
  detail?: string;
  /** Where a shell command runs (absolute). */
  directory?: string;
  /** In words, what "Allow always" would let run without asking again (the server's alwaysCovers). */
  covers?: string;
  /**
   * While set, the allow options are off and this says why: the change is not yet open whole in
   * the diff editor, or cannot be (an approval never shows less than it approves).
   */
  hold?: string;
  options: ApprovalOption[];
}

export interface ApprovalOption {
  id: string;
  label: string;
  /** `reject` options are what Esc picks, and they carry the optional reason. */
  kind: 'allow' | 'reject';
}

/** The follow-up suggestion shown as a chip above the composer (qwen/suggestion). */
export interface Suggestion {
  id: string;
  text: string;
  /** Its speculative result is ready: accepting applies it at once. */
  ready: boolean;
}

/** A skill the server proposes after a busy session (qwen/skillProposed), shown as a card with Accept / Discard. */
export interface SkillProposal {
  id: string;
  name: string;
  description: string;
  /** The proposed SKILL.md, shown as code. */
  text: string;
}

/** What goes along with the next message from the editor ("main.py · lines 10–14 selected"). */
export interface EditorContextChip {
  label: string;
  /** The user left it out of the next message (that message only). */
  leftOut: boolean;
}
/**
 * The approval modes in the panel's picker, labelled as Qwen Code 0.24.4's settings dialog labels them
 * (`tools.approvalMode`; docs/interop.md says what each does).
 */
export const APPROVAL_MODES = [
  { mode: 'default', label: 'Ask permissions' },
  { mode: 'plan', label: 'Plan' },
  { mode: 'auto-edit', label: 'Auto Edit' },
  { mode: 'auto', label: 'Auto' },
  { mode: 'yolo', label: 'YOLO' },
] as const;
export type ApprovalModeName = (typeof APPROVAL_MODES)[number]['mode'];

export interface Snapshot {
  sessionId?: string;
  messages: TranscriptMessage[];
  running: boolean;
  attachments: AttachmentChip[];
  notices: Notice[];
  meter?: string;
  compact?: CompactState;
  /** The pending approval, so a hidden-then-shown or reloaded view shows the card again. */
  approval?: ApprovalRequest;
  /** The follow-up suggestion, so it survives hide and reload like the rest. */
  suggestion?: Suggestion;
  skillProposals?: SkillProposal[];
  editorContext?: EditorContextChip;
  /** The mode the picker shows (`qwen.tools.approvalMode`, `default` when unset). */
  approvalMode?: ApprovalModeName;
  /** The welcome's steps, shown while the chat is empty. */
  setup?: SetupState;
  contextFigure?: ContextFigureLine;
  /**
   * The chat of the last window is being brought back (the server may still be starting): the
   * panel says so instead of staying blank, and a second snapshot follows with its messages.
   */
  restoring?: boolean;
  /** `qwen.chat.showContextChanges`: the chips under each answer (absent: shown). */
  showContextChanges?: boolean;
}

/** The context figure under the composer: the status bar's, worded the same (src/meter.ts). */
export interface ContextFigureLine {
  /** "92% left" */
  left: string;
  /** The tokens and where each level starts, for the tooltip. */
  title: string;
  level: Level;
}

/** Whether "Compact" can run now (a chat with a session exists) and whether it is running. */
export interface CompactState {
  available: boolean;
  compacting: boolean;
}

/** One streamed change to the message being written; many are batched per frame. */
export type StreamPatch =
  | { op: 'append'; id: string; text: string }
  | { op: 'thought'; id: string; text: string }
  | { op: 'note'; id: string; text: string }
  | { op: 'changes'; id: string; changes: ContextChange[] }
  | { op: 'tool'; id: string; card: ToolCard };

export type HostToWebview =
  | { type: 'snapshot'; snapshot: Snapshot }
  | { type: 'patches'; patches: StreamPatch[] }
  | { type: 'message'; message: TranscriptMessage }
  | { type: 'running'; running: boolean }
  | { type: 'attachments'; attachments: AttachmentChip[] }
  | { type: 'notices'; notices: Notice[] }
  | { type: 'compactState'; state: CompactState }
  | { type: 'approval'; approval: ApprovalRequest | null }
  | { type: 'suggestion'; suggestion: Suggestion | null }
  | { type: 'skillProposals'; proposals: SkillProposal[] }
  | { type: 'editorContext'; chip: EditorContextChip | null }
  | { type: 'approvalMode'; mode: ApprovalModeName }
  | { type: 'focusComposer' }
  | { type: 'showContextChanges'; show: boolean }
  | { type: 'contextFigure'; figure: ContextFigureLine | null }
  | { type: 'setup'; setup: SetupState }
  /** The server's slash commands (qwen/commands/list), offered when the composer starts with `/`. */
  | { type: 'commands'; commands: CommandInfo[] }
  /** The answer to `completeFiles` for `query` (qwen/files/complete). */
  | { type: 'fileCompletions'; query: string; items: FileCompletionItem[] };

export type WebviewToHost =
  | { type: 'ready' }
  | { type: 'send'; prompt: string }
  | { type: 'stop' }
  | { type: 'newChat' }
  | { type: 'compact'; mode: CompressMode }
  | { type: 'showHistory' }
  | { type: 'showContext' }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  | { type: 'attachSelection' }
  | { type: 'attachFile' }
  | { type: 'removeAttachment'; index: number }
  | { type: 'dismissNotice'; id: string }
  | { type: 'openNotice'; id: string }
  | { type: 'openLink'; href: string }
  /** A context chip was clicked: the host opens the files the server named for it. */
  | { type: 'openContextChange'; id: string; index: number }
  | { type: 'action'; action: ErrorAction }
  | { type: 'approvalReply'; id: string; optionId: string; reason?: string }
  | { type: 'acceptSuggestion'; id: string }
  | { type: 'dismissSuggestion'; id: string }
  | { type: 'skillProposalReply'; id: string; accept: boolean }
  | { type: 'toggleEditorContext' }
  | { type: 'setApprovalMode'; mode: ApprovalModeName }
  /** `@` typed in the composer: the workspace files and folders matching `query`. */
  | { type: 'completeFiles'; query: string }
  /** An `@` completion was picked: the file goes along as a chip (relative to the workspace folder). */
  | { type: 'attachPath'; path: string }
  /** An image pasted into the composer, base64: the server saves it (qwen/attachments/paste) and it goes along as a chip. */
  | { type: 'pasteImage'; data: string };
