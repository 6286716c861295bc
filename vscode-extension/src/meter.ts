/** The status-bar context meter's text, tooltip and colour from qwen/contextStatus. */
import type { ContextStatus } from './shared/protocol';

export interface MeterView {
  text: string;
  tooltip: string;
  /** A theme colour id, only for warn/auto (warning) and hard (error), per the status-bar guidelines. */
  background?: 'statusBarItem.warningBackground' | 'statusBarItem.errorBackground';
}

export function meterView(s: ContextStatus): MeterView {
  const left = Math.max(0, Math.min(100, Math.round(s.percentLeft)));
  const background =
    s.level === 'hard' ? 'statusBarItem.errorBackground' : s.level === 'warn' || s.level === 'auto' ? 'statusBarItem.warningBackground' : undefined;
  const used = s.promptTokens.toLocaleString('en-US');
  const window = s.window.toLocaleString('en-US');
  const note = s.level === 'hard' ? ' — the window is nearly full' : s.level === 'ok' ? '' : ' — filling up';
  return {
    text: `$(dashboard) Qwen ${left}% left`,
    tooltip: `Qwen context: ${used} of ${window} tokens used, ${left}% left${note}.${autoNote(s)} Click to see what fills it.`,
    background,
  };
}

/** Where automatic compression starts, when the server says (0.24.4's thresholds for this window). */
function autoNote(s: ContextStatus): string {
  return s.thresholds ? ` Compresses at ${s.thresholds.auto.toLocaleString('en-US')}.` : '';
}
