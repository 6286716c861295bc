/**
 * The host's model of the open chat: what the webview shows, rebuilt from the server's session
 * on resume and kept current from qwen/chatEvent. Pure (no vscode import) so it is unit-tested.
 *
 * Why the host and not the webview: VS Code cannot post to a hidden webview, and a webview
 * without retainContextWhenHidden is destroyed when hidden. Keeping the transcript here means a
 * stream that arrived while the view was hidden is in the next snapshot, nothing to replay.
 */
import type { ChatEvent, SessionResumeResult } from './shared/protocol';
import type { InlineError, Snapshot, StatusTone, StreamPatch, ToolCard, TranscriptMessage } from './shared/messages';
import { describeError } from './errors';
import { shownTitle } from './shared/visibleText';

let counter = 0;
const newId = (): string => `m${Date.now().toString(36)}${(counter++).toString(36)}`;

const PATH_KEYS = new Set(['path', 'file_path', 'absolute_path', 'dir_path']);
/** A shell command's row shows this much of it. */
const COMMAND_MAX = 600;

/**
 * The argument a person recognises a tool call by (a path, a pattern), kept to one short line.
 * Paths go through `relative` (workspace-relative in the extension): tools take absolute paths,
 * and a long absolute path would push the result off a one-line card. A shell command is shown
 * as the approval card titles it (every hidden character written out, newlines as ⏎, a cut
 * saying how much is left out), longer, since its row wraps it (webview/main.ts).
 */
export function toolDetail(args: Record<string, unknown> | undefined, relative: (path: string) => string = (p) => p): string {
  if (!args) return '';
  for (const key of ['path', 'file_path', 'absolute_path', 'dir_path', 'pattern', 'query', 'name', 'command']) {
    const v = args[key];
    if (typeof v === 'string' && v && key === 'command') return shownTitle('', v, COMMAND_MAX);
    if (typeof v === 'string' && v) return oneLine(PATH_KEYS.has(key) ? relative(v) : v);
  }
  const first = Object.values(args).find((v) => typeof v === 'string');
  return typeof first === 'string' ? oneLine(first) : '';
}

/** What an expanded row shows is bounded: a tool's output can be a whole file. */
const EXPANDED_MAX = 8000;

function bounded(s: string): string {
  return s.length > EXPANDED_MAX ? s.slice(0, EXPANDED_MAX) + '\n…' : s;
}

/** The arguments and the file (for a link) an expanded row shows. */
export function toolExtras(args: Record<string, unknown> | undefined): Pick<ToolCard, 'args' | 'path'> {
  if (!args || !Object.keys(args).length) return {};
  const path = ['path', 'file_path', 'absolute_path'].map((k) => args[k]).find((v): v is string => typeof v === 'string' && v.startsWith('/'));
  return { args: bounded(JSON.stringify(args, null, 2)), ...(path ? { path } : {}) };
}

function oneLine(s: string, max = 120): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

interface Turn {
  assistantId: string;
  turnId?: string;
  lastSeq: number;
  stopped: boolean;
}

export class Transcript {
  sessionId: string | undefined;
  messages: TranscriptMessage[] = [];
  private turn: Turn | undefined;

  /** `relative` shortens tool paths on cards (see toolDetail). */
  constructor(private readonly relative: (path: string) => string = (p) => p) {}

  get running(): boolean {
    return this.turn !== undefined;
  }

  get stopping(): boolean {
    return this.turn?.stopped ?? false;
  }

  reset(sessionId?: string): void {
    this.sessionId = sessionId;
    this.messages = [];
    this.turn = undefined;
  }

