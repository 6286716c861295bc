/**
 * The welcome's set-up steps (server, model, key) while the chat is empty, kept current as the
 * server and the settings change; and a "server is not running" error turned into Retry once it
 * runs again.
 */
import type { ServerState } from '../server';
import type { SetupState } from '../shared/messages';
import type { Transcript } from '../transcript';
import type { WebviewHub } from './hub';

export class ModelSetup {
  private state: SetupState | undefined;
  /** A turn was answered since the model settings last changed (the welcome's test step). */
  private answered = false;
  /** Reads the welcome's steps (src/setup.ts, set by the extension's entry point). */
  read: (() => Promise<SetupState>) | undefined;

  constructor(
    private readonly hub: WebviewHub,
    private readonly transcript: Transcript,
  ) {}

  /** The steps for a snapshot, read the first time a view asks. */
  async current(): Promise<SetupState | undefined> {
    this.state ??= await this.readNow();
    return this.state;
  }

  /** A turn got an answer: the model works, whichever settings named it. */
  async turnAnswered(): Promise<void> {
    if (this.answered) return;
    this.answered = true;
    await this.refresh();
  }

  /** The model settings changed: the test step is open again. */
  async modelChanged(): Promise<void> {
    this.answered = false;
    await this.refresh();
  }

  private async readNow(): Promise<SetupState | undefined> {
    const s = await this.read?.();
    return s && (this.answered ? { ...s, answered: true } : s);
  }

  /** The steps as last read, for a snapshot built without waiting. */
  get known(): SetupState | undefined {
    return this.state;
  }

  /** Settings or the API key changed: the steps are read again. */
  async refresh(): Promise<void> {
    this.state = await this.readNow();
    if (this.state) this.hub.broadcast({ type: 'setup', setup: this.state });
  }

  /**
   * The server's state changed: the server step follows it, and once the server runs again an
   * earlier "server is not running" error says so and offers Retry instead of a restart.
   */
  async serverStateChanged(state: ServerState): Promise<void> {
    if (state === 'running') {
      for (const m of this.transcript.messages) {
        if (m.error?.kind !== 'server_down') continue;
        m.error = { kind: 'server_back', message: 'The qwen-lsp server is running now. Retry sends the message again.', actions: ['retry'] };
        this.hub.broadcast({ type: 'message', message: m });
      }
    }
    await this.refresh();
  }
}
