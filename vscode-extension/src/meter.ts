/**
 * The one context figure the status bar, the Context view and the chat panel all show, and its
 * wording. It is the server's: the prompt size of the chat's last model round (qwen/contextStatus,
 * what Qwen Code 0.24.4's footer shows as "% context left"), or, before the chat's first round
 * (a new chat, a window reload, a resumed chat), qwen/context's count of what the next request
 * holds. Every surface words it the same way ("92% left"), so none can say "100% left" while
 * another says "8% used".
 */
import type { ContextResult, ContextStatus, Level } from './shared/protocol';

/** What the surfaces show: qwen/contextStatus without its session id. */
export type ContextFigure = Omit<ContextStatus, 'sessionId'>;

/**
 * The figure from a qwen/context report: `promptTokens` when the chat's last round is known (a
 * resumed chat's recorded count), else the report's total. Percent and level as the server's
 * `Thresholds.percent_left` and `Thresholds.level`.
 */
export function figureOfReport(r: ContextResult, promptTokens?: number): ContextFigure {
  const used = promptTokens ?? r.totalTokens;
  const t = r.thresholds;
  const level: Level = used >= t.hard ? 'hard' : used >= t.auto ? 'auto' : used >= t.warn ? 'warn' : 'ok';
  const percentLeft = r.window > 0 ? Math.round(Math.max(0, 1000 * (1 - used / r.window))) / 10 : 0;
  return { promptTokens: used, window: r.window, percentLeft, level, thresholds: t };
}

export interface FigureWords {
  /** "92% left" */
  left: string;
  /** "9,858 of 131,072 tokens" */
  tokens: string;
  /** "compresses at 111,411 tokens" */
  compresses: string;
  /** Where each level starts, in tokens: "warns at …, compresses at …, full at …". */
  limits: string;
}

const n = (x: number): string => x.toLocaleString('en-US');

export function figureWords(f: ContextFigure): FigureWords {
  const t = f.thresholds;
  return {
    left: `${Math.max(0, Math.min(100, Math.round(f.percentLeft)))}% left`,
    tokens: `${n(f.promptTokens)} of ${n(f.window)} tokens`,
    compresses: `compresses at ${n(t.auto)} tokens`,
    limits: `Warns at ${n(t.warn)} tokens, compresses at ${n(t.auto)}, full at ${n(t.hard)}.`,
  };
}

export interface MeterView {
  text: string;
  tooltip: string;
  /** A theme colour id, only for warn/auto (warning) and hard (error), per the status-bar guidelines. */
  background?: 'statusBarItem.warningBackground' | 'statusBarItem.errorBackground';
}

export function meterView(s: ContextFigure): MeterView {
  const w = figureWords(s);
  const background =
    s.level === 'hard' ? 'statusBarItem.errorBackground' : s.level === 'warn' || s.level === 'auto' ? 'statusBarItem.warningBackground' : undefined;
  const note = s.level === 'hard' ? ' — the window is nearly full' : s.level === 'ok' ? '' : ' — filling up';
  return {
    text: `$(dashboard) Qwen ${w.left}`,
    tooltip: `Qwen context: ${w.tokens} used, ${w.left}${note}. Compresses at ${n(s.thresholds.auto)}. Click to see what fills it.`,
    background,
  };
}
