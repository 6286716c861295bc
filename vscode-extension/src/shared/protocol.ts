/**
 * The qwen/* wire types (design §3, docs/protocol.md). Shared by the extension host, the webview
 * and the protocol tests so the field names live in one place.
 */

export interface Attachment {
  uri: string;
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

export interface ChatParams {
  prompt: string;
  sessionId?: string;
  attachments?: Attachment[];
  workspaceUri?: string;
}

export interface ChatResult {
  sessionId: string;
  turnId: string;
  text: string;
  finishReason: 'stop' | 'length' | 'cancelled' | 'error';
  usage: { promptTokens: number; completionTokens: number };
}

export interface ToolInfo {
  id: string;
  name: string;
  args?: Record<string, unknown>;
  isError?: boolean;
}

export type ChatEventKind = 'text' | 'thought' | 'toolCall' | 'toolResult' | 'status' | 'error';

export interface ChatEvent {
  sessionId: string;
  turnId: string;
  seq: number;
  kind: ChatEventKind;
  text?: string;
  tool?: ToolInfo;
}

export interface ContextStatus {
  sessionId: string;
  promptTokens: number;
  window: number;
  percentLeft: number;
  level: 'ok' | 'warn' | 'auto' | 'hard';
}

export interface ContextReport {
  sections: { name: string; source?: string; tokens: number }[];
  totalTokens: number;
  window: number;
  thresholds: { warn: number; auto: number; hard: number };
}

export interface SessionSummary {
  sessionId: string;
  title: string;
  updatedAt: string;
  messageCount: number;
}

export interface ResumeResult {
  sessionId: string;
  messages: { role: 'user' | 'assistant'; text: string }[];
  promptTokens: number;
}

export interface SkillsList {
  skills: { name: string; description: string; level: string; path: string; conditional: boolean; active: boolean }[];
  errors: { path: string; message: string }[];
}

export interface SkillsChanged {
  activated: string[];
  deactivated: string[];
  trigger?: string;
}

/** JSON-RPC RequestCancelled: the only numeric code we key on (the qwen/* codes are being renumbered). */
export const REQUEST_CANCELLED = -32800;

export type MemoryScope = 'user' | 'project' | 'team';

export interface MemoryEntry {
  path: string;
  scope: MemoryScope | string;
  type: string;
  name: string;
  description: string;
  /** Qwen Code's memoryAge words ("today", "yesterday", "47 days ago"); a number is read as days. */
  age: string | number;
}

export interface MemoryList {
  memories: MemoryEntry[];
}

export interface RememberParams {
  text: string;
  type?: string;
  scope?: MemoryScope;
  name?: string;
}

export interface RememberResult {
  path: string;
  scope: string;
  type: string;
}

export interface ForgetCandidate {
  path: string;
  name: string;
  description: string;
  reason: string;
}

export interface ForgetCandidates {
  candidates: ForgetCandidate[];
}

export interface ForgetResult {
  removed: string[];
}

export interface MemoryChanged {
  scope: string;
  paths: string[];
}

/** JSON-RPC MethodNotFound: what a server without a feature (e.g. memory) answers. */
export const METHOD_NOT_FOUND = -32601;

/** qwen/compress: `full` asks the model for a summary; `fast` clears old tool output without a model call. */
export type CompressMode = 'full' | 'fast';

export interface CompressParams {
  sessionId: string;
  mode?: CompressMode;
}

export interface CompressResult {
  /** `compressed`, `noop` or `failed_…` (Qwen Code's CompressionStatus names); read any other string gracefully. */
  status: string;
  tokensBefore: number;
  tokensAfter: number;
}
