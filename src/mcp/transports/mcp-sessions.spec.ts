import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { McpSessionRegistry, StreamableSession } from './mcp-sessions';

const IDLE_MS = 1000;
const MAX_PER_USER = 3;

type FakeSession = StreamableSession & { server: { server: { close: jest.Mock } } };

function session(id: string, userId: string, now: number): FakeSession {
  const server = { server: { close: jest.fn(async () => undefined) } };
  return {
    kind: 'streamable-http',
    id,
    userId,
    principal: { userId, keyId: `key_${userId}`, isAdmin: false },
    keyIds: new Set([`key_${userId}`]),
    server: server as unknown as StreamableSession['server'] & typeof server,
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
    registry = new McpSessionRegistry({ idleMs: IDLE_MS, maxPerUser: MAX_PER_USER }, () => now);
  });

  it('finds a session for its owner only, and only on its own transport', () => {
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
    expect(s.server.server.close).toHaveBeenCalled();
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

  it("ends a user's least recently active session when they open one too many, sparing ones with an open stream and other users", () => {
    const [a1, a2, a3, b1] = [
      session('a1', 'usr_a', now),
      session('a2', 'usr_a', now + 1),
      session('a3', 'usr_a', now + 2),
      session('b1', 'usr_b', now),
    ];
    [a1, a2, a3, b1].forEach((s) => registry.add(s));
    registry.holdOpen(a1, new EventEmitter() as unknown as ServerResponse);
    now += 10;
    registry.find('a2', 'usr_a', 'streamable-http');
    registry.add(session('a4', 'usr_a', now));
    // a1 is the oldest but has a client attached; a2 was just used: a3 goes.
    expect(a3.server.server.close).toHaveBeenCalled();
    expect(registry.find('a3', 'usr_a', 'streamable-http')).toBeUndefined();
    for (const id of ['a1', 'a2', 'a4']) expect(registry.find(id, 'usr_a', 'streamable-http')?.id).toBe(id);
    expect(registry.find('b1', 'usr_b', 'streamable-http')).toBe(b1);
    expect(registry.size).toBe(4);
    // A closed session frees its place: the next one ends nobody.
    registry.remove('a4');
    registry.add(session('a5', 'usr_a', now));
    expect(registry.size).toBe(4);
    expect([a1, a2].every((s) => !s.server.server.close.mock.calls.length)).toBe(true);
  });

  it('closes every session at shutdown, and any session opened after it', async () => {
    const sessions = [session('s1', 'usr_a', now), session('s2', 'usr_b', now)];
    sessions.forEach((s) => registry.add(s));
    await registry.closeAll();
    for (const s of sessions) expect(s.server.server.close).toHaveBeenCalled();
    expect(registry.size).toBe(0);
    const late = session('s3', 'usr_a', now);
    registry.add(late);
    expect(late.server.server.close).toHaveBeenCalled();
    expect(registry.size).toBe(0);
  });

  it('ends every session used with a key, and no other', async () => {
    const mine = [session('s1', 'usr_a', now), session('s2', 'usr_a', now)];
    const other = session('s3', 'usr_b', now);
    for (const s of [...mine, other]) registry.add(s);
    mine[1].keyIds.add('key_second');
    expect([...registry.keyIds()].sort()).toEqual(['key_second', 'key_usr_a', 'key_usr_b']);
    await registry.closeUsingKey('key_second');
    expect(mine[1].server.server.close).toHaveBeenCalled();
    expect(mine[0].server.server.close).not.toHaveBeenCalled();
    expect(registry.size).toBe(2);
    await registry.closeUsingKey('key_usr_a');
    expect(registry.size).toBe(1);
    expect(other.server.server.close).not.toHaveBeenCalled();
  });
});
