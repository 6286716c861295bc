/**
 * The chat webview. Plain DOM (no framework): the transcript is a list of message elements, the
 * streaming answer is patched in place once per frame, and everything is rebuilt from the host's
 * snapshot when the view is shown again or the window reloads. Webview state keeps only what the
 * server cannot know: the draft, the scroll position and whether the reader was following.
 */
import { APPROVAL_MODES } from '../src/shared/messages';
import type { ApprovalModeName, HostToWebview, Snapshot, StreamPatch, ToolCard, TranscriptMessage, WebviewToHost, AttachmentChip, Notice, InlineError, ErrorAction, CompactState, ContextFigureLine } from '../src/shared/messages';
import { MarkdownView } from './markdown';
import { visible } from '../src/shared/visibleText';
import { AutoScroller } from './scroll';
import { ApprovalCard } from './approval';
import { SuggestionChip } from './suggestion';
import { SkillProposalCards } from './skillProposals';
import { EditorContextLine } from './editorContextChip';
import { PromptHistory } from './promptHistory';
import { renderWelcome, TEST_PROMPT } from './welcome';
import { initialState } from './state';
import { Completion } from './completion';
import { watchPastes } from './paste';
import { renderContextChanges, showContextChanges } from './contextChips';
import type { SavedState, View } from './state';

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const post = (msg: WebviewToHost): void => vscode.postMessage(msg);
const state = initialState(vscode.getState() as SavedState | undefined);
const saved = state.saved;

const ACTION_LABELS: Record<ErrorAction, string> = {
  setApiKey: 'Set API key',
  openSettings: 'Open settings',
  restartServer: 'Restart server',
  retry: 'Retry',
  showLog: 'Show log',
  configureModel: 'Set up model',
  setServerPath: 'Set server path',
  manageTrust: 'Trust this folder…',
};

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

function button(label: string, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs }, label);
  return b;
}

// ---- layout -------------------------------------------------------------------------------
const app = document.getElementById('app')!;
const header = h('div', { class: 'header', role: 'toolbar', 'aria-label': 'Chat actions' });
const newChatBtn = button('New chat', { id: 'new-chat', 'aria-label': 'New chat' });
const historyBtn = button('History', { id: 'history', 'aria-label': 'Chat history', 'aria-haspopup': 'listbox' });
const compactBtn = button('Compact', {
  id: 'compact',
  'aria-label': 'Compact conversation',
  title: 'Summarize the model’s copy of this chat to free context. The conversation shown here is kept.',
  disabled: '',
});
const modePicker = h('select', { id: 'approval-mode', 'aria-label': 'Approval mode', title: 'When Qwen asks before acting (tools.approvalMode)' });
for (const { mode, label } of APPROVAL_MODES) modePicker.append(h('option', { value: mode }, label));
header.append(newChatBtn, historyBtn, compactBtn, modePicker);
const proposals = h('div', { id: 'proposals', class: 'proposals', role: 'region', 'aria-label': 'Proposed skills', hidden: '' });
const scrollBox = h('div', { id: 'transcript', class: 'transcript', tabindex: '0', 'aria-label': 'Conversation' });
const transcript = h('div', { id: 'messages', role: 'log', 'aria-label': 'Messages' });
const welcome = h('div', { id: 'welcome', class: 'welcome', role: 'region', 'aria-label': 'Set up Qwen', hidden: '' });
const restoring = h('div', { id: 'restoring', class: 'status-line pending', role: 'status', hidden: '' });
restoring.append(h('span', { class: 'status-icon', 'aria-hidden': 'true' }), h('span', { class: 'status-text' }, 'Opening the last chat…'));
scrollBox.append(welcome, restoring, transcript);
const jumpBtn = button('Jump to latest ↓', { id: 'jump', class: 'jump', hidden: '', 'aria-label': 'Jump to latest' });
const footer = h('div', { class: 'footer' });
const chips = h('div', { id: 'attachments', class: 'chips', 'aria-label': 'Attachments' });
const editorLine = h('div', { id: 'editor-context', class: 'editor-context', role: 'group', 'aria-label': 'Editor context' });
const approvals = h('div', { id: 'approvals', class: 'approvals', role: 'region', 'aria-label': 'Approvals' });
const suggestionBox = h('div', { id: 'suggestion', class: 'suggestion', role: 'group', 'aria-label': 'Suggested follow-up' });
const prompt = h('textarea', { id: 'prompt', rows: '3', placeholder: 'Ask Qwen… (Enter to send, Shift+Enter for a new line)', 'aria-label': 'Message to Qwen' });
const row = h('div', { class: 'composer-row' });
const attachSelBtn = button('+ Selection', { id: 'attach-selection', 'aria-label': 'Attach editor selection' });
const attachFileBtn = button('+ File', { id: 'attach-file', 'aria-label': 'Attach active file' });
const spacer = h('span', { class: 'spacer' });
const stopBtn = button('Stop', { id: 'stop', 'aria-label': 'Stop generating', disabled: '' });
const sendBtn = button('Send', { id: 'send', class: 'primary', 'aria-label': 'Send message' });
row.append(attachSelBtn, attachFileBtn, spacer, stopBtn, sendBtn);
// The context figure the status bar shows, worded the same; it opens the Context view.
const figureBtn = button('', { id: 'context-figure', class: 'context-figure', hidden: '' });
footer.append(approvals, suggestionBox, editorLine, chips, prompt, row, figureBtn);
const live = h('div', { id: 'live', class: 'sr-only', 'aria-live': 'polite', role: 'status' });
const main = h('div', { class: 'main' });
main.append(scrollBox, jumpBtn);
app.append(header, proposals, main, footer, live);

