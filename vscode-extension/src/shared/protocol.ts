/**
 * The qwen/* wire types (docs/protocol.md). They are generated from the server's models
 * (`protocol.generated.ts`, from qwen_lsp/protocol.py), so the two sides cannot drift; this module
 * only gives some of them the names the extension reads best and adds the JSON-RPC codes it keys on.
 * Shared by the extension host, the webview and the protocol tests.
 */

export type * from './protocol.generated';
export type {
  AttachmentParam as Attachment,
  ContextResult as ContextReport,
  ForgetCandidatesResult as ForgetCandidates,
  MemoryForgetResult as ForgetResult,
  MemoryItem as MemoryEntry,
  MemoryListResult as MemoryList,
  MemoryRememberResult as RememberResult,
  PermissionAnswer as PermissionResult,
  SessionListItem as SessionSummary,
  SessionResumeResult as ResumeResult,
  SkillsListResult as SkillsList,
} from './protocol.generated';

/** JSON-RPC RequestCancelled. */
export const REQUEST_CANCELLED = -32800;

/** JSON-RPC MethodNotFound: what a server without a feature (e.g. memory) answers. */
export const METHOD_NOT_FOUND = -32601;
