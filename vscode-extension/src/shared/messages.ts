/**
 * Messages between the extension host and the chat webview, and the transcript they describe.
 * The host owns the transcript of the open session (the server owns the durable copy); the
 * webview only renders it, so a hidden-then-shown or reloaded view is rebuilt from a snapshot.
 */
import type { Attachment, CompressMode, SessionSummary } from './protocol';

export interface ToolCard {
  id: string;
  name: string;
  detail: string;
  result?: string;
  isError?: boolean;
}

export type ErrorAction = 'setApiKey' | 'openSettings' | 'restartServer' | 'retry' | 'showLog';

export interface InlineError {
  kind: string;
  message: string;
  actions: ErrorAction[];
}

export type StatusTone = 'info' | 'warning' | 'error';

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
  pending?: boolean;
  tone?: StatusTone;
  thought?: string;
  tools?: ToolCard[];
  interrupted?: boolean;
  streaming?: boolean;
  error?: InlineError;
}

export interface AttachmentChip extends Attachment {
  label: string;
}

export interface Notice {
  id: string;
  text: string;
  /** A file the notice is about; the webview offers to open it by the notice's id. */
  uri?: string;
  /** The open button's text and the start of its accessible name. */
  openLabel?: string;
}

export interface Snapshot {
  sessionId?: string;
  messages: TranscriptMessage[];
  running: boolean;
  attachments: AttachmentChip[];
  notices: Notice[];
  meter?: string;
  compact?: CompactState;
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
  | { op: 'tool'; id: string; card: ToolCard };

export type HostToWebview =
  | { type: 'snapshot'; snapshot: Snapshot }
  | { type: 'patches'; patches: StreamPatch[] }
  | { type: 'message'; message: TranscriptMessage }
  | { type: 'running'; running: boolean }
  | { type: 'sessions'; sessions: SessionSummary[] }
  | { type: 'attachments'; attachments: AttachmentChip[] }
  | { type: 'notices'; notices: Notice[] }
  | { type: 'compactState'; state: CompactState }
  | { type: 'showHistory' }
  | { type: 'focusComposer' };

export type WebviewToHost =
  | { type: 'ready' }
  | { type: 'send'; prompt: string }
  | { type: 'stop' }
  | { type: 'newChat' }
  | { type: 'compact'; mode: CompressMode }
  | { type: 'listSessions' }
  | { type: 'resumeSession'; sessionId: string }
  | { type: 'deleteSession'; sessionId: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  | { type: 'attachSelection' }
  | { type: 'attachFile' }
  | { type: 'removeAttachment'; index: number }
  | { type: 'dismissNotice'; id: string }
  | { type: 'openNotice'; id: string }
  | { type: 'openLink'; href: string }
  | { type: 'action'; action: ErrorAction };