// ---- parts --------------------------------------------------------------------------------
const views = state.views;
const scroller = new AutoScroller(scrollBox, transcript, (pinned) => {
  if (pinned) jumpBtn.hidden = true;
  persist();
});

const editorContext = new EditorContextLine(editorLine, () => post({ type: 'toggleEditorContext' }));

const approvalCard = new ApprovalCard(approvals, (id, optionId, reason) => {
  post({ type: 'approvalReply', id, optionId, ...(reason ? { reason } : {}) });
});

const suggestion = new SuggestionChip(
  suggestionBox,
  prompt,
  {
    accept: (id) => post({ type: 'acceptSuggestion', id }),
    dismiss: (id) => post({ type: 'dismissSuggestion', id }),
  },
  () => state.running,
);

const history = new PromptHistory(prompt, saved.sent ?? []);

const completion = new Completion(prompt, row, {
  files: (query) => post({ type: 'completeFiles', query }),
  pickedPath: (path) => post({ type: 'attachPath', path }),
});

/** The welcome's steps while the chat is empty (a new user's first stop); the transcript once it is not. */
function updateWelcome(): void {
  const empty = views.size === 0;
  const setup = state.setup;
  restoring.hidden = !state.restoring;
  welcome.hidden = !empty || !setup || state.restoring;
  if (empty && setup) welcome.replaceChildren(...renderWelcome(setup, ACTION_LABELS));
}

const skillCards = new SkillProposalCards(proposals, (id, accept) => post({ type: 'skillProposalReply', id, accept }));

function persist(): void {
  if (state.persistTimer !== undefined) return;
  state.persistTimer = window.setTimeout(() => {
    state.persistTimer = undefined;
    vscode.setState({ draft: prompt.value, scrollTop: scrollBox.scrollTop, pinned: scroller.pinned, sent: history.entries } satisfies SavedState);
  }, 100);
}

function announce(text: string): void {
  live.textContent = '';
  window.setTimeout(() => (live.textContent = text), 30);
}

/**
 * Compact is offered once the chat has a session, and not twice at once; the composer is never
 * locked by it. While it runs the button is aria-disabled rather than disabled, so a keyboard user
 * who pressed it keeps focus there instead of being dropped to the page.
 */
