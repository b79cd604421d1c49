import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { jsonRpcMessages, StreamableHttpTransport } from './streamable-http.transport';

const request = (id: string | number, method = 'ping') => ({ jsonrpc: '2.0' as const, id, method });
const result = (id: string | number) => ({ jsonrpc: '2.0' as const, id, result: {} });

/**
 * A transport whose "server" answers each request after `delayFor(id)` turns of the event loop,
 * and never answers a request whose delay is Infinity.
 */
function echoing(delayFor: (id: string | number) => number = () => 0) {
  const transport = new StreamableHttpTransport('session');
  transport.onmessage = (message) => {
    const m = message as { id?: string | number; method?: string };
    if (m.id === undefined || m.method === undefined || delayFor(m.id) === Infinity) return;
    let turns = delayFor(m.id);
    const answer = () => (turns-- > 0 ? setImmediate(answer) : void transport.send(result(m.id!)));
    answer();
  };
  return transport;
}

describe('jsonRpcMessages', () => {
  it('takes one message or a batch of requests, notifications and responses', () => {
    expect(jsonRpcMessages(request(1))).toHaveLength(1);
    expect(jsonRpcMessages([request(1), { jsonrpc: '2.0', method: 'notifications/initialized' }, result('x')])).toHaveLength(3);
  });

  it('refuses what is not JSON-RPC 2.0, empty batches, and request ids repeated in a batch', () => {
    for (const body of [undefined, {}, [], { id: 1, method: 'ping' }, { jsonrpc: '2.0', id: {}, method: 'ping' }, { jsonrpc: '2.0', id: 1 }, [request(1), request(1)]]) {
      expect(jsonRpcMessages(body)).toBeUndefined();
    }
  });
});

describe('StreamableHttpTransport', () => {
  it('resolves with the responses in request order, whatever order they come back in', async () => {
    const transport = echoing((id) => (id === 'slow' ? 3 : 0));
    const responses = await transport.exchange([request('slow'), { jsonrpc: '2.0', method: 'notifications/x' } as never, request('fast')], {});
    expect(responses.map((r) => (r as { id: string }).id)).toEqual(['slow', 'fast']);
    expect(transport.isAwaiting('slow')).toBe(false);
  });

  it('resolves at once when a POST holds no request', async () => {
    expect(await echoing().exchange([{ jsonrpc: '2.0', method: 'notifications/initialized' } as never], {})).toEqual([]);
  });

  it('answers awaited requests with an error when the session closes, and every later one too', async () => {
    const transport = new StreamableHttpTransport('session');
    const closed = jest.fn();
    transport.onclose = closed;
    const pending = transport.exchange([request(1)], {});
    await transport.close();
    expect(await pending).toEqual([{ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Session closed' } }]);
    expect(await transport.exchange([request(2)], {})).toEqual([{ jsonrpc: '2.0', id: 2, error: { code: -32001, message: 'Session closed' } }]);
    expect(closed).toHaveBeenCalledTimes(1);
  });

  it('answers a cancelled request at once, from another POST or later in the same batch, and drops its late answer', async () => {
    const transport = echoing((id) => (id === 'never' ? Infinity : 2));
    const cancel = (requestId: string) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'user' } }) as never;
    const pending = transport.exchange([request('never')], {});
    expect(await transport.exchange([cancel('never')], {})).toEqual([]);
    expect(await pending).toEqual([{ jsonrpc: '2.0', id: 'never', error: { code: -32000, message: 'Request cancelled by the client' } }]);
    expect(transport.isAwaiting('never')).toBe(false);
    const batch = await transport.exchange([request('a'), request('b'), cancel('a')], {});
    expect(batch).toEqual([{ jsonrpc: '2.0', id: 'a', error: { code: -32000, message: 'Request cancelled by the client' } }, result('b')]);
  });

  it('writes server-initiated messages to the one open stream, and ends it on close', async () => {
    const transport = new StreamableHttpTransport('session');
    const written: string[] = [];
    const stream = Object.assign(new EventEmitter(), { write: (chunk: string) => written.push(chunk), end: jest.fn() }) as unknown as ServerResponse;
    expect(transport.attachStream(stream)).toBe(true);
    expect(transport.attachStream(stream)).toBe(false);
    const notification = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' } as JSONRPCMessage;
    await transport.send(notification);
    expect(written).toEqual([`event: message\ndata: ${JSON.stringify(notification)}\n\n`]);
    await transport.close();
    expect(stream.end).toHaveBeenCalled();
  });

  it('answers through the shortcut when it takes the request, without the server', async () => {
    const transport = new StreamableHttpTransport('session', (req) => (req.method === 'tools/list' ? Promise.resolve(result(req.id)) : undefined));
    const reachedServer = jest.fn();
    transport.onmessage = reachedServer;
    expect(await transport.exchange([request(1, 'tools/list')], {})).toEqual([result(1)]);
    expect(reachedServer).not.toHaveBeenCalled();
  });
});