  /** A resumed session's messages; its recap, when the server made one, as a quiet line after them. */
  load(resume: SessionResumeResult): void {
    this.reset(resume.sessionId);
    this.messages = resume.messages.map((m) => {
      const msg: TranscriptMessage = { id: newId(), role: m.role, text: m.text };
      if (m.tools?.length) {
        msg.tools = m.tools.map((t, i) => ({
          id: t.id,
          key: String(i),
          name: t.name,
          detail: toolDetail(t.args, this.relative),
          at: Math.min(t.at, m.text.length),
          ...toolExtras(t.args),
          ...(t.result === undefined ? { result: 'no result', isError: true } : { result: oneLine(t.display ?? t.result.split('\n')[0]), output: bounded(t.result), isError: t.isError ?? false }),
        }));
      }
      if (m.interrupted) msg.interrupted = true;
      // A recorded error comes back with its kind: the same text and actions (Retry, Set API key…) as live.
      if (m.error) msg.error = m.errorKind ? describeError({ message: m.error, data: { kind: m.errorKind } }) : { kind: 'noAnswer', message: m.error, actions: [] };
      return msg;
    });
    if (resume.recap) this.addStatus(`Recap: ${resume.recap}`, { tone: 'recap' });
  }

  /** Starts a turn: the user's message and an empty streaming answer, both returned for posting. */
  begin(prompt: string): [TranscriptMessage, TranscriptMessage] {
    if (this.turn) throw new Error('A turn is already running');
    const user: TranscriptMessage = { id: newId(), role: 'user', text: prompt };
    const assistant: TranscriptMessage = { id: newId(), role: 'assistant', text: '', streaming: true };
    this.messages.push(user, assistant);
    this.turn = { assistantId: assistant.id, lastSeq: -1, stopped: false };
    return [user, assistant];
  }

  /**
   * Retry takes the failed turn back out (the retried turn shows the prompt once, with its new
   * answer); only the last turn, and only when it failed with Retry offered. Returns the prompt to
   * send again (also for a reopened chat, whose prompt was typed in an earlier window), or undefined.
   */
  takeBackFailedTurn(): string | undefined {
    // Status lines after the turn (a resumed chat's recap, a compaction's line) do not make it an older one.
    let end = this.messages.length;
    while (end > 0 && this.messages[end - 1].role === 'status') end--;
    const [user, answer] = this.messages.slice(Math.max(0, end - 2), end);
    if (this.turn || end < 2 || user?.role !== 'user' || !answer?.error?.actions.includes('retry')) return undefined;
    this.messages.splice(end - 2, 2);
    return user.text;
  }

  /**
   * How surely `ev` belongs to this chat's running turn, for a window with several chats: 2 its
   * turn, 1 a first event of its chat (or of a new chat, which has no session yet), 0 not its own.
   */
  owns(ev: ChatEvent): number {
    const turn = this.turn;
    if (!turn || turn.stopped) return 0;
    if (turn.turnId !== undefined) return turn.turnId === ev.turnId ? 2 : 0;
    return this.sessionId === undefined || this.sessionId === ev.sessionId ? 1 : 0;
  }