function setCompactState(compact: CompactState | undefined): void {
  const c = (state.compact = compact ?? { available: false, compacting: false });
  compactBtn.disabled = !c.available && !c.compacting;
  compactBtn.setAttribute('aria-disabled', String(c.compacting));
  compactBtn.textContent = c.compacting ? 'Compacting…' : 'Compact';
}

function setRunning(r: boolean): void {
  state.running = r;
  sendBtn.disabled = r;
  stopBtn.disabled = !r;
  document.body.classList.toggle('running', r);
}

// ---- rendering ----------------------------------------------------------------------------
/** How a write or command was approved, as the tool card says it. */
const DECISION_LABELS: Record<NonNullable<ToolCard['decision']>, string> = {
  auto: 'auto-approved',
  allow: 'allowed',
  allowAlways: 'allowed always',
  deny: 'denied',
};

/**
 * A tool row: one line (name, what it was called on, the result's first line), expandable to the
 * arguments, the output and a link to the file it is about.
 */
function renderTool(card: ToolCard): HTMLElement {
  // Everything the row shows from the model or the tool goes through the one visible-text escaping.
  const name = visible(card.name);
  const detail = visible(card.detail);
  const result = card.result === undefined ? undefined : visible(card.result);
  // A shell command's row wraps the command onto lines of its own: at 300 px it is still read whole.
  // So does every row while its tool runs (no result yet): what is being read, written or searched
  // is read whole while it matters (a card may be asking about it); a finished row is one line again.
  const shell = card.name === 'run_shell_command';
  const running = result === undefined;
  const el = h('details', { class: `tool${shell ? ' tool-shell' : ''}${running ? ' tool-running' : ''}${card.isError ? ' tool-error' : ''}`, 'data-tool-key': card.key, 'data-tool-id': card.id });
  const summary = h('summary', { 'aria-label': `Tool ${name}${detail ? ` ${detail}` : ''}: ${result === undefined ? 'running' : result || 'done'}` });
  summary.append(h('span', { class: 'tool-name' }, name));
  if (detail) summary.append(h(shell ? 'code' : 'span', { class: 'tool-detail' }, detail));
  summary.append(h('span', { class: 'tool-result' }, result === undefined ? '…' : result || 'done'));
  if (card.decision) summary.append(h('span', { class: `tool-decision decision-${card.decision}` }, DECISION_LABELS[card.decision]));
  el.append(summary);
  const body = h('div', { class: 'tool-body' });
  if (card.path) body.append(h('a', { class: 'tool-file', href: fileHref(card.path) }, detail || visible(card.path)));
  if (card.args) body.append(h('div', { class: 'tool-label' }, 'Arguments'), h('pre', { class: 'tool-args' }, visible(card.args, 'block')));
  if (card.output !== undefined) body.append(h('div', { class: 'tool-label' }, 'Output'), h('pre', { class: 'tool-output' }, visible(card.output, 'block') || '(empty)'));
  el.append(body);
  return el;
}

/** A file: URI for an absolute path (the host opens it only inside the workspace). */
function fileHref(p: string): string {
  return 'file://' + p.split('/').map(encodeURIComponent).join('/');
}

/**
 * Lays out an answer as it happened: text, the tool rows called after it, the next round's text…
 * Each part's Markdown updates incrementally; rows are replaced only when their card changed, so
 * an expanded row stays open while the answer streams.
 */
function renderBody(view: View): void {
  const { msg } = view;
  const body = view.el.querySelector<HTMLElement>('.answer')!;
  const tools = [...(msg.tools ?? [])].sort((x, y) => x.at - y.at || Number(x.key) - Number(y.key));
  const cuts = [...new Set(tools.map((t) => Math.min(t.at, msg.text.length)))];
  const segments: { text: string; tools: ToolCard[] }[] = [];
  let from = 0;
  for (const cut of cuts) {
    segments.push({ text: msg.text.slice(from, cut), tools: tools.filter((t) => Math.min(t.at, msg.text.length) === cut) });
    from = cut;
  }
  segments.push({ text: msg.text.slice(from), tools: [] });
  const parts = (view.parts ??= []);
  while (parts.length < segments.length) {
    const text = h('div', { class: 'markdown' });
    const group = h('div', { class: 'tools' });
    body.append(text, group);
    parts.push({ md: new MarkdownView(text), tools: group });
  }
  while (parts.length > segments.length) {
    const gone = parts.pop()!;
    gone.md.el.remove();
    gone.tools.remove();
  }
  segments.forEach((seg, i) => {
    parts[i].md.update(seg.text);
    parts[i].md.el.classList.toggle('tail', i === segments.length - 1);
    syncTools(parts[i].tools, seg.tools);
  });
}

