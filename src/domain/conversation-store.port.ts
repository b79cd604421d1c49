import type { ConversationMessage } from './conversation.model';

export interface AppendOptions {
  /** Messages kept: the newest `window` after the append. */
  window: number;
  /** The conversation is forgotten after this (each append moves it). */
  expiresAt: Date;
  now: Date;
}

/**
 * Conversations an AI agent remembers between runs, by key (the workflow, node and session it
 * belongs to): the newest messages within a window, forgotten once expired.
 */
export abstract class ConversationStore {
  /** The messages of `key`, oldest first; empty when there are none or they expired. */
  abstract messages(key: string, now: Date): Promise<ConversationMessage[]>;
  /**
   * Adds messages after the kept ones, in one write, keeping the newest `window` and moving the
   * expiry; an expired conversation starts again empty.
   */
  abstract append(key: string, messages: readonly ConversationMessage[], options: AppendOptions): Promise<void>;
  /** Forgets `key` at once; false when nothing was kept. */
  abstract forget(key: string): Promise<boolean>;
}
