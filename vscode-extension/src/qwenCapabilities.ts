/**
 * What the extension declares under `capabilities.experimental.qwen` in initialize. The server
 * sends qwen/permission only to clients that declare `permissionRequests: true` (others get
 * window/showMessageRequest, which cannot show a diff), so this is what turns the approval card on.
 * A StaticFeature is vscode-languageclient's place for client capabilities; it survives restarts
 * (features are re-asked on every initialize) and leaves other experimental keys alone.
 */
import type { ClientCapabilities, FeatureState, StaticFeature } from 'vscode-languageclient/node';

export const QWEN_CLIENT_CAPABILITIES = { permissionRequests: true } as const;

export const qwenCapabilitiesFeature: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    const qwen = (typeof experimental.qwen === 'object' && experimental.qwen) || {};
    capabilities.experimental = { ...experimental, qwen: { ...qwen, ...QWEN_CLIENT_CAPABILITIES } };
  },
  initialize(): void {},
  getState(): FeatureState {
    return { kind: 'static' };
  },
  clear(): void {},
};