function syncTools(group: HTMLElement, cards: ToolCard[]): void {
  const old = new Map<string, HTMLElement>();
  for (const el of Array.from(group.children) as HTMLElement[]) old.set(el.dataset.toolKey!, el);
  const next = cards.map((c) => {
    const json = JSON.stringify(c);
    const el = old.get(c.key);
    if (el && el.dataset.card === json) return el;
    const fresh = renderTool(c);
    fresh.dataset.card = json;
    if (el && (el as HTMLDetailsElement).open) (fresh as HTMLDetailsElement).open = true;
    return fresh;
  });
  if (next.length !== group.children.length || next.some((el, i) => group.children[i] !== el)) group.replaceChildren(...next);
}

function renderError(err: InlineError): HTMLElement {
  const box = h('div', { class: 'error', role: 'alert', 'data-kind': err.kind });
  box.append(h('div', { class: 'error-text' }, err.message));
  const actions = h('div', { class: 'error-actions' });
  for (const a of err.actions) {
    const b = button(ACTION_LABELS[a], { 'data-action': a });
    actions.append(b);
  }
  box.append(actions);
  return box;
}

function renderNote(text: string): HTMLElement {
  return h('div', { class: 'note' }, text);
}

function fillMessage(view: View): void {
  const { el, msg } = view;
  if (msg.role === 'status') {
    el.className = `status-line tone-${msg.tone ?? 'info'}${msg.pending ? ' pending' : ''}`;
    el.setAttribute('aria-busy', String(!!msg.pending));
    el.querySelector('.status-text')!.textContent = msg.text;
    return;
  }
  el.className = `msg ${msg.role}${msg.streaming ? ' streaming' : ''}${msg.interrupted ? ' interrupted' : ''}`;
  if (msg.role === 'user') {
    el.querySelector('.body')!.textContent = msg.text;
    return;
  }
  el.querySelector('.notes')!.replaceChildren(...(msg.notes ?? []).map(renderNote));
  const thought = el.querySelector<HTMLDetailsElement>('.thought')!;
  thought.hidden = !msg.thought;
  thought.querySelector('.thought-text')!.textContent = msg.thought ?? '';
  renderBody(view);
  el.querySelector('.badge')?.remove();
  el.querySelector('.error')?.remove();
  if (msg.interrupted) el.append(h('div', { class: 'badge', role: 'note' }, 'Interrupted — stopped before the answer was complete.'));
  if (msg.error) el.append(renderError(msg.error));
  renderContextChanges(el.querySelector('.context-changes')!, msg.changes);
}

function createMessage(msg: TranscriptMessage): HTMLElement {
  const el = h('div', { 'data-id': msg.id });
  if (msg.role === 'status') {
    el.append(h('span', { class: 'status-icon', 'aria-hidden': 'true' }), h('span', { class: 'status-text' }));
  } else if (msg.role === 'assistant') {
    el.append(h('div', { class: 'role' }, 'Qwen'));
    const thought = h('details', { class: 'thought' });
    thought.append(h('summary', {}, 'Thinking'), h('div', { class: 'thought-text' }));
    el.append(h('div', { class: 'notes' }), thought, h('div', { class: 'body answer' }), h('div', { class: 'context-changes', role: 'group', 'aria-label': 'What changed in the context' }));
  } else el.append(h('div', { class: 'role' }, 'You'), h('div', { class: 'body' }));
  const view: View = { el, msg: { ...msg } };
  views.set(msg.id, view);
  fillMessage(view);
  return el;
}

