/**
 * "Compact Conversation": sends qwen/compress and words its answer for the chat panel, free of the
 * vscode API so the unit tests and the protocol tests (against the real server) run it exactly as
 * the extension does. Requests go through a plain typed `send` function (the language client or a
 * bare vscode-jsonrpc connection).
 *
 * Compaction replaces the model's copy of the history with a summary; the transcript the person
 * reads is never cleared, and every line produced here says so, because "compacted" otherwise
 * reads as "deleted". A failure leaves both copies as they were, and the line says that too.
 *
 * The status strings are the server's (compaction/compress.py: `compressed`, `noop`,
 * `failed_empty_summary`, …, Qwen Code's CompressionStatus names in lower case); the
 * `compression_failed_…` spelling of the same names is read too, and a status this version does
 * not know still becomes a readable line rather than an error.
 */
import { describeError, isMethodNotFound } from './errors';
import type { CompressMode, CompressResult } from './shared/protocol';
import type { StatusTone } from './shared/messages';
import { requests } from './rpc.generated';
import type { Send } from './rpc.generated';

export interface CompactOutcome {
  /** The status line shown in the transcript where "Compacting…" was. */
  text: string;
  tone: StatusTone;
  /** True only when the model's history was actually made smaller. */
  compacted: boolean;
}

export const NO_COMPACTION_SUPPORT = 'This server cannot compact yet (update qwen-lsp). Nothing was changed.';
const KEPT = 'Your conversation stays in this panel; only the model’s copy was summarized.';
const KEPT_FAST = 'Your conversation stays in this panel; only old tool output was cleared from the model’s copy.';
const UNCHANGED = 'Nothing was lost: the conversation and the model’s history are unchanged.';

/** The reason behind each failure status, in words a person understands. */
const FAILURES: Record<string, string> = {
  empty_summary: 'the model returned an empty summary',
  inflated_token_count: 'the summary would have been larger than the conversation it replaces',
  token_count_error: 'the size of the summary could not be counted',
  output_truncated: 'the summary was cut off at the model’s output limit',
};

/** The line shown while qwen/compress runs; the composer stays usable (the server queues a turn behind it). */
export function compactingText(mode: CompressMode): string {
  const what = mode === 'fast' ? 'Compacting the conversation (fast: clearing old tool output)…' : 'Compacting the conversation (the model is summarizing it)…';
  return `${what} You can keep typing; a message sent now is answered after it.`;
}

const tokens = (n: unknown): string | undefined => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.round(n).toLocaleString('en-US') : undefined);

/** A server-chosen word shown to the user: one short line of plain characters. */
function safeWord(s: string): string {
  const flat = s.replace(/[^\w .:-]/g, '').trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}

/** The status line for a qwen/compress answer. */
export function compactResultText(r: Partial<CompressResult> | null | undefined, mode: CompressMode = 'full'): CompactOutcome {
  const status = typeof r?.status === 'string' ? r.status.toLowerCase() : '';
  const before = tokens(r?.tokensBefore);
  const after = tokens(r?.tokensAfter);
  const sizes = before !== undefined && after !== undefined ? `: ${before} → ${after} tokens` : '';
  if (status === 'compressed') {
    return { text: `Compacted${mode === 'fast' ? ' (fast)' : ''}${sizes}. ${mode === 'fast' ? KEPT_FAST : KEPT}`, tone: 'info', compacted: true };
  }
  if (status === 'noop') {
    const size = before !== undefined ? ` (${before} tokens)` : '';
    const why = mode === 'fast' ? 'there is no old tool output to clear' : 'the conversation is already small';
    return { text: `Nothing to compact yet: ${why}${size}. Nothing was changed.`, tone: 'info', compacted: false };
  }
  const failure = /^(?:compression_)?failed_(.+)$/.exec(status)?.[1];
  if (failure !== undefined) {
    const reason = FAILURES[failure] ?? `the server reported “${safeWord(failure.replace(/_/g, ' '))}”`;
    return { text: `Compaction failed: ${reason}. ${UNCHANGED}`, tone: 'warning', compacted: false };
  }
  const shown = safeWord(status) || 'no status';
  return { text: `Compaction finished with an unfamiliar result (“${shown}”)${sizes}. Your conversation stays in this panel.`, tone: 'info', compacted: false };
}

/** The status line for a qwen/compress that was refused or failed at the endpoint. */
export function compactErrorText(err: unknown): CompactOutcome {
  if (isMethodNotFound(err)) return { text: NO_COMPACTION_SUPPORT, tone: 'info', compacted: false };
  // The server's own message may already open with "Compression failed; the history is unchanged."
  const message = describeError(err)
    .message.replace(/\s+/g, ' ')
    .replace(/^Compression (?:failed|could not be saved)[;:.]? ?(?:the history is unchanged\. ?)?/i, '')
    .trim();
  const said = message.length > 300 ? `${message.slice(0, 299)}…` : message;
  const sentence = !said ? 'the server gave no reason.' : /[.…!?]$/.test(said) ? said : `${said}.`;
  return { text: `Compaction failed: ${sentence} ${UNCHANGED}`, tone: 'error', compacted: false };
}

/** qwen/compress for one session, worded: never throws, whatever the server answers. */
export async function compactSession(send: Send, sessionId: string, mode: CompressMode): Promise<CompactOutcome> {
  let r: unknown;
  try {
    r = await send(requests.compress, { sessionId, mode });
  } catch (err) {
    return compactErrorText(err);
  }
  return compactResultText(r && typeof r === 'object' ? (r as Partial<CompressResult>) : undefined, mode);
}
