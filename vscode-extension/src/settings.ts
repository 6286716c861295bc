/**
 * Maps VS Code's `qwen.*` settings to the server's `qwen` object (README.md, "Editor settings").
 * Only values the user actually set are sent: VS Code's defaults would otherwise lie over the
 * project's own `.qwen/settings.json`, which the server reads with lower precedence than the client.
 */

export type Scope = 'machine' | 'resource';

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
  { key: 'tools.approvalMode', scope: 'resource' },
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
export function explicitValue(inspected: Inspected | undefined, scope: Scope): unknown {
  if (!inspected) return undefined;
  if (scope === 'machine') return inspected.globalValue;
  return inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue;
}

export function buildServerSettings(inspect: (key: string) => Inspected | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, scope } of SERVER_SETTINGS) {
    const value = explicitValue(inspect(key), scope);
    if (value === undefined || value === null || value === '') continue;
    const parts = key.split('.');
    let node = out;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[parts[parts.length - 1]] = value;
  }
  return out;
}
