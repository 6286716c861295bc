// Generated from qwen_lsp/protocol.py by scripts/protocol_ts.py: do not edit; run `.venv/bin/python scripts/protocol_ts.py`.
export type ErrorKind = 'config' | 'auth' | 'not_found' | 'connect' | 'timeout' | 'stall' | 'rate_limit' | 'server' | 'bad_request' | 'protocol' | 'engine' | 'context' | 'secret' | 'memory_security' | 'conflict' | 'invalid_proposal' | 'memory_busy' | 'invalid_params';
export type Level = 'ok' | 'warn' | 'auto' | 'hard';
export type FinishReason = 'stop' | 'length' | 'cancelled' | 'error';
export type MemoryScope = 'user' | 'project' | 'team';
export type MemoryType = 'user' | 'feedback' | 'project' | 'reference';
export type CompressMode = 'full' | 'fast';
export type ChatEventKind = 'text' | 'thought' | 'toolCall' | 'toolResult' | 'status' | 'error' | 'contextChanges';
export type ContextChangeKind = 'skill' | 'memory' | 'compression' | 'editor';
export type PermissionDecision = 'allow' | 'allowAlways' | 'deny';
export type ToolDecision = 'auto' | 'allow' | 'allowAlways' | 'deny';
export type CommandStatus = 'done' | 'error' | 'confirm';

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface AttachmentParam {
  uri: string;
  range?: Range | null;
}

export interface ChatParams {
  prompt: string;
  sessionId?: string | null;
  attachments?: AttachmentParam[];
  workspaceUri?: string | null;
  /** False: this message goes without the editor's context (the panel's "leave it out"; docs/editor-context.md). */
  editorContext?: boolean;
  /**
   * True: a Retry of the chat's last turn, which failed. That turn is taken back first (off the session file's
   * active branch and out of the history), so the model and a reopened chat see the prompt once.
   */
  retry?: boolean;
}

/** `qwen/attachments/paste`: an image pasted into the composer, base64. Its type is read from its bytes, never claimed. */
export interface PasteParams {
  data: string;
  workspaceUri?: string | null;
}

export interface ActiveEditor {
  uri: string;
  cursor?: Position | null;
  selection?: Range | null;
}

/** `qwen/editorContext`: the focused editor, its cursor and selection (0-based); none when `activeFile` is absent. */
export interface EditorContextParams {
  activeFile?: ActiveEditor | null;
}

export interface SessionParams {
  sessionId: string;
  workspaceUri?: string | null;
}

export interface ResumeParams {
  sessionId: string;
  workspaceUri?: string | null;
  /** Ask the model for a session recap (one request); a window restoring its last chat passes false. */
  recap?: boolean;
}

export interface CompressParams {
  sessionId: string;
  mode?: CompressMode;
  workspaceUri?: string | null;
}

export interface OptionalSessionParams {
  sessionId?: string | null;
  workspaceUri?: string | null;
}

export interface SuggestionParams {
  suggestionId: string;
}

export interface WorkspaceParams {
  workspaceUri?: string | null;
}

export interface MemoryListParams {
  scope?: MemoryScope | null;
  workspaceUri?: string | null;
}

export interface RememberParams {
  text: string;
  type?: MemoryType | null;
  scope?: MemoryScope | null;
  name?: string | null;
  workspaceUri?: string | null;
}

export interface ForgetCandidatesParams {
  query: string;
  workspaceUri?: string | null;
}

export interface ForgetParams {
  paths: string[];
  workspaceUri?: string | null;
}

/**
 * `qwen/command`: a line the user typed that starts with `/` (docs/protocol.md, "Commands").
 *
 * The server decides whether it is a command as Qwen Code 0.24.4's `isSlashCommand` does: a
 * line like `/usr/lib is missing` (a path) is not, and goes to the model as a chat message.
 */
export interface CommandParams {
  text: string;
  sessionId?: string | null;
  workspaceUri?: string | null;
  /** The token of a `confirm` answer: the user said yes, so the command goes ahead. */
  confirm?: string | null;
}

/** `qwen/files/complete`: workspace files and folders for an `@` mention, best first. */
export interface FileCompletionParams {
  query?: string;
  workspaceUri?: string | null;
  limit?: number;
}

