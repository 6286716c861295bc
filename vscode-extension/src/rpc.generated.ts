// Generated from qwen_lsp/protocol.py by scripts/protocol_ts.py: do not edit; run `.venv/bin/python scripts/protocol_ts.py`.
import { NotificationType, RequestType } from 'vscode-jsonrpc';
import type * as P from './shared/protocol.generated';

/** The `qwen/*` requests a client sends. */
export const requests = {
  chat: new RequestType<P.ChatParams, P.ChatResult, void>('qwen/chat'),
  compress: new RequestType<P.CompressParams, P.CompressResult, void>('qwen/compress'),
  context: new RequestType<P.OptionalSessionParams, P.ContextResult, void>('qwen/context'),
  sessionsList: new RequestType<P.WorkspaceParams, P.SessionsListResult, void>('qwen/sessions/list'),
  sessionsResume: new RequestType<P.ResumeParams, P.SessionResumeResult, void>('qwen/sessions/resume'),
  sessionsDelete: new RequestType<P.SessionParams, P.SessionDeleteResult, void>('qwen/sessions/delete'),
  skillsList: new RequestType<P.WorkspaceParams, P.SkillsListResult, void>('qwen/skills/list'),
  memoryList: new RequestType<P.MemoryListParams, P.MemoryListResult, void>('qwen/memory/list'),
  memoryRemember: new RequestType<P.RememberParams, P.MemoryRememberResult, void>('qwen/memory/remember'),
  memoryForgetCandidates: new RequestType<P.ForgetCandidatesParams, P.ForgetCandidatesResult, void>('qwen/memory/forgetCandidates'),
  memoryForget: new RequestType<P.ForgetParams, P.MemoryForgetResult, void>('qwen/memory/forget'),
  skillProposalAccept: new RequestType<P.SkillProposalParams, P.SkillProposalAcceptResult, void>('qwen/skillProposal/accept'),
  skillProposalDiscard: new RequestType<P.SkillProposalParams, P.SkillProposalDiscardResult, void>('qwen/skillProposal/discard'),
  suggestionAccept: new RequestType<P.SuggestionParams, P.SuggestionAcceptResult, void>('qwen/suggestion/accept'),
  suggestionDismiss: new RequestType<P.SuggestionParams, P.EmptyResult, void>('qwen/suggestion/dismiss'),
  commandsList: new RequestType<P.WorkspaceParams, P.CommandsListResult, void>('qwen/commands/list'),
  command: new RequestType<P.CommandParams, P.CommandResult, void>('qwen/command'),
  filesComplete: new RequestType<P.FileCompletionParams, P.FileCompletionResult, void>('qwen/files/complete'),
  attachmentsPaste: new RequestType<P.PasteParams, P.PasteResult, void>('qwen/attachments/paste'),
} as const;

/** The `qwen/*` notifications the server sends. */
export const notifications = {
  chatEvent: new NotificationType<P.ChatEvent>('qwen/chatEvent'),
  contextStatus: new NotificationType<P.ContextStatus>('qwen/contextStatus'),
  skillsChanged: new NotificationType<P.SkillsChanged>('qwen/skillsChanged'),
  memoryChanged: new NotificationType<P.MemoryChanged>('qwen/memoryChanged'),
  skillProposed: new NotificationType<P.SkillProposed>('qwen/skillProposed'),
  suggestion: new NotificationType<P.SuggestionNotice>('qwen/suggestion'),
} as const;

/** The `qwen/*` notifications a client sends. */
export const clientNotifications = {
  editorContext: new NotificationType<P.EditorContextParams>('qwen/editorContext'),
} as const;

/** The `qwen/*` request the server sends: a write or command waiting for the user. */
export const permissionRequest = new RequestType<P.PermissionParams, P.PermissionAnswer, void>('qwen/permission');

/** The server's commands, each a `workspace/executeCommand` typed with its argument and result. */
export const commands = {
  rememberSelection: new RequestType<{ command: 'qwen.rememberSelection'; arguments: [P.SelectionArgs] }, P.MemoryRememberResult, void>('workspace/executeCommand'),
  addToProjectRules: new RequestType<{ command: 'qwen.addToProjectRules'; arguments: [P.SelectionArgs] }, P.AddToProjectRulesResult, void>('workspace/executeCommand'),
} as const;

/** Sends one request of the tables above: the language client's `sendRequest`, or a test's recorder. */
export type Send = <P, R>(type: RequestType<P, R, void>, params: P) => Promise<R>;
