import { SeqMap } from './seq-map';

describe('SeqMap', () => {
  it('answers as a Map does through sets, replacements, deletes and growth', () => {
    const map = new SeqMap(16);
    const expected = new Map<number, number>();
    let seed = 12345;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (let i = 0; i < 200_000; i++) {
      // Seqs of one search thread of two (odd), some past 2^32, so runs collide and wrap.
      const seq = random() < 0.01 ? 2 ** 33 + 2 * Math.floor(random() * 1_000) + 1 : 2 * Math.floor(random() * 50_000) + 1;
      if (random() < 0.35) expect(map.delete(seq)).toBe(expected.delete(seq));
      else {
        const value = Math.floor(random() * 2_000) * 2 ** 32 + i;
        map.set(seq, value);
        expected.set(seq, value);
      }
      if (i % 1_000 === 0) expect(map.size).toBe(expected.size);
    }
    expect(map.size).toBe(expected.size);
    for (let seq = 0; seq < 100_001; seq++) expect(map.get(seq)).toBe(expected.get(seq));
    for (let seq = 2 ** 33; seq < 2 ** 33 + 2_001; seq++) expect(map.get(seq)).toBe(expected.get(seq));
  });
});
