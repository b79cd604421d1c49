import { readFileSync } from 'node:fs';
import { buildPptx } from '../../../test/fixtures/fixture-builders';
import { CHESS_SLIDES } from '../../../test/fixtures/fixture-texts';
import { fixturePath } from '../../../test/fixtures/fixtures';
import { expectFailure } from '../../../test/fixtures/expect-failure';
import { writeZip } from '../../../test/fixtures/zip-writer';
import { ErrorCode } from '../../common/app-error';
import { extractPptx, slideText } from './pptx.extractor';

describe('extractPptx', () => {
  it('gives the slides in presentation order, not in file-name order', async () => {
    const { segments } = await extractPptx(readFileSync(fixturePath('chess.pptx')), {});
    expect(segments.map((s) => s.label)).toEqual(['Slide 1', 'Slide 2', 'Slide 3', 'Slide 4']);
    expect(segments.map((s) => s.text.split('\n')[0])).toEqual(CHESS_SLIDES.map(([title]) => title));
  });

  it('joins the runs of a paragraph, puts paragraphs on lines and text boxes apart', async () => {
    const { segments } = await extractPptx(readFileSync(fixturePath('chess.pptx')), {});
    CHESS_SLIDES.forEach(([title, paragraphs], i) => {
      expect(segments[i].text).toBe(`${title}\n\n${paragraphs.join('\n')}`);
    });
  });

  it('decodes entities: the fixture has &, <, " and \' in it', async () => {
    const text = (await extractPptx(readFileSync(fixturePath('chess.pptx')), {})).segments.map((s) => s.text).join('\n');
    expect(text).toContain('middlegame & endgame');
    expect(text).toContain('"a knight on the rim is dim"');
    expect(text).toContain("opponent's minor pieces");
    expect(text).toContain('(moves < 10)');
    expect(text).not.toMatch(/&(amp|lt|gt|quot|apos);/);
  });

  it('falls back to slide file numbers when presentation.xml is missing', async () => {
    const pptx = writeZip([
      { name: 'ppt/slides/slide10.xml', data: '<p:sld xmlns:a="x"><a:p><a:t>ten</a:t></a:p></p:sld>' },
      { name: 'ppt/slides/slide2.xml', data: '<p:sld><a:p><a:t>two</a:t></a:p></p:sld>' },
    ]);
    expect((await extractPptx(pptx, {})).segments.map((s) => s.text)).toEqual(['two', 'ten']);
  });

  it('enforces the cap on the bytes actually inflated', async () => {
    const lying = writeZip([
      { name: 'ppt/presentation.xml', data: '<p:presentation/>' },
      { name: 'ppt/slides/slide1.xml', data: Buffer.alloc(3 * 1024 * 1024, ' '), declaredSize: 500 },
    ]);
    const error = await expectFailure(extractPptx(lying, {}), ErrorCode.EXTRACTION_FAILED);
    expect(error.message).toBe('zip bomb: entry ppt/slides/slide1.xml inflates beyond its declared size');
  });

  it('reports a presentation without slides as corrupt', async () => {
    const error = await expectFailure(extractPptx(buildPptx([]), {}), ErrorCode.EXTRACTION_FAILED);
    expect(error.message).toBe('corrupt PPTX: no slides found');
  });
});

describe('slideText', () => {
  const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';

  it('decodes numeric references, and replaces impossible ones instead of throwing', () => {
    const xml = `<p:sld xmlns:a="${A}"><a:p><a:r><a:t>&#65;&#x42;&#x1F600; &#8212; &#xD800;&#1114112; &unknown;</a:t></a:r></a:p></p:sld>`;
    expect(slideText(xml)).toBe('AB\u{1F600} \u2014 \uFFFD\uFFFD &unknown;');
  });

  it('honours line breaks and ignores text outside DrawingML runs', () => {
    const xml =
      `<p:sld xmlns:a="${A}"><p:txBody><a:p><a:r><a:t>one</a:t></a:r><a:br/><a:r><a:t>two</a:t></a:r></a:p>` +
      '<a:p><a:r><a:t/></a:r></a:p></p:txBody><p:t>not drawing text</p:t></p:sld>';
    expect(slideText(xml)).toBe('one\ntwo');
  });

  it('follows whatever prefix the file binds to the DrawingML namespace', () => {
    const xml = `<p:sld xmlns:d="${A}"><d:p><d:r><d:t>custom prefix</d:t></d:r></d:p></p:sld>`;
    expect(slideText(xml)).toBe('custom prefix');
  });

  it('keeps whitespace inside runs, so words split across runs stay apart', () => {
    const xml = `<p:sld xmlns:a="${A}"><a:p><a:r><a:t>Pawns on</a:t></a:r><a:r><a:t xml:space="preserve"> e4</a:t></a:r></a:p></p:sld>`;
    expect(slideText(xml)).toBe('Pawns on e4');
  });
});
