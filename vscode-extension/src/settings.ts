/**
 * Maps VS Code's `qwen.*` settings to the server's `qwen` object (docs/settings.md). Only values
 * the user actually set are sent: VS Code's defaults would otherwise lie over the project's own
 * `.qwen/settings.json`, which the server reads with lower precedence than the client.
 *
 * A repository's `.vscode/settings.json` is untrusted input (and the model can write it), so:
 *  - `tools.approvalMode` comes from user settings; a workspace or folder value counts only
 *    when it is stricter (`plan` > `default` > `auto-edit` > `yolo`);
 *  - in an untrusted workspace (Restricted Mode) no server starts at all (src/server.ts); should
 *    settings be built there anyway, every key comes from user settings only and the server is
 *    told `folderTrust: false`. A trusted workspace sends no `folderTrust`, so a
 *    `folderTrust: false` in the user's ~/.qwen/settings.json still holds.
 */

/** `stricter`: user settings, or a workspace value only when it is stricter (tools.approvalMode). */
export type Scope = 'machine' | 'resource' | 'stricter';

/** Server settings keys (relative to `qwen.`) and the scope they are read from. */
export const SERVER_SETTINGS: readonly { key: string; scope: Scope }[] = [
  { key: 'model.name', scope: 'resource' },
  { key: 'model.baseUrl', scope: 'machine' },
  { key: 'model.contextWindow', scope: 'resource' },
  { key: 'model.maxOutputTokens', scope: 'resource' },
  { key: 'compression.threshold', scope: 'resource' },
  { key: 'memory.enabled', scope: 'resource' },
  { key: 'memory.autoExtract', scope: 'resource' },
  { key: 'memory.autoDream', scope: 'resource' },
  { key: 'skills.enabled', scope: 'resource' },
  { key: 'editorContext.enabled', scope: 'resource' },
  // Background features that cost tokens, under Qwen Code 0.24.4's own key names (the server reads both spellings).
  { key: 'memory.enableAutoSkill', scope: 'resource' },
  { key: 'ui.enableFollowupSuggestions', scope: 'resource' },
  { key: 'ui.enableSpeculation', scope: 'resource' },
  { key: 'tools.approvalMode', scope: 'stricter' },
];

/** The subset of `WorkspaceConfiguration.inspect()` we look at. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The explicitly set value of one key: the most specific layer wins, except that machine-scoped
 * keys are taken from user settings only (a cloned repository's `.vscode/settings.json` must not
 * point the API key at another host).
 */
export function explicitValue(inspected: Inspected | undefined, scope: Scope, trusted = true): unknown {
  if (!inspected) return undefined;
  if (scope === 'stricter') return stricterValue(inspected);
  if (scope === 'machine' || !trusted) return inspected.globalValue;
  return inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue;
}

/** Approval modes from loosest to strictest. */
export const APPROVAL_STRICTNESS: readonly string[] = ['yolo', 'auto-edit', 'default', 'plan'];

/** The user's approval mode, unless a workspace/folder value is stricter than it (unset counts as `default`). */
export function stricterValue(inspected: Inspected): unknown {
  const user = inspected.globalValue;
  const base = APPROVAL_STRICTNESS.indexOf(typeof user === 'string' && APPROVAL_STRICTNESS.includes(user) ? user : 'default');
  let chosen: unknown = user;
  let level = base;
  for (const value of [inspected.workspaceValue, inspected.workspaceFolderValue]) {
    const rank = typeof value === 'string' ? APPROVAL_STRICTNESS.indexOf(value) : -1;
    if (rank > level) [chosen, level] = [value, rank];
  }
  return chosen;
}

/**
 * The server's `qwen` object. `trusted` is VS Code's workspace trust when known: false sends
 * `folderTrust: false` and reads user settings only (see the module doc).
 */
export function buildServerSettings(inspect: (key: string) => Inspected | undefined, trusted?: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (trusted === false) out.folderTrust = false;
  for (const { key, scope } of SERVER_SETTINGS) {
    const value = explicitValue(inspect(key), scope, trusted !== false);
    if (value === undefined || value === null || value === '') continue;
    const parts = key.split('.');
    let node = out;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[parts[parts.length - 1]] = value;
  }
  return out;
}

/**
 * Dotted keys set in `before` (the initializationOptions the server started with) and unset in
 * `now`. The server lays pulled settings over its initialization options without wiping them
 * (qwen_lsp/server/configuration.py), so a cleared setting would keep its old value until a
 * restart; the extension restarts the server for these, and an unset value means the model's own again.
 */
export function droppedKeys(before: Record<string, unknown>, now: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(before)) {
    const there = now[k];
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      out.push(...droppedKeys(v as Record<string, unknown>, there && typeof there === 'object' ? (there as Record<string, unknown>) : {}, `${prefix}${k}.`));
    } else if (there === undefined) out.push(`${prefix}${k}`);
  }
  return out;
}
