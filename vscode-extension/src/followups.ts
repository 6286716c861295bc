/**
 * The host side of follow-ups in the panel: the follow-up suggestion (`qwen/suggestion`, accepted
 * or dismissed by id) and proposed skills (`qwen/skillProposed`, accepted or discarded). Pure (no
 * vscode import), like src/permission.ts, so the whole life of both is unit-tested with a fake
 * transport and a fake UI; src/chatController.ts only forwards to it.
 *
 * Suggestion rules (Qwen Code's followup controller: one suggestion at a time, Tab / Enter in the
 * empty composer accepts, typing dismisses):
 *  - only a suggestion for the chat this window shows is offered, and never while a turn runs
 *    (a new qwen/chat aborts the server's speculation, so one arriving mid-turn is stale);
 *  - a new suggestion replaces the old one; the same id again only updates `ready`;
 *  - once accepted, dismissed or replaced, an id is finished: a late `ready` for it (the
 *    speculation ending after the user moved on) never brings the chip back;
 *  - a server without the feature (-32601) is quiet: it sends no suggestions, and a dismiss it
 *    refuses is ignored.
 *
 * Accepting runs as a turn of the chat (the server streams qwen/chatEvent for it, like
 * qwen/chat); see acceptSuggestionTurn for what happens after.
 */
import { describeError, isCancelled, isMethodNotFound } from './errors';
import { requests } from './rpc.generated';
import type { Send } from './rpc.generated';
import type { InlineError, SkillProposal, Suggestion } from './shared/messages';
import type { SkillProposalAcceptResult, SkillProposed, SuggestionNotice } from './shared/protocol';

/** Bounds on what the server sends (its output is model output: untrusted, possibly huge). */
export const MAX_SUGGESTION_CHARS = 2000;
export const MAX_SKILL_TEXT_CHARS = 100_000;
export const MAX_SKILL_NAME_CHARS = 100;
export const MAX_SKILL_DESCRIPTION_CHARS = 1000;
/** Cards kept at once; an older proposal beyond this stays pending on the server, unshown. */
export const MAX_PROPOSALS = 5;
/** Finished suggestion ids remembered so a late `ready` cannot revive them. */
const MAX_FINISHED = 50;

export const NO_SUGGESTION_SUPPORT = 'This server cannot run suggestions (update qwen-lsp). Use Retry to send it as a message.';
export const NO_SKILL_REVIEW_SUPPORT = 'This server cannot save proposed skills (update qwen-lsp).';

export interface FollowupUi {
  /** The chat the window shows: only its suggestions are offered. */
  chat(): { sessionId: string | undefined; running: boolean };
  /** Shows the suggestion chip, or removes it (null). */
  suggestion(s: Suggestion | null): void;
  /** Shows the proposed-skill cards (the whole list). */
  proposals(list: SkillProposal[]): void;
  /** A line in the chat's notices; `path` is a file it can open. */
  notice(text: string, path?: string): void;
  /** A proposed skill was saved: the Skills view lists it now. */
  skillSaved(): void;
}

const str = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.trim() ? (v.length > max ? `${v.slice(0, max - 1)}…` : v) : undefined);

/** The notice after a proposed skill was saved. */
export function skillSavedText(name: string, shownPath: string): string {
  return `Skill ${name} saved to ${shownPath}`;
}

export class Followups {
  private suggestionNow: (Suggestion & { sessionId: string }) | undefined;
  private readonly finished: string[] = [];
  private list: SkillProposal[] = [];
  private readonly answering = new Set<string>();

  constructor(
    private readonly send: Send,
    private readonly ui: FollowupUi,
    private readonly relative: (path: string) => string = (p) => p,
  ) {}

  /** For snapshots: the chip and the cards come back after hide or reload. */
  get suggestion(): Suggestion | undefined {
    const s = this.suggestionNow;
    return s && { id: s.id, text: s.text, ready: s.ready };
  }

  get proposals(): SkillProposal[] {
    return this.list;
  }

  /** qwen/suggestion. */
  onSuggestion(p: Partial<SuggestionNotice> | null | undefined): void {
    const id = str(p?.suggestionId, 200);
    const text = str(p?.text, MAX_SUGGESTION_CHARS);
    const sessionId = p?.sessionId;
    if (!id || !text || typeof sessionId !== 'string' || this.finished.includes(id)) return;
    const chat = this.ui.chat();
    if (chat.running || chat.sessionId !== sessionId) return;
    const ready = p?.ready === true;
    const now = this.suggestionNow;
    if (now?.id === id && now.ready === ready && now.text === text) return;
    if (now && now.id !== id) this.finish(now.id); // replaced: the server dropped the old one
    this.suggestionNow = { id, text, ready, sessionId };
    this.ui.suggestion(this.suggestion!);
  }

  /**
   * The suggestion the user accepted, taken off the chip; undefined when `id` is not the one on
   * show (already accepted, replaced, or from another chat).
   */
  take(id: string): Suggestion | undefined {
    const s = this.suggestion;
    if (!s || s.id !== id) return undefined;
    this.drop();
    return s;
  }

