/** The chat's editor-tab webview type: chatView opens such panels, diffEditor recognises their tabs. */
export const PANEL_TYPE = 'qwen.chatPanel';
