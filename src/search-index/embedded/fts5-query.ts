/** Long queries cost FTS5 one doclist per term and add little ranking signal past a few dozen words. */
export const MAX_FTS_TERMS = 32;

// A word starts with a letter, digit or private-use character (what FTS5's unicode61 tokenizer keeps)
// and may carry combining marks; everything else separates words. A lone mark is no word: FTS5
// would reduce it to an empty phrase.
const WORD = /[\p{L}\p{N}\p{Co}][\p{L}\p{N}\p{M}\p{Co}]*/gu;

/**
 * Turns user text into an FTS5 query that matches any of its words: each word becomes a quoted
 * string, so FTS5 operators (AND, NEAR, *, ^, column filters, parentheses) in the text are plain
 * words and no input can be a syntax error. Returns null when the text has no word.
 */
export function toFts5Query(text: string): string | null {
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const [word] of text.normalize('NFKC').matchAll(WORD)) {
    const key = word.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    // A quote cannot occur in a word; the quoting is what makes the input inert.
    terms.push(`"${word}"`);
    if (terms.length === MAX_FTS_TERMS) break;
  }
  return terms.length ? terms.join(' OR ') : null;
}
