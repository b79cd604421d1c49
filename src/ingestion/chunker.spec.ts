import { chunk, Chunks, normaliseWhitespace } from './chunker';
import { ExtractedDocument, ExtractedSegment } from './extractors/extracted-document';

const squash = (text: string) => text.replace(/\s+/g, '');

/** Deterministic prose: sentences of varied length in paragraphs of varied size. */
function prose(seed: number, paragraphs: number): string {
  const words = ['river', 'stone', 'market', 'engine', 'garden', 'letter', 'winter', 'silver', 'harbour', 'window', 'candle', 'meadow'];
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const sentences: string[] = [];
    const count = 1 + Math.floor(next() * 9);
    for (let s = 0; s < count; s++) {
      const length = 4 + Math.floor(next() * 30);
      const sentence = Array.from({ length }, () => words[Math.floor(next() * words.length)]).join(' ');
      sentences.push(sentence[0].toUpperCase() + sentence.slice(1) + '.');
    }
    out.push(sentences.join(' '));
  }
  return out.join('\n\n');
}

function pages(count: number): ExtractedDocument {
  return { segments: Array.from({ length: count }, (_, i) => ({ text: prose(i + 1, 6), page: i + 1 })) };
}

function expectWellFormed(doc: ExtractedDocument, result: Chunks, passageChars = 1000, windowMaxChars = 400): void {
  const { passages, windows } = result;
  passages.forEach((passage, i) => {
    expect(passage.index).toBe(i);
    expect(passage.content.length).toBeGreaterThan(0);
    expect(passage.content.length).toBeLessThanOrEqual(passageChars);
    expect(passage.content).toBe(passage.content.trim());
  });
  for (const window of windows) {
    expect(passages[window.passageIndex]).toBeDefined();
    expect(window.text.length).toBeLessThanOrEqual(windowMaxChars);
    expect(window.text).toBe(window.text.replace(/\s+/g, ' ').trim());
  }
  // Windows come in passage order and, together, are exactly their passage's text.
  const windowText = new Map<number, string>();
  let lastPassage = 0;
  for (const window of windows) {
    expect(window.passageIndex).toBeGreaterThanOrEqual(lastPassage);
    lastPassage = window.passageIndex;
    windowText.set(window.passageIndex, (windowText.get(window.passageIndex) ?? '') + squash(window.text));
  }
  for (const passage of passages) expect(windowText.get(passage.index)).toBe(squash(passage.content));
  // Passages, in order, are all of the text and nothing else.
  expect(passages.map((p) => squash(p.content)).join('')).toBe(doc.segments.map((s) => squash(normaliseWhitespace(s.text))).join(''));
}

