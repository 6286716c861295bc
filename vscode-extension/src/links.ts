/**
 * Which links from the chat the host opens, by scheme. Model output is untrusted and the webview
 * only names the href: web and mail links go to the browser, file links open in the editor (the
 * caller also requires them to be inside the workspace), and every other scheme (javascript:,
 * command:, vscode:, data:) is ignored.
 */
export type LinkTarget = 'external' | 'file';

const TARGETS: Record<string, LinkTarget> = { http: 'external', https: 'external', mailto: 'external', file: 'file' };

export function linkTarget(scheme: string): LinkTarget | undefined {
  return Object.hasOwn(TARGETS, scheme.toLowerCase()) ? TARGETS[scheme.toLowerCase()] : undefined;
}
