import { useEffect, useRef, useState } from 'preact/hooks';
import { api, encode } from '../api-client';
import type { Version, Workflow } from '../api-types';
import { ChatEvent, sendChat } from '../chat-stream';
import { json } from '../format';
import { Link } from '../router';
import { ErrorBox, StatusBadge, useLoad } from '../ui';

interface Turn {
  id: number;
  from: 'you' | 'workflow';
  text: string;
  runId?: string;
  status?: string;
  /** What the run did so far: its nodes as they finished, and a running node's model and tool calls. */
  activity: string[];
}

const newSession = () => `console-${crypto.randomUUID()}`;

/** The text the stream's `done` event gives, or what stands in for it. */
function finalText(data: Extract<ChatEvent, { event: 'done' }>['data'], streamed: string): string {
  if (data.answer !== null) return data.answer;
  if (data.error) return `The run ${data.status}: ${data.error.message}`;
  if (data.status !== 'succeeded') return streamed || `The run is ${data.status}: follow it on its run page.`;
  return data.output === null ? '(no answer)' : json(data.output);
}

/**
 * A conversation with a published workflow whose trigger is chat-trigger: each message starts a
 * run (POST /api/v1/workflows/{id}/chat), whose answer streams in as it comes.
 */
export function ChatPage({ id }: { id: string }) {
  const workflow = useLoad(() => api<Workflow>('GET', `/api/v1/workflows/${encode(id)}`), [id]);
  const active = useLoad(async () => {
    const versions = await api<{ items: Version[] }>('GET', `/api/v1/workflows/${encode(id)}/versions`);
    const current = versions.items.find((v) => v.active);
    return current ? api<Version>('GET', `/api/v1/workflows/${encode(id)}/versions/${current.version}`) : null;
  }, [id]);
  const [sessionId, setSessionId] = useState(newSession);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const leave = useRef<AbortController | null>(null);
  const nextId = useRef(0);

  // Leaving the page stops listening; the run goes on and stays on its run page.
  useEffect(() => () => leave.current?.abort(), []);

  const nodes = active.data?.definition?.nodes ?? [];
  const canChat = nodes.some((n) => n.type === 'chat-trigger');
  const otherTrigger = nodes.find((n) => n.type.endsWith('-trigger'))?.type;

  const update = (turnId: number, change: (turn: Turn) => Turn) => setTurns((all) => all.map((t) => (t.id === turnId ? change(t) : t)));

  const send = async (event: Event) => {
    event.preventDefault();
    const text = message.trim();
    if (!text || busy) return;
    setBusy(true);
    setError(null);
    setMessage('');
    const mine = nextId.current++;
    const reply = nextId.current++;
    setTurns((all) => [
      ...all,
      { id: mine, from: 'you', text, activity: [] },
      { id: reply, from: 'workflow', text: '', status: 'queued', activity: [] },
    ]);
    const controller = new AbortController();
    leave.current = controller;
    let streamed = '';
    try {
      await sendChat(
        id,
        { sessionId, message: text },
        (e) => {
          if (e.event === 'run') update(reply, (t) => ({ ...t, runId: e.data.runId, status: 'running' }));
          else if (e.event === 'token') {
            streamed += e.data.text;
            update(reply, (t) => ({ ...t, text: streamed }));
          } else if (e.event === 'step') update(reply, (t) => ({ ...t, activity: [...t.activity, `${e.data.nodeId}: ${e.data.status}`] }));
          else if (e.event === 'substep')
            update(reply, (t) => ({
              ...t,
              activity: [
                ...t.activity,
                `${e.data.nodeId}: ${e.data.subStep.kind} ${e.data.subStep.name}${e.data.subStep.error ? ' (failed)' : ''}`,
              ],
            }));
          else if (e.event === 'done') update(reply, (t) => ({ ...t, text: finalText(e.data, streamed), status: e.data.status }));
          else if (e.event === 'error') update(reply, (t) => ({ ...t, text: e.data.message, status: 'failed' }));
        },
        controller.signal,
      );
    } catch (failure) {
      if ((failure as Error).name !== 'AbortError') {
        setError(failure);
        setTurns((all) => all.filter((t) => t.id !== reply));
      }
    } finally {
      setBusy(false);
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    // Enter sends, Shift+Enter starts a new line, as in chat apps.
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) void send(event);
  };

  return (
    <main>
      <ErrorBox error={workflow.error ?? active.error} />
      <h1>Chat{workflow.data ? `: ${workflow.data.name}` : ''}</h1>
      <p class="muted">
        <Link href={`/workflows/${encode(id)}`}>Back to the workflow</Link> · session <code>{sessionId}</code>{' '}
        <button
          type="button"
          class="link"
          disabled={busy}
          onClick={() => {
            setSessionId(newSession());
            setTurns([]);
          }}
        >
          New conversation
        </button>
      </p>
      {active.data === null && (
        <p class="warning-text">Nothing is published yet: give the workflow a Chat Trigger and publish it to chat with it.</p>
      )}
      {active.data && !canChat && (
        <p class="warning-text">
          The published version starts with <code>{otherTrigger ?? 'another trigger'}</code>: make a Chat Trigger its trigger and publish it
          to chat with it.
        </p>
      )}
      <section aria-label="Conversation">
        {turns.length === 0 ? (
          <p class="muted">No messages yet.</p>
        ) : (
          <ol class="chat" aria-live="polite">
            {turns.map((turn) => (
              <li key={turn.id} class={`chat-turn chat-${turn.from}`}>
                <div class="chat-who">
                  <strong>{turn.from === 'you' ? 'You' : 'Workflow'}</strong>
                  {turn.status && <StatusBadge status={turn.status} />}
                  {turn.runId && (
                    <Link href={`/runs/${encode(turn.runId)}`} class="small">
                      run {turn.runId}
                    </Link>
                  )}
                </div>
                <p class="chat-text">{turn.text || (turn.from === 'workflow' ? '…' : '')}</p>
                {turn.activity.length > 0 && (
                  <details class="small">
                    <summary>What it did ({turn.activity.length})</summary>
                    <ul>
                      {turn.activity.map((line, i) => (
                        <li key={i}>{line}</li>
                      ))}
                    </ul>
                  </details>
                )}
              </li>
            ))}
          </ol>
        )}
      </section>
      <ErrorBox error={error} />
      <form onSubmit={send} aria-label="Send a message">
        <label>
          Message
          <textarea
            rows={3}
            value={message}
            maxLength={20000}
            onInput={(e) => setMessage(e.currentTarget.value)}
            onKeyDown={onKeyDown}
            disabled={!canChat}
          />
        </label>
        <button type="submit" disabled={busy || !canChat || !message.trim()}>
          {busy ? 'Answering…' : 'Send'}
        </button>
      </form>
    </main>
  );
}
