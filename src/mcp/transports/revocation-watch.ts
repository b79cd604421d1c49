import type { Logger } from 'pino';
import type { CredentialWatch } from './mcp-auth';

/**
 * How often the credentials of what is open are read afresh from the store: a key or token revoked
 * by another process (the CLI, another API process), or a token that expired or went with its
 * grant, ends what was opened with it within this. A revocation through this process ends it at
 * once (CredentialWatch.onRevoked).
 */
const KEYS_CHECK_MS = 1000;

/** What holds connections opened with credentials (2025 sessions, 2026-07-28 streams), by the credential's key id. */
export interface CredentialHolder {
  keyIds(): Set<string>;
  closeUsingKey(keyId: string): Promise<void> | void;
}

/** Ends the sessions and streams of a credential once it is revoked or no longer valid. */
export class RevocationWatch {
  private unsubscribe?: () => void;
  private timer?: NodeJS.Timeout;
  private checking = false;

  constructor(
    private readonly credentials: CredentialWatch,
    private readonly holders: readonly CredentialHolder[],
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.unsubscribe = this.credentials.onRevoked((keyId) => void this.closeUsing(keyId));
    this.timer = setInterval(() => void this.check(), KEYS_CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.unsubscribe?.();
  }

  private async closeUsing(keyId: string): Promise<void> {
    await Promise.all(this.holders.map((holder) => holder.closeUsingKey(keyId)));
  }

  /**
   * Each credential of what is open read afresh, one store read per credential (not per session
   * or stream) a second. A store that does not answer ends nothing: the next look tries again.
   */
  private async check(): Promise<void> {
    if (this.checking) return;
    const keyIds = new Set(this.holders.flatMap((holder) => [...holder.keyIds()]));
    if (keyIds.size === 0) return;
    this.checking = true;
    try {
      await Promise.all(
        [...keyIds].map(async (keyId) => {
          if (!(await this.credentials.isStillValid(keyId))) await this.closeUsing(keyId);
        }),
      );
    } catch (error) {
      this.logger.warn({ err: error }, 'checking the credentials of the open MCP sessions failed');
    } finally {
      this.checking = false;
    }
  }
}
