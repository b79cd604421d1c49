import { ApiError } from './api-client';
import type { components } from './api-types.generated';
import { session } from './session';

export type ChatAnswer = components['schemas']['ChatAnswerDto'];
export type ChatMessage = components['schemas']['ChatMessageDto'];

/** One event of the chat stream (POST /api/v1/workflows/{id}/chat), as the server names it. */
export type ChatEvent =
  | { event: 'run'; data: { runId: string; status: string } }
  | {
      event: 'step';
      data: { nodeId: string; type: string; status: string; durationMs: number | null; error: { code: string; message: string } | null };
    }
  | { event: 'substep'; data: { nodeId: string; subStep: { kind: string; name: string; durationMs: number; error?: string } } }
  | { event: 'token'; data: { nodeId: string; text: string } }
  | { event: 'done'; data: ChatAnswer }
  | { event: 'error'; data: { code: string; message: string } };

/**
 * Sends one chat message and hands each Server-Sent Event to `onEvent` as it comes. EventSource
 * cannot POST or send the API key, so the body is read and split into events here.
 */
export async function sendChat(
  workflowId: string,
  message: ChatMessage,
  onEvent: (event: ChatEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  const key = session.key();
  if (key) headers['x-api-key'] = key;
  let response: Response;
  try {
    response = await fetch(`/api/v1/workflows/${encodeURIComponent(workflowId)}/chat`, {
      method: 'POST',
      headers,
      body: JSON.stringify(message),
      signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, 'NETWORK', 'The service did not answer: check that it is running');
  }
  if (!response.ok || !response.body) {
    const text = await response.text();
    let body: { code?: string; message?: string; details?: unknown; requestId?: string } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // not JSON: the status says it
    }
    throw new ApiError(
      response.status,
      body.code ?? `HTTP_${response.status}`,
      body.message ?? (text || response.statusText),
      body.details,
      body.requestId,
    );
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const lines = buffer.slice(0, end).split('\n');
      buffer = buffer.slice(end + 2);
      const name = lines.find((line) => line.startsWith('event: '))?.slice(7);
      const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
      // Comment lines (keep-alives) carry no event.
      if (name && data.length) onEvent({ event: name, data: JSON.parse(data.join('\n')) } as ChatEvent);
    }
  }
}
