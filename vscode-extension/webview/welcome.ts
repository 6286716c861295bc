/**
 * The welcome a new user sees while the chat is empty: the server, the model, the API key and a
 * test message, each step with its state and the button that fixes it (the same actions the
 * inline errors offer, so the host runs one set-up code path).
 */
import type { ErrorAction, SetupState } from '../src/shared/messages';

/** What "Send a test message" sends. */
export const TEST_PROMPT = 'Hello! Please reply with one short sentence so I know the setup works.';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function step(name: string, done: boolean, text: string, buttons: HTMLButtonElement[]): HTMLLIElement {
  const li = el('li', { class: `setup-step ${done ? 'done' : 'todo'}`, 'data-step': name });
  li.append(el('span', { class: 'setup-mark', 'aria-hidden': 'true' }, done ? '✓' : '•'));
  const body = el('div', { class: 'setup-body' });
  body.append(el('div', { class: 'setup-text' }, text));
  if (buttons.length) {
    const row = el('div', { class: 'setup-actions' });
    row.append(...buttons);
    body.append(row);
  }
  li.append(body);
  return li;
}

export function renderWelcome(s: SetupState, labels: Record<ErrorAction, string>): HTMLElement[] {
  const action = (a: ErrorAction, label = labels[a]): HTMLButtonElement => el('button', { type: 'button', 'data-action': a }, label);
  const serverText =
    s.server === 'running'
      ? 'Server: running.'
      : s.server === 'failed' || s.server === 'restricted'
        ? `Server: not running. ${s.serverProblem?.message ?? ''}`.trim()
        : 'Server: starting…';
  const serverButtons =
    s.server === 'restricted'
      ? [action('manageTrust')]
      : s.server === 'failed'
        ? [...(s.serverProblem?.missing !== false ? [action('setServerPath')] : []), action('restartServer'), action('showLog')]
        : [];
  const modelSet = !!(s.model && s.baseUrl);
  const answered = !!s.answered;
  const modelText = modelSet
    ? `Model: ${s.model} at ${s.baseUrl}.`
    : answered
      ? 'Model: answering, set outside VS Code (OPENAI_MODEL / OPENAI_BASE_URL or ~/.qwen/settings.json).'
      : `Model: ${[!s.model ? 'no model name (qwen.model.name)' : '', !s.baseUrl ? 'no base URL (qwen.model.baseUrl)' : ''].filter(Boolean).join(', ')} set in VS Code. OPENAI_MODEL / OPENAI_BASE_URL or ~/.qwen/settings.json work too.`;
  const keyText = s.apiKey
    ? 'API key: stored in VS Code\'s secret storage.'
    : answered
      ? 'API key: none stored, and the endpoint answered without one (or with OPENAI_API_KEY).'
      : 'API key: none stored (needed only if the endpoint asks for one; OPENAI_API_KEY works too).';
  const test = el('button', { type: 'button', class: answered ? '' : 'primary', 'data-setup': 'test' }, 'Send a test message');
  if (s.server !== 'running') test.disabled = true;
  const steps = el('ol', { class: 'setup-steps' });
  steps.append(
    step('server', s.server === 'running', serverText, serverButtons),
    step('model', modelSet || answered, modelText, [action('configureModel', modelSet ? 'Change model' : labels.configureModel)]),
    step('apiKey', s.apiKey || answered, keyText, [action('setApiKey', s.apiKey ? 'Change API key' : labels.setApiKey)]),
    step('test', answered, answered ? 'Test: the model answered.' : 'Test: a short message; the answer streams here.', [test]),
  );
  // An answer proves the model, its endpoint and its key: every step is done.
  if (s.server === 'running' && answered) {
    return [el('h2', { class: 'welcome-title' }, 'Qwen is set up'), el('p', { class: 'welcome-lead' }, 'Every step is done. Type below to start a chat.'), steps];
  }
  return [el('h2', { class: 'welcome-title' }, 'Welcome to Qwen'), el('p', { class: 'welcome-lead' }, 'Set up in four steps, each one click. Or just type below.'), steps];
}