function upsertMessage(msg: TranscriptMessage): void {
  const view = views.get(msg.id);
  if (view) {
    view.msg = { ...msg };
    fillMessage(view);
  } else transcript.append(createMessage(msg));
}

function applyPatches(patches: StreamPatch[]): void {
  const grown = new Set<View>();
  for (const p of patches) {
    const view = views.get(p.id);
    if (!view) continue;
    if (p.op === 'append') {
      view.msg.text += p.text;
      grown.add(view); // rendered once below, however many appends the batch holds
    } else if (p.op === 'changes') {
      view.msg.changes = p.changes;
      renderContextChanges(view.el.querySelector('.context-changes')!, p.changes);
    } else if (p.op === 'note') {
      view.msg.notes = [...(view.msg.notes ?? []), p.text];
      view.el.querySelector('.notes')?.append(renderNote(p.text));
    } else if (p.op === 'thought') {
      view.msg.thought = (view.msg.thought ?? '') + p.text;
      const d = view.el.querySelector<HTMLDetailsElement>('.thought')!;
      d.hidden = false;
      d.querySelector('.thought-text')!.textContent = view.msg.thought;
    } else {
      const tools = (view.msg.tools ??= []);
      const i = tools.findIndex((t) => t.key === p.card.key);
      if (i >= 0) tools[i] = p.card;
      else tools.push(p.card);
      grown.add(view);
    }
  }
  for (const view of grown) renderBody(view);
  afterContent();
}

function afterContent(): void {
  if (scroller.pinned) scroller.follow();
  else jumpBtn.hidden = false;
}

function renderChips(list: AttachmentChip[]): void {
  chips.replaceChildren(
    ...list.map((c, i) => {
      const chip = h('span', { class: 'chip', title: c.uri });
      chip.append(h('span', { class: 'chip-label' }, c.label));
      chip.append(button('×', { 'data-remove-attachment': String(i), 'aria-label': `Remove attachment ${c.label}` }));
      return chip;
    }),
  );
}

/**
 * Notices ("Activated api-helper — triggered by …", "Memory updated …") are lines in the transcript
 * where they happened, after the first `at` messages, so they scroll away with the conversation
 * instead of stacking above it (the transcript is the polite log that announces them). Lines
 * already shown stay as they are; the ones the host dropped (dismissed, or past its limit) go.
 */
function renderNotices(list: Notice[]): void {
  const wanted = new Set(list.map((n) => n.id));
  const shown = new Set<string>();
  for (const el of transcript.querySelectorAll<HTMLElement>(':scope > .notice')) {
    if (wanted.has(el.dataset.noticeId!)) shown.add(el.dataset.noticeId!);
    else el.remove();
  }
  for (const n of list) {
    if (shown.has(n.id)) continue;
    const el = h('div', { class: 'notice', 'data-notice-id': n.id });
    const actions = h('span', { class: 'notice-actions' });
    if (n.uri) actions.append(button(n.openLabel ?? 'Open file', { 'data-open-notice': n.id, 'aria-label': `${n.openLabel ?? 'Open the file that triggered'}: ${n.text}` }));
    actions.append(button('×', { 'data-dismiss-notice': n.id, 'aria-label': 'Dismiss notice' }));
    el.append(h('span', { class: 'notice-icon', 'aria-hidden': 'true' }), h('span', { class: 'notice-text' }, n.text), actions);
    const next = n.at === undefined ? null : transcript.querySelectorAll(':scope > [data-id]')[n.at] ?? null;
    transcript.insertBefore(el, next);
  }
}

function showFigure(f: ContextFigureLine | null | undefined): void {
  figureBtn.hidden = !f;
  figureBtn.textContent = f ? `Context: ${f.left}` : '';
  figureBtn.title = f?.title ?? '';
  figureBtn.setAttribute('aria-label', f ? f.title : 'Context');
  figureBtn.dataset.level = f?.level ?? 'ok';
}