  /** Folds one server event into the answer; returns what the webview must change, if anything. */
  apply(ev: ChatEvent): StreamPatch | undefined {
    const turn = this.turn;
    if (!turn || turn.stopped) return undefined; // late chunks after Stop are discarded
    if (turn.turnId === undefined) turn.turnId = ev.turnId;
    else if (ev.turnId !== turn.turnId) return undefined;
    if (ev.seq <= turn.lastSeq) return undefined;
    turn.lastSeq = ev.seq;
    if (ev.sessionId) this.sessionId = ev.sessionId;
    const msg = this.find(turn.assistantId);
    if (!msg) return undefined;
    switch (ev.kind) {
      case 'text':
        if (!ev.text) return undefined;
        msg.text += ev.text;
        return { op: 'append', id: msg.id, text: ev.text };
      case 'thought':
        if (!ev.text) return undefined;
        msg.thought = (msg.thought ?? '') + ev.text;
        return { op: 'thought', id: msg.id, text: ev.text };
      case 'toolCall': {
        if (!ev.tool) return undefined;
        const tools = msg.tools ?? [];
        const card: ToolCard = {
          id: ev.tool.id,
          key: String(tools.length),
          name: ev.tool.name,
          detail: toolDetail(ev.tool.args, this.relative),
          at: msg.text.length,
          ...toolExtras(ev.tool.args),
        };
        msg.tools = [...tools, card];
        return { op: 'tool', id: msg.id, card };
      }
      case 'toolResult': {
        if (!ev.tool) return undefined;
        const tools = msg.tools ?? [];
        // The oldest call with this id still waiting: ids are reused across rounds, and a round's
        // results all arrive before the next round's calls.
        const i = tools.findIndex((t) => t.id === ev.tool!.id && t.result === undefined);
        const card: ToolCard = {
          ...(i >= 0 ? tools[i] : { id: ev.tool.id, key: String(tools.length), name: ev.tool.name, detail: '', at: msg.text.length }),
          result: oneLine(ev.text ?? ''),
          output: bounded(ev.tool.output ?? ev.text ?? ''),
          isError: ev.tool.isError ?? false,
          ...(ev.tool.decision ? { decision: ev.tool.decision } : {}),
        };
        msg.tools = i >= 0 ? tools.map((t, j) => (j === i ? card : t)) : [...tools, card];
        return { op: 'tool', id: msg.id, card };
      }
      case 'status': {
        // e.g. "Compressed the conversation history: 48,210 → 9,877 tokens." before the model was asked
        const note = oneLine(ev.text ?? '', 300);
        if (!note) return undefined;
        msg.notes = [...(msg.notes ?? []), note];
        return { op: 'note', id: msg.id, text: note };
      }
      case 'contextChanges':
        // What this turn's request gained over the last turn's (skills loaded, memories recalled…): chips under the answer.
        if (!ev.changes?.length) return undefined;
        msg.changes = ev.changes;
        return { op: 'changes', id: msg.id, changes: ev.changes };
      default:
        return undefined; // error events: the response itself carries the error
    }
  }

  /** A status line after the last message (e.g. "Compacting…"), returned for posting. */
  addStatus(text: string, o: { pending?: boolean; tone?: StatusTone } = {}): TranscriptMessage {
    const line: TranscriptMessage = { id: newId(), role: 'status', text, tone: o.tone ?? 'info', ...(o.pending ? { pending: true } : {}) };
    this.messages.push(line);
    return line;
  }

  /** The status line's final text, in place; undefined when it is gone (a new chat or a resume meanwhile). */
  settleStatus(id: string, text: string, tone: StatusTone): TranscriptMessage | undefined {
    const line = this.find(id);
    if (!line || line.role !== 'status') return undefined;
    line.text = text;
    line.tone = tone;
    delete line.pending;
    return line;
  }

  /** Stop pressed: keep the partial answer, drop anything that still arrives for this turn. */
  stop(): void {
    if (this.turn) this.turn.stopped = true;
  }

  /** The request settled; returns the finished answer. */
  end(outcome: { sessionId?: string; text?: string; cancelled?: boolean; error?: InlineError }): TranscriptMessage | undefined {
    const turn = this.turn;
    this.turn = undefined;
    if (!turn) return undefined;
    if (outcome.sessionId) this.sessionId = outcome.sessionId;
    const msg = this.find(turn.assistantId);
    if (!msg) return undefined;
    msg.streaming = false;
    if (outcome.cancelled || turn.stopped) msg.interrupted = true;
    // The authoritative full text, unless tool rows are placed in the streamed text by offset.
    else if (outcome.text !== undefined && !outcome.error && !msg.tools?.length) msg.text = outcome.text;
    if (outcome.error) msg.error = outcome.error;
    return msg;
  }

  snapshot(extra: Omit<Snapshot, 'sessionId' | 'messages' | 'running'>): Snapshot {
    return { sessionId: this.sessionId, messages: this.messages, running: this.running, ...extra };
  }

  /** The files the server named for a context chip of a message (to open), or none. */
  changeSources(id: string, index: number): string[] {
    return this.find(id)?.changes?.[index]?.sources ?? [];
  }

  private find(id: string): TranscriptMessage | undefined {
    for (let i = this.messages.length - 1; i >= 0; i--) if (this.messages[i].id === id) return this.messages[i];
    return undefined;
  }
}
