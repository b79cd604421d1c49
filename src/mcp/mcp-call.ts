import type {
  ClientCapabilities,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ElicitResult,
  Notification,
  ProgressToken,
} from '@modelcontextprotocol/server';
import type { McpBackend } from './mcp-backend.port';

/** The protocol era a server instance serves: 2025 (`initialize`, sessions) or 2026-07-28 (stateless requests). */
export type McpEra = 'legacy' | 'modern';

/** One request as the tools, resources, prompts and tasks see it, whichever era and door it came through. */
export interface McpCall {
  /** The service acting as the caller. */
  backend: McpBackend;
  era: McpEra;
  /** What the client said it can do: at `initialize` (2025) or on this very request (2026-07-28). */
  client: ClientCapabilities;
  progressToken?: ProgressToken;
  notify(notification: Notification): Promise<void>;
  /** Aborts when the client cancels the request or goes away. */
  signal: AbortSignal;
  /** A retried 2026-07-28 request's answers to the input it was asked for (or the 2025 shim's). */
  inputResponses?: Record<string, unknown>;
  /** The state a retried request carries back, checked by the server's codec. */
  requestState<T>(): T | undefined;
  /** 2025 only: asks the client's user now, over the session (tasks/result). */
  elicit?(params: ElicitRequestFormParams | ElicitRequestURLParams): Promise<ElicitResult>;
}

/** Form mode: `elicitation: {}` (2025-06-18) or `elicitation: {form: {}}` (2025-11-25 on). */
export const canElicitForm = (client: ClientCapabilities): boolean => {
  const elicitation = client.elicitation as Record<string, unknown> | undefined;
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
};

export const canElicitUrl = (client: ClientCapabilities): boolean =>
  (client.elicitation as Record<string, unknown> | undefined)?.url !== undefined;
