import { existsSync, readFileSync } from 'node:fs';
import { fixturePath, REJECTED_FIXTURES, SEARCH_FIXTURES } from '../../test/fixtures/fixtures';
import { chunk } from './chunker';
import { detectType } from './detect-type';
import { ExtractorPool } from './extractors/extractor-pool';

/**
 * The fixture catalogue must hold what the semantic-search e2e test relies on: each question's
 * answer is in exactly one passage of its file, and the question shares no content word with the
 * file, so a keyword match cannot be what ranks the answer first.
 */

const STOPWORDS = new Set(
  (
    'a about after all also an and any are as at be been before being between both but by can could did do does ' +
    'doing during each for from had has have how i if in into is it its just may might more most much must my no ' +
    'not of off on once only or other our out over own same should so some such than that the their them then ' +
    'there these they this those through to too under until up very was we were what when where whether which ' +
    'while who whom why will with would you your get gets go goes going make makes use'
  ).split(' '),
);

/** Lower-cased words with one common English suffix removed: enough to catch "fold" in "folds". */
function stems(text: string): Set<string> {
  const result = new Set<string>();
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOPWORDS.has(word)) continue;
    result.add(stem(word));
  }
  return result;
}

function stem(word: string): string {
  for (const [suffix, replacement] of [
    ['ies', 'y'],
    ['ing', ''],
    ['ed', ''],
    ['es', ''],
    ['s', ''],
    ['ly', ''],
  ] as const) {
    if (word.length - suffix.length >= 3 && word.endsWith(suffix)) return word.slice(0, -suffix.length) + replacement;
  }
  return word;
}

describe('search fixtures', () => {
  let pool: ExtractorPool;

  beforeAll(() => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 60_000 });
  });

  afterAll(async () => {
    await pool.close();
  });

  it('are six files, one topic each', () => {
    expect(SEARCH_FIXTURES).toHaveLength(6);
    expect(new Set(SEARCH_FIXTURES.map((f) => f.topic)).size).toBe(6);
    expect(new Set(SEARCH_FIXTURES.map((f) => f.mime)).size).toBe(6);
    for (const file of [...SEARCH_FIXTURES.map((f) => f.file), ...Object.values(REJECTED_FIXTURES)]) {
      expect(existsSync(fixturePath(file))).toBe(true);
    }
  });

  describe.each(SEARCH_FIXTURES.map((f) => [f.file, f] as const))('%s', (_, fixture) => {
    let passages: string[];

    beforeAll(async () => {
      const bytes = readFileSync(fixturePath(fixture.file));
      const type = detectType(bytes, fixture.file);
      expect(type.mime).toBe(fixture.mime);
      passages = chunk(await pool.extract(bytes, type)).passages.map((p) => p.content);
    });

    it('has its expected snippet in exactly one passage', () => {
      expect(passages.filter((p) => p.includes(fixture.expectedSnippet))).toHaveLength(1);
    });

    it('asks a question that shares no content word with the file', () => {
      const fileWords = stems(passages.join(' '));
      const shared = [...stems(fixture.question)].filter((word) => fileWords.has(word));
      expect(shared).toEqual([]);
    });
  });

  it('catches a shared word when there is one (the check can fail)', () => {
    expect([...stems('How are loaves folded?')].filter((w) => stems('Fold the loaf, then fold again.').has(w))).toEqual(['fold']);
  });
});
