import { readFileSync } from 'node:fs';
import { VOLCANO_PAGES } from '../../../test/fixtures/fixture-texts';
import { fixturePath, REJECTED_FIXTURES } from '../../../test/fixtures/fixtures';
import { expectFailure } from '../../../test/fixtures/expect-failure';
import { buildPdf, makeLargeTextPdf } from '../../../test/fixtures/pdf-builder';
import { ErrorCode } from '../../common/app-error';
import { DetectedType } from '../detect-type';
import { ExtractorPool } from './extractor-pool';

/**
 * pdf.js is an ES module, which jest's CommonJS sandbox cannot load; Node in a worker thread
 * can. So PDF extraction is tested where the service runs it: through the pool.
 */
const PDF: DetectedType = { kind: 'pdf', mime: 'application/pdf' };

describe('extractPdf (in the extraction worker)', () => {
  let pool: ExtractorPool;

  beforeAll(() => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 60_000 });
  });

  afterAll(async () => {
    await pool.close();
  });

  it('gives one segment per page with its page number', async () => {
    const { segments } = await pool.extract(readFileSync(fixturePath('volcanoes.pdf')), PDF);
    expect(segments.map((s) => s.page)).toEqual([1, 2, 3]);
    expect(segments.map((s) => s.text.split('\n')[0])).toEqual(VOLCANO_PAGES.map((page) => page[0]));
  });

  it('keeps the paragraph breaks the layout shows and the words of every line', async () => {
    const { segments } = await pool.extract(readFileSync(fixturePath('volcanoes.pdf')), PDF);
    segments.forEach((segment, i) => {
      const paragraphs = segment.text.split('\n\n').map((p) => p.replace(/\s+/g, ' ').trim());
      expect(paragraphs).toEqual(VOLCANO_PAGES[i]);
    });
  });

  it('reads the page count, and the title and author of the document information dictionary when set', async () => {
    const titled = buildPdf([['First page.'], ['Second page.']], { info: { title: 'Field Notes (Etna)', author: 'A. Surveyor' } });
    expect((await pool.extract(titled, PDF)).info).toEqual({ pages: 2, title: 'Field Notes (Etna)', author: 'A. Surveyor' });
    expect((await pool.extract(buildPdf([['Untitled.']]), PDF)).info).toEqual({ pages: 1 });
  });

  it('decodes escaped characters in PDF strings', async () => {
    const { segments } = await pool.extract(buildPdf([['Parentheses (like these) and a back\\slash.']]), PDF);
    expect(segments[0].text.trim()).toBe('Parentheses (like these) and a back\\slash.');
  });

  it('reads every page of a long document', async () => {
    const { segments } = await pool.extract(makeLargeTextPdf(60), PDF);
    expect(segments).toHaveLength(60);
    expect(segments[59]).toMatchObject({ page: 60 });
    expect(segments[59].text).toMatch(/^Section 60: /);
  });

  it('reports a file that only starts like a PDF as corrupt', async () => {
    const error = await expectFailure(
      pool.extract(readFileSync(fixturePath(REJECTED_FIXTURES.corruptPdf)), PDF),
      ErrorCode.EXTRACTION_FAILED,
    );
    expect(error.message).toMatch(/^corrupt PDF: /);
  });

  it('reports a PDF whose pages carry no text', async () => {
    const error = await expectFailure(pool.extract(buildPdf([[], []]), PDF), ErrorCode.EXTRACTION_FAILED);
    expect(error.message).toBe('document has no text');
  });
});
