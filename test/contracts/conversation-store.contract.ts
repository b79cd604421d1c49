import type { ConversationStore } from '../../src/domain/conversation-store.port';
import { SqliteConversationStore } from '../../src/storage/embedded/sqlite-conversation-store.adapter';
import { MongoConversationStore } from '../../src/storage/mongo/mongo-conversation-store.adapter';
import { pick, storeBackends } from '../utils/store-backends';

const at = (seconds: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, seconds));
const turn = (n: number) => [
  { role: 'user' as const, content: `question ${n}` },
  { role: 'assistant' as const, content: `answer ${n}` },
];

describe.each(storeBackends)('conversation store on $name', (backend) => {
  let close: () => Promise<void>;
  let store: ConversationStore;

  beforeAll(async () => {
    const handles = await backend.open();
    close = handles.close;
    store = pick(
      handles,
      (db) => new SqliteConversationStore(db),
      (c) => new MongoConversationStore(c),
    );
  });
  afterAll(() => close());

  it('keeps messages in order per key, the newest `window` of them', async () => {
    expect(await store.messages('wfl_a/agent/s1', at(0))).toEqual([]);
    await store.append('wfl_a/agent/s1', turn(1), { window: 4, expiresAt: at(100), now: at(0) });
    await store.append('wfl_a/agent/s1', turn(2), { window: 4, expiresAt: at(100), now: at(1) });
    expect(await store.messages('wfl_a/agent/s1', at(2))).toEqual([...turn(1), ...turn(2)]);
    await store.append('wfl_a/agent/s1', turn(3), { window: 4, expiresAt: at(100), now: at(2) });
    expect(await store.messages('wfl_a/agent/s1', at(3))).toEqual([...turn(2), ...turn(3)]);
    expect(await store.messages('wfl_a/agent/s2', at(3))).toEqual([]);
  });

  it('forgets an expired conversation: reads see nothing, and the next append starts again', async () => {
    await store.append('wfl_b/agent/s', turn(1), { window: 10, expiresAt: at(10), now: at(0) });
    expect(await store.messages('wfl_b/agent/s', at(9))).toEqual(turn(1));
    expect(await store.messages('wfl_b/agent/s', at(10))).toEqual([]);
    await store.append('wfl_b/agent/s', turn(2), { window: 10, expiresAt: at(30), now: at(20) });
    expect(await store.messages('wfl_b/agent/s', at(21))).toEqual(turn(2));
  });

  it('moves the expiry with each append, and forgets a key on request', async () => {
    await store.append('wfl_c/agent/s', turn(1), { window: 10, expiresAt: at(10), now: at(0) });
    await store.append('wfl_c/agent/s', turn(2), { window: 10, expiresAt: at(18), now: at(8) });
    expect(await store.messages('wfl_c/agent/s', at(15))).toEqual([...turn(1), ...turn(2)]);
    expect(await store.forget('wfl_c/agent/s')).toBe(true);
    expect(await store.forget('wfl_c/agent/s')).toBe(false);
    expect(await store.messages('wfl_c/agent/s', at(15))).toEqual([]);
  });

  it('keeps concurrent appends to one key, none lost', async () => {
    await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        store.append('wfl_d/agent/s', [{ role: 'user', content: `m${n}` }], { window: 50, expiresAt: at(100), now: at(0) }),
      ),
    );
    const kept = await store.messages('wfl_d/agent/s', at(1));
    expect(kept.map((m) => m.content).sort()).toEqual(Array.from({ length: 10 }, (_, n) => `m${n}`).sort());
  });
});
