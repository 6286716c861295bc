/**
 * Turns a failed request into an inline error with the action that fixes it. Keyed on the
 * server's `data.kind` (the stable identifier), never on numeric codes, which are being moved.
 */
import { METHOD_NOT_FOUND, REQUEST_CANCELLED } from './shared/protocol';
import type { ErrorAction, InlineError, InlineErrorKind } from './shared/messages';

interface RpcErrorLike {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

/** JSON-RPC MethodNotFound: a server that predates a feature; a version gap, not an error. */
export function isMethodNotFound(err: unknown): boolean {
  return (err as RpcErrorLike | undefined)?.code === METHOD_NOT_FOUND;
}

export function isCancelled(err: unknown): boolean {
  const e = err as RpcErrorLike | undefined;
  return !!e && (e.code === REQUEST_CANCELLED || (e as { name?: string }).name === 'Canceled');
}

/** Every kind's fix, checked by the compiler against the generated ErrorKind: a new server kind needs a line here. */
const ACTIONS: Record<InlineErrorKind, ErrorAction[]> = {
  auth: ['setApiKey', 'retry'],
  config: ['configureModel', 'setApiKey', 'retry'],
  connect: ['configureModel', 'openSettings', 'retry'],
  timeout: ['retry', 'openSettings'],
  stall: ['retry'],
  not_found: ['configureModel', 'openSettings'],
  rate_limit: ['retry'],
  server: ['retry'],
  bad_request: ['configureModel', 'openSettings'],
  protocol: ['retry'],
  context: ['showLog'],
  server_down: ['restartServer', 'showLog'],
  server_back: ['retry'],
  engine: ['showLog'],
  secret: ['showLog'],
  memory_security: ['showLog'],
  conflict: ['showLog'],
  invalid_proposal: ['showLog'],
  memory_busy: ['showLog'],
  invalid_params: ['showLog'],
  unsupported: ['retry'],
  noAnswer: [],
  unknown: ['showLog'],
};

function isKind(kind: unknown): kind is InlineErrorKind {
  return typeof kind === 'string' && Object.hasOwn(ACTIONS, kind);
}

/**
 * What the panel says when no model is configured. The server's own message names its keys
 * (OPENAI_MODEL, model.name); in the editor the fix is the extension's settings, which
 * "Set up model" writes in the scope the window reads.
 */
export const NO_MODEL_MESSAGE =
  'No model is configured. "Set up model" asks for the endpoint\'s base URL (qwen.model.baseUrl) and the model name (qwen.model.name); ' +
  '"Set API key" stores a key if the endpoint needs one. Then Retry.';

/** Why the server is not running, as the server manager knows it (see ServerManager.failure). */
export interface ServerFailureLike {
  message: string;
  /** No server was found: setting its path fixes it, restarting alone cannot. */
  missing: boolean;
  /** The folder is not trusted (Restricted Mode): trusting it is the fix. */
  restricted?: boolean;
}

/**
 * The server names its settings as ~/.qwen/settings.json spells them (`model.baseUrl`); in the
 * editor they are the extension's (`qwen.model.baseUrl`), which is what a user searches for.
 */
export function editorSettingNames(message: string): string {
  return message.replace(/(?<![\w.])model\.(baseUrl|name)\b/g, 'qwen.model.$1');
}

/** `failure`: why the server did not start, when a request failed because it is not running. */
export function describeError(err: unknown, failure?: ServerFailureLike): InlineError {
  const e = (err ?? {}) as RpcErrorLike;
  const data = e.data as { kind?: unknown } | undefined;
  let kind: InlineErrorKind = isKind(data?.kind) ? data.kind : 'unknown';
  let message = typeof e.message === 'string' && e.message ? e.message : String(err);
  // The language client rejects with these when the server process is gone.
  if (kind === 'unknown' && /connection (got disposed|is closed)|not running|Client is not running|Pending response rejected/i.test(message)) {
    kind = 'server_down';
    message = `The qwen-lsp server is not running (${message}). Restart it, or open the log to see why it stopped.`;
  }
  if (kind === 'server_down' && failure?.restricted) return { kind, message: failure.message, actions: ['manageTrust'] };
  if (kind === 'server_down' && failure) {
    return { kind, message: `The qwen-lsp server is not running: ${failure.message}`, actions: failure.missing ? ['setServerPath', 'restartServer', 'showLog'] : ['restartServer', 'showLog'] };
  }
  if (kind === 'config') message = NO_MODEL_MESSAGE;
  else message = editorSettingNames(message);
  return { kind, message, actions: ACTIONS[kind] };
}
