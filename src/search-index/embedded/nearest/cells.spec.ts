import { MAPPED_FROM } from './code-buffer';
import { Cell } from './cells';

describe('Cell', () => {
  it('grows by an eighth, not by a quarter or doubling, so the room it reserves (resident memory) stays small beside its rows', () => {
    const d = 8;
    const cell = new Cell(d);
    const codes = new Int8Array(d);
    for (let seq = 0; seq < 5_000; seq++) {
      codes.fill(seq % 100);
      cell.push(codes, 0, seq, seq % 7);
      // Room for at most an eighth more rows (or the first 64) than it holds.
      expect(cell.seqs.length).toBeLessThanOrEqual(Math.max(64, Math.ceil((cell.length - 1) * 1.125)) + 64);
    }
    // Every row kept across the growths, in place.
    expect(cell.length).toBe(5_000);
    for (const p of [0, 63, 64, 1_099, 4_999]) {
      expect(cell.seqs[p]).toBe(p);
      expect(cell.files[p]).toBe(p % 7);
      expect(cell.live[p]).toBe(1);
      expect(Array.from(cell.prefix().subarray(p * d, (p + 1) * d))).toEqual(Array(d).fill(p % 100));
    }
  });

  it('frees the buffers it outgrows or lets go of at once, not at the next garbage collection', () => {
    const d = 8;
    const cell = new Cell(d);
    const codes = new Int8Array(d).fill(3);
    for (let seq = 0; seq < 64; seq++) cell.push(codes, 0, seq, 0);
    const outgrown = cell.codes;
    cell.push(codes, 0, 64, 0);
    // Detached: its memory went back to the allocator when the cell grew.
    expect(outgrown.byteLength).toBe(0);
    expect(
      cell
        .prefix()
        .subarray(64 * d)
        .every((x) => x === 3),
    ).toBe(true);
    const held = [cell.codes, cell.seqs, cell.files, cell.live];
    cell.release();
    expect(held.map((array) => array.byteLength)).toEqual([0, 0, 0, 0]);
  });

  it("keeps a large cell's codes in a mapping of its own, grown and shrunk in place, not in the thread's malloc arena", () => {
    const d = 512;
    const cell = new Cell(d);
    const row = (seq: number) => new Int8Array(d).fill((seq % 200) - 100);
    let seq = 0;
    while (cell.codes.byteLength < MAPPED_FROM) cell.push(row(seq), 0, seq++, 0);
    const mapping = cell.codes.buffer;
    const buffers = new Set<ArrayBufferLike>();
    // Up to the room its mapping reserved (four times its size then): no other buffer.
    for (; seq < 900; seq++) {
      cell.push(row(seq), 0, seq, 0);
      buffers.add(cell.codes.buffer);
    }
    // Grown in place: no second buffer while the rows are copied, nothing freed into the arena.
    expect(buffers.size === 1 && buffers.has(mapping)).toBe(true);
    for (const p of [0, 255, 256, 899]) expect(Array.from(cell.prefix().subarray(p * d, (p + 1) * d))).toEqual(Array.from(row(p)));
    // Most rows removed: compaction shrinks the same mapping (its pages go back to the system).
    for (let p = 0; p < 500; p++) cell.live[p] = 0;
    cell.dead = 500;
    cell.compact(() => undefined);
    expect(cell.codes.buffer === mapping).toBe(true);
    expect(cell.codes.byteLength).toBeLessThan(450 * d);
    expect(Array.from(cell.prefix().subarray(0, d))).toEqual(Array.from(row(500)));
    cell.release();
    expect(mapping.byteLength).toBe(0);
  });
});
