import { generateLabeledSet, readLabeledSet } from '../../test/fixtures/retrieval/labeled-set';

/** The retrieval benchmark's labeled set (test/fixtures/retrieval): big enough, consistent, and what its generator writes. */
describe('the retrieval labeled set', () => {
  const set = readLabeledSet();

  it('has at least 300 queries over at least 3,000 passages, ids unique', () => {
    expect(set.queries.length).toBeGreaterThanOrEqual(300);
    expect(set.passages.length).toBeGreaterThanOrEqual(3000);
    expect(new Set(set.passages.map((p) => p.id)).size).toBe(set.passages.length);
    expect(new Set(set.queries.map((q) => q.id)).size).toBe(set.queries.length);
    expect(new Set(set.passages.map((p) => p.text)).size).toBe(set.passages.length);
  });

  it('judges only passages that exist, each query with exactly one answer (grade 2) and its related passages (grade 1)', () => {
    const ids = new Set(set.passages.map((p) => p.id));
    const entityOf = new Map(set.passages.map((p) => [p.id, p.entity]));
    for (const query of set.queries) {
      const judged = Object.entries(query.judgments);
      for (const [id, grade] of judged) {
        expect([query.id, id, ids.has(id)]).toEqual([query.id, id, true]);
        expect([1, 2]).toContain(grade);
      }
      const answers = judged.filter(([, grade]) => grade === 2);
      expect([query.id, answers.length]).toEqual([query.id, 1]);
      // Related means about the same entity as the answer.
      const entity = entityOf.get(answers[0][0]);
      expect(judged.every(([id]) => entityOf.get(id) === entity)).toBe(true);
      expect(query.text.trim().length).toBeGreaterThan(10);
    }
  });

  it('is what its generator writes, so the committed files and the code that explains them agree', () => {
    expect(generateLabeledSet()).toEqual(set);
  });
});
