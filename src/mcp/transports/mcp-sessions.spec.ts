import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { McpSessionRegistry, StreamableSession } from './mcp-sessions';

const IDLE_MS = 1000;

type FakeSession = StreamableSession & { server: { close: jest.Mock } };

function session(id: string, userId: string, now: number): FakeSession {
  const server = { close: jest.fn(async () => undefined) };
  return {
    kind: 'streamable-http',
    id,
    userId,
    server: server as unknown as Server & typeof server,
    transport: {} as StreamableSession['transport'],
    lastActive: now,
    openStreams: 0,
  };
}

describe('McpSessionRegistry', () => {
  let now: number;
  let registry: McpSessionRegistry;

  beforeEach(() => {
    now = 1_000_000;
    registry = new McpSessionRegistry(IDLE_MS, () => now);
  });

  it("finds a session for its owner only, and only on its own transport", () => {
    registry.add(session('s1', 'usr_a', now));
    expect(registry.find('s1', 'usr_a', 'streamable-http')?.id).toBe('s1');
    expect(registry.find('s1', 'usr_b', 'streamable-http')).toBeUndefined();
    expect(registry.find('s1', 'usr_a', 'sse')).toBeUndefined();
    expect(registry.find('nope', 'usr_a', 'streamable-http')).toBeUndefined();
    // A stranger's attempt neither ends nor refreshes the owner's session.
    expect(registry.size).toBe(1);
  });

  it('expires a session idle for longer than the idle time, and closes its server', () => {
    const s = session('s1', 'usr_a', now);
    registry.add(s);
    now += IDLE_MS;
    expect(registry.find('s1', 'usr_a', 'streamable-http')).toBe(s);
    now += IDLE_MS + 1;
    expect(registry.find('s1', 'usr_a', 'streamable-http')).toBeUndefined();
    expect(s.server.close).toHaveBeenCalled();
    expect(registry.size).toBe(0);
  });

  it('keeps a session alive while a stream is open, and counts idleness from its close', () => {
    const s = session('s1', 'usr_a', now);
    registry.add(s);
    const stream = new EventEmitter() as unknown as ServerResponse;
    registry.holdOpen(s, stream);
    now += 10 * IDLE_MS;
    expect(registry.find('s1', 'usr_a', 'streamable-http')).toBe(s);
    now += 10 * IDLE_MS;
    stream.emit('close');
    now += IDLE_MS;
    expect(registry.find('s1', 'usr_a', 'streamable-http')).toBe(s);
    now += IDLE_MS + 1;
    expect(registry.find('s1', 'usr_a', 'streamable-http')).toBeUndefined();
  });

  it('closes every session at shutdown, and any session opened after it', async () => {
    const sessions = [session('s1', 'usr_a', now), session('s2', 'usr_b', now)];
    sessions.forEach((s) => registry.add(s));
    await registry.closeAll();
    for (const s of sessions) expect(s.server.close).toHaveBeenCalled();
    expect(registry.size).toBe(0);
    const late = session('s3', 'usr_a', now);
    registry.add(late);
    expect(late.server.close).toHaveBeenCalled();
    expect(registry.size).toBe(0);
  });
});
