import { writeVectorPairs, type VectorPairStatements } from './vector-pairs';

/** Statements that record what each would store. */
function recording() {
  const rows: { statement: 'insert' | 'append'; pair: number; blob: Buffer }[] = [];
  const statement = (name: 'insert' | 'append') => ({ run: (pair: number, blob: Buffer) => rows.push({ statement: name, pair, blob }) });
  return { rows, statements: { insert: statement('insert'), append: statement('append'), prune: { run: () => undefined } } };
}

const blobOf = (values: number[]) => Buffer.from(Float32Array.from(values).buffer);
const floats = (blob: Buffer) => Array.from(new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength)));

describe('writeVectorPairs', () => {
  it('stores two vectors side by side in memory as a view over both, without copying them', () => {
    const { rows, statements } = recording();
    const answer = Float32Array.from([1, 2, 3, 4, 5, 6]);
    const blobs = [0, 1, 2].map((i) => Buffer.from(answer.buffer, i * 8, 8));
    writeVectorPairs(statements as unknown as VectorPairStatements, 4, blobs);
    expect(rows.map(({ statement, pair }) => [statement, pair])).toEqual([
      ['insert', 2],
      ['insert', 3],
    ]);
    expect(rows[0].blob.buffer).toBe(answer.buffer);
    expect(floats(rows[0].blob)).toEqual([1, 2, 3, 4]);
    expect(floats(rows[1].blob)).toEqual([5, 6]);
  });

  it('copies two vectors apart in memory together, and completes a row an odd first seq belongs to', () => {
    const { rows, statements } = recording();
    writeVectorPairs(statements as unknown as VectorPairStatements, 3, [blobOf([1, 2]), blobOf([3, 4]), blobOf([5, 6])]);
    expect(rows.map(({ statement, pair, blob }) => [statement, pair, floats(blob)])).toEqual([
      ['append', 1, [1, 2]],
      ['insert', 2, [3, 4, 5, 6]],
    ]);
  });
});
