/**
 * The Context picture as HTML (pure, no vscode import, so it is unit-tested): one stacked bar per
 * request the chat sent (the server's qwen/context `requests`, the last 20), its parts in the
 * server's row order, drawn against the model's window with the warn, auto-compress and hard marks.
 * Every figure is the server's: a part's tokens on hover (the segment's title), the whole bar's in
 * its label. For screen readers each bar is an image with the same figures in words, and a table
 * under the bars (visually hidden) holds every number. The page has no script: the host writes it
 * again when the report changes.
 */
import type { ContextResult, SentRequest } from './shared/protocol';

/** The rows, in stacking order, and the theme colour each is drawn in. */
export const PICTURE_ROWS: readonly { name: string; colour: string }[] = [
  { name: 'system', colour: 'var(--vscode-charts-blue)' },
  { name: 'context files', colour: 'var(--vscode-charts-green)' },
  { name: 'memory', colour: 'var(--vscode-charts-purple)' },
  { name: 'skills', colour: 'var(--vscode-charts-yellow)' },
  { name: 'editor context', colour: 'var(--vscode-charts-orange)' },
  { name: 'history', colour: 'var(--vscode-charts-lines, var(--vscode-descriptionForeground))' },
  { name: 'tools', colour: 'var(--vscode-charts-red)' },
];

const n = (x: number): string => x.toLocaleString('en-US');

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** "Turn 3", or "Turn 3 · round 2" for a tool round's request. */
export function requestName(r: SentRequest, turnNo: number): string {
  return r.round > 1 ? `Turn ${turnNo} · round ${r.round}` : `Turn ${turnNo}`;
}

/** The number of each request's turn within the kept ones, counted from the oldest kept turn. */
function turnNumbers(requests: SentRequest[]): number[] {
  const seen = new Map<string, number>();
  return requests.map((r) => {
    if (!seen.has(r.turnId)) seen.set(r.turnId, seen.size + 1);
    return seen.get(r.turnId)!;
  });
}

function pct(tokens: number, window: number): string {
  return `${Math.min(100, (100 * tokens) / window).toFixed(3)}%`;
}

/** One request's bar: the parts, then the marks. */
function bar(r: SentRequest, name: string, report: ContextResult): string {
  const parts = r.parts.filter((p) => p.tokens > 0);
  const words = parts.map((p) => `${p.name} ${n(p.tokens)}`).join(', ');
  const reported = r.reportedTokens != null ? `; the endpoint counted ${n(r.reportedTokens)}` : '';
  const label = `${name}: ${n(r.totalTokens)} of ${n(report.window)} tokens — ${words}${reported}`;
  const segments = parts
    .map((p) => {
      const colour = PICTURE_ROWS.find((row) => row.name === p.name)?.colour ?? 'var(--vscode-foreground)';
      return `<span class="seg" data-part="${esc(p.name)}" data-tokens="${p.tokens}" style="width:${pct(p.tokens, report.window)};background:${colour}" title="${esc(`${name} · ${p.name}: ${n(p.tokens)} tokens`)}"></span>`;
    })
    .join('');
  const t = report.thresholds;
  const marks = ([['warn', t.warn], ['auto', t.auto], ['hard', t.hard]] as const)
    .map(([k, v]) => `<span class="mark mark-${k}" style="left:${pct(v, report.window)}" title="${esc(markWords(k, v))}"></span>`)
    .join('');
  return `<li class="request" data-turn="${esc(r.turnId)}" data-round="${r.round}" data-total="${r.totalTokens}">
<div class="request-head"><span class="request-name">${esc(name)}</span><span class="request-total">${n(r.totalTokens)}${r.reportedTokens != null ? ` <span class="reported" title="The endpoint's own count of this request">(endpoint ${n(r.reportedTokens)})</span>` : ''}</span></div>
<div class="bar" role="img" aria-label="${esc(label)}" title="${esc(label)}">${segments}${marks}</div>
</li>`;
}

