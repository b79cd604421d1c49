import { newId } from './ids';

describe('newId', () => {
  it('is prefixed, 25 base-36 characters, and unique', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => newId('run')));
    expect(ids.size).toBe(20_000);
    for (const id of [...ids].slice(0, 100)) expect(id).toMatch(/^run_[0-9a-z]{25}$/);
  });

  it('sorts by creation time across milliseconds', async () => {
    const first = newId('col');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(newId('col') > first).toBe(true);
  });

  it('spreads the random part over the whole alphabet', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2000; i++) {
      for (const ch of newId('key').slice(-16)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    expect(counts.size).toBe(36);
    const expected = (2000 * 16) / 36;
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.2);
  });
});