function applySnapshot(s: Snapshot): void {
  views.clear();
  transcript.replaceChildren(...s.messages.map(createMessage));
  setRunning(s.running);
  renderChips(s.attachments);
  editorContext.show(s.editorContext);
  renderNotices(s.notices);
  setCompactState(s.compact);
  approvalCard.show(s.approval ?? null);
  suggestion.show(s.suggestion ?? null);
  skillCards.show(s.skillProposals);
  modePicker.value = s.approvalMode ?? 'default';
  showFigure(s.contextFigure);
  showContextChanges(s.showContextChanges);
  state.setup = s.setup;
  state.restoring = !!s.restoring;
  updateWelcome();
  if (s.restoring) return; // the scroll position is for the chat that follows
  scroller.restore(saved.scrollTop ?? 0, saved.pinned ?? true);
  saved.scrollTop = undefined;
  saved.pinned = undefined;
  if (!scroller.pinned && !scroller.atBottom()) jumpBtn.hidden = false;
}

// ---- events -------------------------------------------------------------------------------
function send(): void {
  const text = prompt.value.trim();
  if (!text || state.running) return;
  post({ type: 'send', prompt: text });
  suggestion.show(null); // a sent prompt replaces the suggestion (the host drops it too)
  history.add(text);
  prompt.value = '';
  persist();
  // A click on Send leaves the caret in the composer, as Enter does: the next message is typed at once.
  prompt.focus();
}

function stop(): void {
  if (state.running) post({ type: 'stop' });
}

prompt.value = saved.draft ?? '';
prompt.addEventListener('input', persist);
prompt.addEventListener('keydown', (e) => {
  if (completion.key(e)) return;
  if (suggestion.handleKey(e)) return;
  if (history.handleKey(e)) return persist();
  if (e.key === 'Enter' && !e.shiftKey) {
    // Never send while an IME composition is open (keyCode 229 covers browsers that clear isComposing early).
    if (e.isComposing || e.keyCode === 229) return;
    e.preventDefault();
    send();
  } else if (e.key === 'Escape' && state.running) {
    e.preventDefault();
    stop();
  }
});
watchPastes(prompt, (data) => post({ type: 'pasteImage', data }));
sendBtn.addEventListener('click', send);
stopBtn.addEventListener('click', stop);
newChatBtn.addEventListener('click', () => post({ type: 'newChat' }));
compactBtn.addEventListener('click', () => {
  if (state.compact.available && !state.compact.compacting) post({ type: 'compact', mode: 'full' });
});
historyBtn.addEventListener('click', () => post({ type: 'showHistory' }));
figureBtn.addEventListener('click', () => post({ type: 'showContext' }));
modePicker.addEventListener('change', () => post({ type: 'setApprovalMode', mode: modePicker.value as ApprovalModeName }));
attachSelBtn.addEventListener('click', () => post({ type: 'attachSelection' }));
attachFileBtn.addEventListener('click', () => post({ type: 'attachFile' }));
jumpBtn.addEventListener('click', () => {
  scroller.jump();
  jumpBtn.hidden = true;
});
scrollBox.addEventListener('scroll', persist, { passive: true });

// Before a <summary>'s default action toggles its row: keep that row still on screen.
scrollBox.addEventListener('click', (e) => {
  const summary = (e.target as HTMLElement).closest('summary');
  if (summary) scroller.hold(summary);
}, { capture: true });