export interface SkillProposalParams {
  proposalId: string;
  workspaceUri?: string | null;
}

/** Arguments of `qwen.addToProjectRules` / `qwen.rememberSelection`. */
export interface SelectionArgs {
  /** The selected text, as the editor has it. */
  text: string;
  uri?: string | null;
  scope?: 'project' | 'user' | null;
  /**
   * `qwen.rememberSelection` only: the convention in the user's words (VS Code asks for them,
   * prefilled from the selection). A selected code line is no rule a later chat can follow; a client
   * that sends no words (Neovim's code action) gets the selection remembered as before.
   */
  convention?: string | null;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatResult {
  sessionId: string;
  turnId: string;
  text: string;
  finishReason: FinishReason;
  usage: Usage;
}

/** The tool of a `toolCall` / `toolResult` chat event. */
export interface ToolInfo {
  id: string;
  name: string;
  /** On `toolCall`: the arguments as the model sent them. */
  args?: Record<string, unknown>;
  /** On `toolResult`. */
  isError?: boolean;
  /** On `toolResult` for writes and commands. */
  decision?: ToolDecision;
  /** On `toolResult`: the output as the model received it, cut at 8,000 characters (`text` is its one-line summary). */
  output?: string;
}

/** One thing the context of this turn's request has that the previous turn's had not (a chip under the answer). */
export interface ContextChange {
  kind: ContextChangeKind;
  /** In words, e.g. "skill api-conventions", "2 memories recalled", "history compressed 41k → 6k". */
  label: string;
  /** The files it comes from (absolute), for an editor to open. */
  sources?: string[];
}

/** `qwen/chatEvent`: one streamed event of a running turn; `seq` counts from 0 without gaps per turn. */
export interface ChatEvent {
  sessionId: string;
  turnId: string;
  seq: number;
  kind: ChatEventKind;
  text?: string;
  tool?: ToolInfo;
  /**
   * On `contextChanges` (after an answered turn's text, only when something changed): what its request
   * holds that the previous turn's did not.
   */
  changes?: ContextChange[];
}

/** `qwen/permission`: a write or a command waiting for the user (sent to clients declaring `permissionRequests`). */
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
  /** Unified diff of the proposed change (`--- /dev/null` for a new file). */
  diff?: string;
  /** The shell command, every hidden character written out (docs/security.md). */
  command?: string;
  /** Where a shell command runs (absolute, resolved). */
  directory?: string;
  /**
   * In words, what "Allow always (this chat)" would let run without asking again (for a shell command,
   * Qwen Code 0.24.4's command-prefix rules such as `git commit *`); None when "Allow always" is not offered.
   */
  alwaysCovers?: string;
  /** For a write to configuration: why it always asks ("Allow always" then counts as "Allow" for this call). */
  protected?: string;
  /** For `exit_plan_mode`: the plan the user approves before the chat leaves plan mode. */
  plan?: string;
}

/** The client's answer to `qwen/permission`, parsed strictly: anything else is a denial. */
export interface PermissionAnswer {
  decision: PermissionDecision;
  /** Only with `deny`: passed to the model after the denial text. */
  reason?: string | null;
}

export interface ContextSection {
  name: string;
  tokens: number;
  /** The file it comes from as a person reads it: relative to the workspace, `~/…` under the home folder. */
  source?: string;
  /** That file, absolute (to open it). */
  path?: string;
}

/**
 * One row of a sent request's picture: `system`, `context files`, `memory`, `skills`,
 * `editor context`, `history` or `tools`.
 */
export interface RequestPart {
  name: string;
  tokens: number;
}

/** A request the chat sent to the model, part by part; the parts add up to `totalTokens`, the server's count. */
export interface SentRequest {
  turnId: string;
  /** 1 for a turn's first request, then one more per tool round. */
  round: number;
  parts: RequestPart[];
  totalTokens: number;
  /** The prompt size the endpoint reported for it (None until its answer came, or when it reports none). */
  reportedTokens?: number;
}

/** Token counts at which each level starts (the first whole token at or past Qwen Code's fractional threshold). */
export interface ThresholdTokens {
  warn: number;
  auto: number;
  hard: number;
}

/** A context input that could not be used as written (unreadable, not UTF-8, a failed import, …). */
export interface ContextProblem {
  path: string;
  message: string;
}

