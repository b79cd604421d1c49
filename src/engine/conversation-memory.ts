import type { ChatMessage, ConversationMemory } from '../sdk';
import { NodeConfigurationError } from '../sdk';
import type { ConversationStore } from '../domain/conversation-store.port';

const MAX_SESSION_KEY = 512;

/**
 * `ctx.memory` of one node: conversations kept in the store under the workflow, the node and the
 * user the run acts as, so a session key chosen by one workflow (a chat's session id, say) never
 * reads another's, and one user sending another's session id reads nothing of theirs.
 */
export function nodeMemory(
  store: ConversationStore,
  workflowId: string,
  nodeId: string,
  actingUserId: string,
  now: () => Date = () => new Date(),
): ConversationMemory {
  const keyOf = (sessionKey: string) => {
    if (typeof sessionKey !== 'string' || !sessionKey)
      throw new NodeConfigurationError('A session key must be a non-empty text', { details: { parameter: 'sessionKey' } });
    if (sessionKey.length > MAX_SESSION_KEY)
      throw new NodeConfigurationError(`A session key is at most ${MAX_SESSION_KEY} characters`, { details: { parameter: 'sessionKey' } });
    return `${workflowId}/${nodeId}/${actingUserId}/${sessionKey}`;
  };
  return {
    async load(sessionKey: string): Promise<ChatMessage[]> {
      return (await store.messages(keyOf(sessionKey), now())).map(({ role, content }) => ({ role, content }));
    },
    async append(sessionKey: string, messages: readonly ChatMessage[], options: { window: number; ttlMs: number }): Promise<void> {
      const at = now();
      await store.append(
        keyOf(sessionKey),
        messages.map(({ role, content }) => ({ role, content })),
        { window: options.window, expiresAt: new Date(at.getTime() + options.ttlMs), now: at },
      );
    },
  };
}
