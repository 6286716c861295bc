/**
 * The qwen/* wire types (docs/protocol.md). Shared by the extension host, the webview
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
  /** On toolResult for writes and commands: `auto` (the approval mode allowed it) or the user's answer. */
  decision?: 'auto' | PermissionDecision;
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

/** Server → client request `qwen/permission` (docs/protocol.md): a write or a command waiting for the user. */
export interface PermissionParams {
  sessionId: string;
  turnId: string;
  /** Matches the `toolCall` chat event's `tool.id`. */
  toolCallId: string;
  tool: string;
  /** e.g. "Edit src/api/x.py". */
  title: string;
  /** The absolute, resolved file. */
  path?: string;
  /** Unified diff of the proposed change (`--- /dev/null` for a new file; cut at 200000 characters). */
  diff?: string;
  /** The shell command. */
  command?: string;
}

export type PermissionDecision = 'allow' | 'allowAlways' | 'deny';

export interface PermissionResult {
  decision: PermissionDecision;
  /** Only with `deny`: passed to the model after the denial text. */
  reason?: string;
}

/** Server → client notification `qwen/suggestion`: a follow-up after a turn; sent again with `ready` when its speculation ends. */
export interface SuggestionNotice {
  sessionId: string;
  suggestionId: string;
  text: string;
  /** True: the speculative result is done and accepting applies it at once. */
  ready?: boolean;
}

/** `qwen/suggestion/accept`: `applied` when the speculative result was applied; otherwise the suggestion ran as a normal turn. */
export interface SuggestionAcceptResult {
  applied: boolean;
  turnId?: string;
}

/** Server → client notification `qwen/skillProposed`: skill review wrote a proposed SKILL.md (not yet a skill). */
export interface SkillProposed {
  proposalId: string;
  name: string;
  description: string;
  /** The whole proposed SKILL.md. */
  text: string;
}

/** `qwen/skillProposal/accept`: where the skill was saved. */
export interface SkillProposalAcceptResult {
  path: string;
}
