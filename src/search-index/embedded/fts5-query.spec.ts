import Database from 'better-sqlite3';
import { MAX_FTS_TERMS, toFts5Query } from './fts5-query';

describe('toFts5Query', () => {
  let db: Database.Database;
  let search: (query: string) => number[];

  beforeAll(() => {
    db = new Database(':memory:');
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')`);
    const insert = db.prepare('INSERT INTO t (rowid, text) VALUES (?, ?)');
    insert.run(1, 'Zebras cross the road near the café');
    insert.run(2, 'Quantum physics AND chemistry');
    const statement = db.prepare('SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid').pluck();
    search = (query) => statement.all(query) as number[];
  });

  afterAll(() => db.close());

  it('ORs the quoted words of the text', () => {
    expect(toFts5Query('zebra quantum')).toBe('"zebra" OR "quantum"');
    expect(search(toFts5Query('zebra quantum')!)).toEqual([1, 2]);
  });

  it('turns operators and syntax into plain words', () => {
    expect(toFts5Query('NEAR(zebra AND text:quantum*)')).toBe('"NEAR" OR "zebra" OR "AND" OR "text" OR "quantum"');
    expect(search(toFts5Query('"and"')!)).toEqual([2]);
  });

  it('answers null when the text has no word', () => {
    for (const text of ['', '   ', '"*()^:-+', '\u0301', '🦓']) expect(toFts5Query(text)).toBeNull();
  });

  it('keeps words with accents and marks, which the tokenizer folds', () => {
    expect(search(toFts5Query('cafe\u0301')!)).toEqual([1]);
    expect(search(toFts5Query('CAFE')!)).toEqual([1]);
  });

  it('drops repeated words and caps the number of terms', () => {
    expect(toFts5Query('Zebra zebra ZEBRA')).toBe('"Zebra"');
    const many = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    expect(toFts5Query(many)!.split(' OR ')).toHaveLength(MAX_FTS_TERMS);
  });

  it('never yields a query FTS5 refuses, whatever the characters', () => {
    let seed = 1;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const alphabet = [
      '"',
      "'",
      '*',
      '^',
      ':',
      '(',
      ')',
      '{',
      '}',
      '-',
      '+',
      ' ',
      'a',
      'Z',
      '9',
      'é',
      '\u0301',
      '\u0000',
      '🦓',
      'ß',
      '中',
      'OR',
      'NOT',
      'NEAR',
    ];
    for (let i = 0; i < 2000; i++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      const query = toFts5Query(text);
      if (query !== null) expect(() => search(query)).not.toThrow();
    }
  });
});