export interface ContextResult {
  sections: ContextSection[];
  totalTokens: number;
  window: number;
  thresholds: ThresholdTokens;
  problems?: ContextProblem[];
  /**
   * The model the next request would go to; absent while no turn could run (no model name, or neither a base
   * URL nor an API key), so an editor shows no "% left" of a window that belongs to no model.
   */
  model?: string;
  /** The prompt size the endpoint reported for the chat's last request (beside the total, which counts the next). */
  lastReported?: number;
  /** The chat's last requests as sent (at most 20, oldest first), for a picture of what filled each. */
  requests?: SentRequest[];
}

/** `qwen/contextStatus`: how full the window was at the last model round. */
export interface ContextStatus {
  sessionId: string;
  promptTokens: number;
  window: number;
  percentLeft: number;
  level: Level;
  /** Where warn, auto-compression and the hard limit start for this window (as Qwen Code 0.24.4). */
  thresholds: ThresholdTokens;
}

/** `qwen/compress`: `status` is `compressed`, `noop` or `failed_…` (why the history was left as it was). */
export interface CompressResult {
  status: string;
  tokensBefore: number;
  tokensAfter: number;
}

export interface SessionListItem {
  sessionId: string;
  title: string;
  /** ISO 8601, UTC, milliseconds, 'Z'. */
  updatedAt: string;
  messageCount: number;
}

export interface SessionsListResult {
  sessions: SessionListItem[];
}

/** A tool call of a reopened answer, placed in its text as it was when streamed. */
export interface TranscriptTool {
  id: string;
  name: string;
  /** The answer's text before the call, in characters: the row sits there. */
  at: number;
  args?: Record<string, unknown>;
  /** The tool's output as the model received it; absent when the call never finished. */
  result?: string;
  /** The one-line summary the `toolResult` event showed, when the session recorded it. */
  display?: string;
  isError?: boolean;
}

export interface TranscriptMessage {
  role: 'user' | 'assistant';
  text: string;
  /** An answer's tool calls, in the order they ran (all rounds of the turn are one answer). */
  tools?: TranscriptTool[];
  /** The answer was stopped before it was complete. */
  interrupted?: boolean;
  /**
   * Why the turn failed: the error shown live when the session recorded it (cut to 2,000 characters,
   * credentials redacted), otherwise a line saying no answer was recorded.
   */
  error?: string;
  /**
   * The recorded error's `data.kind` (`server`, `auth`, `connect`, …), as the live error carried it;
   * absent when the session file does not say.
   */
  errorKind?: string;
}

export interface SessionResumeResult {
  sessionId: string;
  messages: TranscriptMessage[];
  promptTokens: number;
  /**
   * One or two sentences on where the chat stood (Qwen Code 0.24.4's session recap); None when
   * the chat has no history, no model is configured, or the model gave none.
   */
  recap?: string;
}

export interface SessionDeleteResult {
  deleted: boolean;
}

export interface SkillItem {
  name: string;
  description: string;
  level: string;
  path: string;
  conditional: boolean;
  active: boolean;
  modelInvocable: boolean;
  paths: string[];
}

export interface SkillProblem {
  path: string;
  message: string;
}

export interface SkillsListResult {
  skills: SkillItem[];
  errors: SkillProblem[];
}

/** `qwen/skillsChanged`: conditional skills or rules activated, or the skill set on disk moved. */
export interface SkillsChanged {
  activated: string[];
  deactivated: string[];
  trigger?: string;
}

/** `qwen/skillProposed`: skill review found a repeatable procedure; `text` is the whole proposed SKILL.md. */
export interface SkillProposed {
  proposalId: string;
  name: string;
  description: string;
  text: string;
}

export interface SkillProposalAcceptResult {
  /** The SKILL.md the accepted proposal became. */
  path: string;
}

/** `qwen/skillProposal/discard` answers `{}`. */
export interface SkillProposalDiscardResult {
}

/** Result of the `qwen.addToProjectRules` command ("Add to QWEN.md"). */
export interface AddToProjectRulesResult {
  path: string;
}

export interface MemoryItem {
  path: string;
  scope: MemoryScope;
  type: MemoryType;
  name: string;
  description: string;
  /** In words, as the model sees it: 'today', 'yesterday', '47 days ago'. */
  age: string;
}