  /** The user typed (or closed the chip): the server throws the speculation away. */
  dismiss(id: string): void {
    if (this.suggestionNow?.id !== id) return;
    this.drop();
    this.tellDismissed(id);
  }

  /**
   * A new chat or another session: the chip goes and, with `tellServer`, its speculation too. A
   * sent prompt clears without telling: the server aborts the speculation on any new qwen/chat.
   */
  clear(tellServer: boolean): void {
    const s = this.suggestionNow;
    if (!s) return;
    this.drop();
    if (tellServer) this.tellDismissed(s.id);
  }

  /** qwen/skillProposed. */
  onSkillProposed(p: Partial<SkillProposed> | null | undefined): void {
    const id = str(p?.proposalId, 200);
    const name = str(p?.name, MAX_SKILL_NAME_CHARS);
    const text = str(p?.text, MAX_SKILL_TEXT_CHARS);
    if (!id || !name || !text) return;
    const proposal: SkillProposal = { id, name, description: str(p?.description, MAX_SKILL_DESCRIPTION_CHARS) ?? '', text };
    this.list = [...this.list.filter((x) => x.id !== id), proposal].slice(-MAX_PROPOSALS);
    this.ui.proposals(this.list);
  }

  /**
   * Accept (→ `.qwen/skills/auto-skill-<name>/`) or Discard a proposed skill. A saved skill gets a notice
   * with its file and the Skills view refreshes; a failed accept keeps the card (the user can
   * still discard it) and says why; a discard removes the card whatever the server answers.
   */
  async answerProposal(id: string, accept: boolean): Promise<void> {
    const p = this.list.find((x) => x.id === id);
    if (!p || this.answering.has(id)) return;
    this.answering.add(id);
    try {
      if (!accept) {
        this.remove(id);
        await this.send(requests.skillProposalDiscard, { proposalId: id }).catch(() => undefined);
        return;
      }
      let r: Partial<SkillProposalAcceptResult> | undefined;
      try {
        r = await this.send(requests.skillProposalAccept, { proposalId: id });
      } catch (err) {
        if (isMethodNotFound(err)) {
          this.remove(id);
          this.ui.notice(NO_SKILL_REVIEW_SUPPORT);
        } else {
          this.ui.notice(`Skill ${p.name} was not saved: ${describeError(err).message}`);
          this.ui.proposals(this.list); // the card is answerable again
        }
        return;
      }
      this.remove(id);
      const path = typeof r?.path === 'string' && r.path ? r.path : undefined;
      this.ui.notice(skillSavedText(p.name, path ? this.relative(path) : '.qwen/skills'), path);
      this.ui.skillSaved();
    } finally {
      this.answering.delete(id);
    }
  }

  private remove(id: string): void {
    this.list = this.list.filter((x) => x.id !== id);
    this.ui.proposals(this.list);
  }

  private drop(): void {
    const s = this.suggestionNow;
    if (!s) return;
    this.finish(s.id);
    this.suggestionNow = undefined;
    this.ui.suggestion(null);
  }

  private finish(id: string): void {
    this.finished.push(id);
    if (this.finished.length > MAX_FINISHED) this.finished.shift();
  }

  private tellDismissed(id: string): void {
    // Fire and forget: an older server (-32601) or an id it already dropped changes nothing here.
    void this.send(requests.suggestionDismiss, { suggestionId: id }).catch(() => undefined);
  }
}

/** How an accepted suggestion's turn ended, for Transcript.end. */
export interface AcceptOutcome {
  cancelled?: boolean;
  error?: InlineError;
}

/**
 * qwen/suggestion/accept as a turn. The server streams the turn's chat events before answering
 * (like qwen/chat), so the caller has begun a turn with the suggestion as the user's message.
 *  - `applied: false`: the suggestion ran as a normal turn; what streamed is the answer.
 *  - `applied: true`: the speculative result was applied (its edits through workspace/applyEdit)
 *    and its turn appended to the session; the server replays the turn's chat events under the
 *    accept's turnId before answering (docs/protocol.md), so what streamed is the answer, tool
 *    cards included. (Re-reading the session instead turned the tool cards into plain text.)
 *  - -32601 (an older server) or any other failure: a line saying so, with Retry, which sends
 *    the text as a normal message.
 * `send` carries the turn's cancellation (Stop cancels the accept like any turn).
 */
export async function acceptSuggestionTurn(send: Send, suggestionId: string): Promise<AcceptOutcome> {
  try {
    await send(requests.suggestionAccept, { suggestionId });
  } catch (err) {
    if (isCancelled(err)) return { cancelled: true };
    if (isMethodNotFound(err)) return { error: { kind: 'unsupported', message: NO_SUGGESTION_SUPPORT, actions: ['retry'] } };
    const error = describeError(err);
    return { error: { ...error, actions: error.actions.includes('retry') ? error.actions : ['retry', ...error.actions] } };
  }
  return {};
}