describe('chunk', () => {
  it('cuts a long multi-page document into well-formed passages and windows', () => {
    const doc = pages(40);
    const result = chunk(doc);
    expect(result.passages.length).toBeGreaterThan(40);
    expectWellFormed(doc, result);
  });

  it('never lets a passage span two pages, and keeps its page number', () => {
    const doc = pages(12);
    const { passages } = chunk(doc);
    for (const passage of passages) {
      const page = doc.segments[passage.page! - 1];
      expect(squash(page.text)).toContain(squash(passage.content));
    }
    expect(new Set(passages.map((p) => p.page))).toEqual(new Set(doc.segments.map((s) => s.page)));
    // Pages are in order, each page's passages together.
    const order = passages.map((p) => p.page!);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('keeps a short page as one passage even when the next page would fit beside it', () => {
    const doc: ExtractedDocument = {
      segments: [
        { text: 'Alpha page.', page: 1 },
        { text: 'Beta page.', page: 2 },
      ],
    };
    expect(chunk(doc).passages).toEqual([
      { index: 0, content: 'Alpha page.', page: 1 },
      { index: 1, content: 'Beta page.', page: 2 },
    ]);
  });

  it('cuts on paragraph boundaries when paragraphs fit', () => {
    const paragraph = (n: number) => `Paragraph ${n} begins here. ` + 'It carries on at an even pace. '.repeat(12).trim();
    const text = Array.from({ length: 6 }, (_, i) => paragraph(i)).join('\n\n');
    const { passages } = chunk({ segments: [{ text }] });
    // Each paragraph is about 400 characters: two fit in a passage, three do not.
    expect(passages.map((p) => p.content.split('\n\n').length)).toEqual([2, 2, 2]);
    for (const passage of passages) expect(passage.content).toMatch(/^Paragraph \d begins here\./);
  });

  it('cuts an over-long paragraph on sentence boundaries', () => {
    const text = Array.from({ length: 60 }, (_, i) => `Sentence number ${i} says a little more than nothing.`).join(' ');
    const { passages } = chunk({ segments: [{ text }] });
    expect(passages.length).toBeGreaterThan(2);
    for (const passage of passages) {
      expect(passage.content).toMatch(/^Sentence number \d+ /);
      expect(passage.content).toMatch(/nothing\.$/);
    }
  });

  it('cuts a sentence longer than a passage between words, never inside one', () => {
    const words = Array.from({ length: 600 }, (_, i) => `word${i}`);
    const text = words.join(' ');
    const { passages } = chunk({ segments: [{ text }] });
    expect(passages.length).toBeGreaterThan(1);
    expect(passages.flatMap((p) => p.content.split(' '))).toEqual(words);
  });

  it('cuts a single token longer than a passage where it must', () => {
    const token = 'x'.repeat(2500);
    const { passages, windows } = chunk({ segments: [{ text: token }] });
    expect(passages.map((p) => p.content.length)).toEqual([1000, 1000, 500]);
    expect(windows.every((w) => w.text.length <= 400)).toBe(true);
    expect(windows.map((w) => w.text).join('')).toBe(token);
  });

  it('carries a heading over to the passage of the paragraph it introduces', () => {
    const long = 'This paragraph is long enough to fill most of a passage on its own. '.repeat(9).trim();
    const text = `${long}\n\nBaking the loaf\n\n${long}`;
    const { passages } = chunk({ segments: [{ text }] });
    expect(passages).toHaveLength(2);
    expect(passages[1].content.startsWith('Baking the loaf\n\n')).toBe(true);
  });

  describe('windows', () => {
    it('groups up to three sentences', () => {
      const text = 'One is here. Two is here. Three is here. Four is here. Five is here.';
      expect(chunk({ segments: [{ text }] }).windows.map((w) => w.text)).toEqual([
        'One is here. Two is here. Three is here.',
        'Four is here. Five is here.',
      ]);
    });

    it('honours windowSentences and windowMaxChars', () => {
      const text = 'One is here. Two is here. Three is here.';
      expect(chunk({ segments: [{ text }] }, { windowSentences: 1 }).windows.map((w) => w.text)).toEqual([
        'One is here.',
        'Two is here.',
        'Three is here.',
      ]);
      expect(chunk({ segments: [{ text }] }, { windowMaxChars: 30 }).windows.map((w) => w.text)).toEqual([
        'One is here. Two is here.',
        'Three is here.',
      ]);
    });

    it('merges a heading with the sentence after it and starts a new window for it', () => {
      const text = 'Earlier text ends here.\n\nHow volcanoes form\n\nMagma rises. It cools. It hardens. It erodes.';
      expect(chunk({ segments: [{ text }] }).windows.map((w) => w.text)).toEqual([
        'Earlier text ends here.',
        'How volcanoes form Magma rises. It cools. It hardens.',
        'It erodes.',
      ]);
    });

    it('splits an over-long sentence into windows of its own', () => {
      const long = `A${' very long clause that keeps going'.repeat(30).trim()}.`;
      const { windows } = chunk({ segments: [{ text: `Short one. ${long} Short two.` }] }, { passageChars: 5000 });
      expect(windows[0].text).toBe('Short one.');
      expect(windows.length).toBeGreaterThan(3);
      expect(windows.every((w) => w.text.length <= 400)).toBe(true);
      expect(windows[windows.length - 1].text.endsWith('going. Short two.')).toBe(true);
    });

    it('does not end sentences at abbreviations, initials or decimals', () => {
      const text = 'Dr. Smith met J. R. Tolkien at 3.5 p.m. on the dot. They talked, e.g. about maps. Then they left.';
      expect(chunk({ segments: [{ text }] }, { windowSentences: 1 }).windows.map((w) => w.text)).toEqual([
        'Dr. Smith met J. R. Tolkien at 3.5 p.m. on the dot.',
        'They talked, e.g. about maps.',
        'Then they left.',
      ]);
    });

    it('gives every passage at least one window', () => {
      const doc: ExtractedDocument = {
        segments: [
          { text: 'Tiny', page: 1 },
          { text: 'Also tiny', page: 2 },
          { text: 'x'.repeat(1200), page: 3 },
        ],
      };
      const { passages, windows } = chunk(doc);
      for (const passage of passages) expect(windows.some((w) => w.passageIndex === passage.index)).toBe(true);
    });
  });

  describe('whitespace', () => {
    it('joins the soft-wrapped lines of a PDF paragraph and collapses runs of spaces', () => {
      expect(normaliseWhitespace('The  quick\u00a0brown fox\njumps over\r\nthe lazy dog.\n\n\n\nNext  paragraph.')).toBe(
        'The quick brown fox jumps over the lazy dog.\n\nNext paragraph.',
      );
    });

    it('keeps table rows, list items and markdown headings on their own lines', () => {
      expect(normaliseWhitespace('Week\tKm\n1\t14\n2\t16')).toBe('Week\tKm\n1\t14\n2\t16');
      expect(normaliseWhitespace('Shopping:\n- flour\n- water\n- salt')).toBe('Shopping:\n- flour\n- water\n- salt');
      expect(normaliseWhitespace('# Title\nBody text\nwraps here.')).toBe('# Title\nBody text wraps here.');
    });

    it('drops invisible characters and control codes', () => {
      expect(normaliseWhitespace('soft\u00adhyphen zero\u200bwidth\u0007bell\ufeff')).toBe('softhyphen zerowidth bell');
    });

    it('mends each single departure from plain text (one space, one break, two breaks) however alone it is', () => {
      expect(normaliseWhitespace('One.\n\nTwo words.')).toBe('One.\n\nTwo words.');
      expect(normaliseWhitespace('One. \nTwo.')).toBe('One. Two.');
      expect(normaliseWhitespace('One.\n Two.')).toBe('One. Two.');
      expect(normaliseWhitespace('One.\n\n\nTwo.')).toBe('One.\n\nTwo.');
      expect(normaliseWhitespace('One  two.')).toBe('One two.');
      expect(normaliseWhitespace(' One two. ')).toBe('One two.');
      expect(normaliseWhitespace('One\u3000two\u202fthree\u2028four\u0085five\u2060six.')).toBe('One two three four fivesix.');
      expect(normaliseWhitespace('caf\u00e9 \u00fcber na\u00efve.')).toBe('caf\u00e9 \u00fcber na\u00efve.');
    });

    it('treats table rows as separate sentences in windows', () => {
      const { windows } = chunk({ segments: [{ text: 'a\t1\nb\t2\nc\t3\nd\t4', label: 'Sheet1' }] });
      expect(windows.map((w) => w.text)).toEqual(['a 1 b 2 c 3', 'd 4']);
    });
  });

  it('returns nothing for a document without text', () => {
    expect(chunk({ segments: [] })).toEqual({ passages: [], windows: [] });
    expect(chunk({ segments: [{ text: ' \n\t ' }] })).toEqual({ passages: [], windows: [] });
  });

  it('refuses nonsensical options', () => {
    const doc = { segments: [{ text: 'x' }] };
    expect(() => chunk(doc, { passageChars: 0 })).toThrow(RangeError);
    expect(() => chunk(doc, { windowSentences: 1.5 })).toThrow(RangeError);
  });

  it('handles a 200-page document of about 600,000 characters', () => {
    // Behaviour only; the speed of this is measured by the ingestion benchmark, not asserted here.
    const segments: ExtractedSegment[] = pages(200).segments;
    const result = chunk({ segments });
    expectWellFormed({ segments }, result);
    expect(result.windows.length).toBeGreaterThan(result.passages.length);
  });
});