export interface MemoryListResult {
  memories: MemoryItem[];
}

export interface MemoryRememberResult {
  path: string;
  scope: MemoryScope;
  type: MemoryType;
  /** The saved memory's name (its frontmatter `name`), so the editor can say what it wrote. */
  name: string;
  description: string;
}

export interface ForgetCandidate {
  path: string;
  name: string;
  description: string;
  reason: string;
}

export interface ForgetCandidatesResult {
  candidates: ForgetCandidate[];
}

export interface MemoryForgetResult {
  removed: string[];
}

/** `qwen/memoryChanged`: memory files of one scope were written or removed. */
export interface MemoryChanged {
  scope: MemoryScope;
  paths: string[];
}

export interface RecallItem {
  path: string;
  scope: MemoryScope;
  type: MemoryType;
  name: string;
}

/** `qwen-lsp memory recall --json`: what recall would inject for a query. */
export interface RecallResultWire {
  strategy: 'model' | 'heuristic' | 'none';
  memories: RecallItem[];
  text: string;
}

export interface DreamResult {
  status: string;
  reason?: string;
  touched?: string[];
}

/** What a speculation cost (an optional extra of `qwen/suggestion`): tokens summed over its requests. */
export interface SpeculationCost {
  promptTokens: number;
  completionTokens: number;
  requests: number;
}

/**
 * `qwen/suggestion`: a follow-up suggestion; sent again when its speculation ends.
 *
 * `ready: true` — the speculative result is done (accept applies it);
 * `ready: false` with `stoppedAt` — it stopped at a call needing approval or failed
 * (accept runs the suggestion as a normal turn). `cost` and `stoppedAt` are optional extras.
 */
export interface SuggestionNotice {
  sessionId: string;
  suggestionId: string;
  text: string;
  ready?: boolean;
  stoppedAt?: string;
  cost?: SpeculationCost;
}

/**
 * `qwen/suggestion/accept`: `applied` when the speculative result was applied, else the suggestion ran as a turn
 * (`continued`: a turn that went on from the complete rounds of a speculation that stopped or was still running).
 */
export interface SuggestionAcceptResult {
  applied: boolean;
  turnId?: string;
  cost?: SpeculationCost;
  continued?: boolean;
}

/** `{}`: a request that only acknowledges (`qwen/suggestion/dismiss`). */
export interface EmptyResult {
}

export interface CommandInfo {
  /** Without the `/`. */
  name: string;
  description: string;
  argumentHint?: string;
  altNames?: string[];
}

export interface CommandsListResult {
  commands: CommandInfo[];
}

/**
 * What a command did. `text` is always shown; the optional fields say what else changed.
 *
 * `confirm`: the command asks first (`text` is the question); sending the same `text` again
 * with this token goes ahead. `sessionId`: the chat the client shows from now on (a new one
 * after `/clear`, the reopened one after `/resume <id>`, the one a turn ran in).
 */
export interface CommandResult {
  status: CommandStatus;
  text: string;
  /** The command that ran, without `/`; absent when the line was a chat message (a path). */
  command?: string;
  sessionId?: string;
  /** When the command sent a prompt to the model (`/init`, `/remember`, `/plan <task>`…): the turn's result; its events streamed as `qwen/chatEvent`. */
  chat?: ChatResult;
  confirm?: string;
  resumed?: SessionResumeResult;
  /** A file the command wrote (`/export`, `/init`). */
  path?: string;
  /** For an unknown command and `/help`: the commands there are. */
  commands?: CommandInfo[];
}

export interface FileCompletionItem {
  /** Relative to the workspace folder, `/`-separated; a folder ends in `/`. */
  path: string;
  kind: 'file' | 'folder';
}

export interface FileCompletionResult {
  items: FileCompletionItem[];
  /** The walk stopped at its bound before seeing every file (a very large tree): refine the query. */
  truncated: boolean;
}

export interface PasteResult {
  /** Absolute, in `~/.qwen/tmp/clipboard`: attach it to `qwen/chat` as a `file:` URI (the one kind of file outside the workspace a chat takes). */
  path: string;
  /** The file's name, chosen by the server: `clipboard-<ms>-<n>.<png|jpg|gif|webp>`. */
  name: string;
  bytes: number;
}
