import { readFileSync } from 'node:fs';
import { buildDocx, buildZipBombDocx } from '../../../test/fixtures/fixture-builders';
import { SOURDOUGH_PARAGRAPHS } from '../../../test/fixtures/fixture-texts';
import { fixturePath, REJECTED_FIXTURES } from '../../../test/fixtures/fixtures';
import { expectFailure } from '../../../test/fixtures/expect-failure';
import { writeZip } from '../../../test/fixtures/zip-writer';
import { ErrorCode } from '../../common/app-error';
import { extractDocx } from './docx.extractor';
import { extractInProcess } from './extract-in-process';

const DOCX = { kind: 'docx', mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' } as const;

describe('extractDocx', () => {
  it('gives the body text, one paragraph per block', async () => {
    const { segments } = await extractDocx(readFileSync(fixturePath('sourdough.docx')), {});
    expect(segments).toHaveLength(1);
    expect(segments[0].text.trim().split('\n\n')).toEqual(SOURDOUGH_PARAGRAPHS);
  });

  it('decodes XML entities in the text', async () => {
    const { segments } = await extractDocx(buildDocx(['Salt & pepper <to taste>, "fresh"']), {});
    expect(segments[0].text.trim()).toBe('Salt & pepper <to taste>, "fresh"');
  });

  it('refuses the zip-bomb fixture before mammoth inflates it', async () => {
    const error = await expectFailure(
      extractDocx(readFileSync(fixturePath(REJECTED_FIXTURES.zipBombDocx)), {}),
      ErrorCode.EXTRACTION_FAILED,
    );
    expect(error.message).toMatch(/^zip bomb: /);
  });

  it('applies a configured decompression cap', async () => {
    const docx = buildDocx(['x'.repeat(300_000)]);
    await expect(extractDocx(docx, {})).resolves.toBeDefined();
    const error = await expectFailure(extractDocx(docx, { maxDecompressedBytes: 100_000 }), ErrorCode.EXTRACTION_FAILED);
    expect(error.message).toBe('zip bomb: declared decompressed size exceeds 100000 bytes');
    expect(buildZipBombDocx().length).toBeLessThan(4096);
  });

  it('reports a package without its main document as corrupt', async () => {
    const broken = writeZip([
      { name: '[Content_Types].xml', data: '<Types/>' },
      { name: 'word/document.xml', data: '<w:document' },
    ]);
    const error = await expectFailure(extractDocx(broken, {}), ErrorCode.EXTRACTION_FAILED);
    expect(error.message).toMatch(/^corrupt DOCX: /);
  });

  it('finds no text in the empty fixture', async () => {
    const error = await expectFailure(
      extractInProcess(readFileSync(fixturePath(REJECTED_FIXTURES.emptyDocx)), DOCX),
      ErrorCode.EXTRACTION_FAILED,
    );
    expect(error.message).toBe('document has no text');
  });
});