document.addEventListener('click', (e) => {
  const target = e.target as HTMLElement;
  const link = target.closest('a');
  if (link) {
    e.preventDefault();
    const href = link.getAttribute('href');
    if (href) post({ type: 'openLink', href });
    return;
  }
  const b = target.closest('button');
  if (!b) return;
  const d = b.dataset;
  if (d.codeAction) {
    const code = b.closest('.code-block')?.querySelector('code')?.textContent ?? '';
    post(d.codeAction === 'copy' ? { type: 'copy', text: code } : { type: 'insert', text: code });
    if (d.codeAction === 'copy') {
      // Visible feedback on the button itself (and for screen readers), back to "Copy" shortly after.
      b.textContent = 'Copied';
      b.classList.add('copied');
      window.setTimeout(() => {
        b.textContent = 'Copy';
        b.classList.remove('copied');
      }, 1500);
      announce('Copied');
    }
  } else if (d.action) post({ type: 'action', action: d.action as ErrorAction });
  else if (d.setup === 'test' && !state.running) post({ type: 'send', prompt: TEST_PROMPT });
  else if (d.removeAttachment !== undefined) post({ type: 'removeAttachment', index: Number(d.removeAttachment) });
  else if (d.dismissNotice) post({ type: 'dismissNotice', id: d.dismissNotice });
  else if (d.openNotice) post({ type: 'openNotice', id: d.openNotice });
  else if (d.changeIndex !== undefined) {
    const id = b.closest<HTMLElement>('[data-id]')?.dataset.id;
    if (id) post({ type: 'openContextChange', id, index: Number(d.changeIndex) });
  }
});

// Patches are applied once per animation frame however many messages arrived in it; any other
// message first applies what is pending, so a turn's final message never races its patches.
function flushPatches(): void {
  if (state.frame !== undefined) cancelAnimationFrame(state.frame);
  state.frame = undefined;
  const batch = state.pendingPatches;
  state.pendingPatches = [];
  if (batch.length) applyPatches(batch);
}

/** One handler per host message type, each given its own message: a missing one is a compile error. */
type HostHandlers = { [K in HostToWebview['type']]: (m: Extract<HostToWebview, { type: K }>) => void };

const handlers: HostHandlers = {
  patches: (m) => {
    state.pendingPatches.push(...m.patches);
    state.frame ??= requestAnimationFrame(flushPatches);
  },
  snapshot: (m) => applySnapshot(m.snapshot),
  message: (m) => {
    const wasRunning = state.running;
    upsertMessage(m.message);
    updateWelcome();
    afterContent();
    if (m.message.role === 'assistant' && !m.message.streaming && wasRunning) {
      announce(m.message.error ? `Error: ${m.message.error.message}` : m.message.interrupted ? 'Stopped' : 'Response complete');
    }
    if (m.message.role === 'status') announce(m.message.text);
  },
  compactState: (m) => setCompactState(m.state),
  approval: (m) => {
    approvalCard.show(m.approval);
    if (m.approval) announce(`Approval needed: ${m.approval.title}`);
  },
  suggestion: (m) => suggestion.show(m.suggestion),
  skillProposals: (m) => skillCards.show(m.proposals),
  running: (m) => setRunning(m.running),
  attachments: (m) => renderChips(m.attachments),
  editorContext: (m) => editorContext.show(m.chip),
  notices: (m) => renderNotices(m.notices),
  approvalMode: (m) => {
    modePicker.value = m.mode;
  },
  focusComposer: () => prompt.focus(),
  contextFigure: (m) => showFigure(m.figure),
  showContextChanges: (m) => showContextChanges(m.show),
  setup: (m) => {
    state.setup = m.setup;
    updateWelcome();
  },
  commands: (m) => completion.setCommands(m.commands),
  fileCompletions: (m) => completion.setFiles(m.query, m.items),
};

window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
  const m = event.data;
  if (m.type !== 'patches') flushPatches();
  const handle = handlers[m.type] as ((m: HostToWebview) => void) | undefined;
  handle?.(m);
});

// "Focus on Chat View", Qwen: Focus Chat Input, a click on the view's title: VS Code focuses the
// webview, and the caret goes to the composer rather than staying on the page (from there it
// took a dozen Tabs through the transcript's links and buttons). Checked once the focus has
// settled: what a click or a script focused along with the view keeps the focus.
window.addEventListener('focus', () => {
  window.setTimeout(() => {
    if (!document.activeElement || document.activeElement === document.body) prompt.focus();
  }, 0);
});
if (document.hasFocus()) prompt.focus();

post({ type: 'ready' });