function markWords(kind: 'warn' | 'auto' | 'hard', tokens: number): string {
  return kind === 'warn' ? `Warns at ${n(tokens)} tokens` : kind === 'auto' ? `Compresses at ${n(tokens)} tokens` : `Full at ${n(tokens)} tokens`;
}

/** The hidden table: a row per request, a column per part, the total last. */
function table(requests: SentRequest[], names: string[]): string {
  const head = `<tr><th scope="col">Request</th>${PICTURE_ROWS.map((r) => `<th scope="col">${esc(r.name)}</th>`).join('')}<th scope="col">Total</th></tr>`;
  const rows = requests
    .map((r, i) => {
      const cells = PICTURE_ROWS.map((row) => `<td>${n(r.parts.find((p) => p.name === row.name)?.tokens ?? 0)}</td>`).join('');
      return `<tr><th scope="row">${esc(names[i])}</th>${cells}<td>${n(r.totalTokens)}</td></tr>`;
    })
    .join('');
  // In a clipped box: a table grows to its content whatever width it is given.
  return `<div class="visually-hidden"><table><caption>Tokens of each request, part by part</caption>${head}${rows}</table></div>`;
}

const LEGEND = `<ul class="legend" aria-hidden="true">${PICTURE_ROWS.map((r) => `<li><span class="swatch" style="background:${r.colour}"></span>${esc(r.name)}</li>`).join('')}</ul>`;

/** The whole page; `cspSource` is the webview's, `message` what to say when there is nothing to draw. */
export function pictureHtml(report: ContextResult | undefined, cspSource: string, message?: string): string {
  const requests = report?.requests ?? [];
  let body: string;
  if (!report || !requests.length) {
    body = `<p class="empty">${esc(message ?? (report ? 'No request sent in this chat yet: each turn adds a bar here.' : 'Loading…'))}</p>`;
  } else {
    const turns = turnNumbers(requests);
    const names = requests.map((r, i) => requestName(r, turns[i]));
    const t = report.thresholds;
    body = `<p class="caption">Each request this chat sent (the last ${requests.length}), against the ${n(report.window)}-token window: warns at ${n(t.warn)}, compresses at ${n(t.auto)}, full at ${n(t.hard)}.</p>
${LEGEND}
<ol class="requests">${requests.map((r, i) => bar(r, names[i], report)).join('')}</ol>
${table(requests, names)}`;
  }
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline';">
<meta name="viewport" content="width=device-width, initial-scale=1.0"><style>${STYLE}</style></head>
<body>${body}</body></html>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 4px 8px; }
.caption, .empty { color: var(--vscode-descriptionForeground); margin: 4px 0 6px; }
.legend { list-style: none; padding: 0; margin: 0 0 6px; display: flex; flex-wrap: wrap; gap: 2px 10px; font-size: 0.85em; }
.swatch { display: inline-block; width: 8px; height: 8px; margin-right: 4px; border-radius: 2px; }
.requests { list-style: none; padding: 0; margin: 0; }
.request { margin: 0 0 6px; }
.request-head { display: flex; justify-content: space-between; gap: 8px; font-size: 0.85em; }
.reported { color: var(--vscode-descriptionForeground); }
.bar { position: relative; display: flex; height: 10px; background: var(--vscode-input-background, transparent); border: 1px solid var(--vscode-widget-border, var(--vscode-contrastBorder, var(--vscode-descriptionForeground))); border-radius: 2px; }
.seg { display: block; flex: none; height: 100%; min-width: 1px; }
.mark { position: absolute; top: -3px; bottom: -3px; width: 0; border-left: 1px dashed var(--vscode-editorWarning-foreground); }
.mark-hard { border-left: 2px solid var(--vscode-editorError-foreground); }
.mark-auto { border-left-style: solid; }
.visually-hidden { position: absolute; left: 0; top: 0; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
`;
