/**
 * The qwen/* wire types (docs/protocol.md). They are generated from the server's models
 * (`protocol.generated.ts`, from qwen_lsp/protocol.py), so the two sides cannot drift; the extension
 * uses them under their generated names (no second name to keep in step) and this module adds only
 * the JSON-RPC codes it keys on.
 * Shared by the extension host, the webview and the protocol tests.
 */

export type * from './protocol.generated';

/** JSON-RPC RequestCancelled. */
export const REQUEST_CANCELLED = -32800;

/** JSON-RPC MethodNotFound: what a server without a feature (e.g. memory) answers. */
export const METHOD_NOT_FOUND = -32601;
