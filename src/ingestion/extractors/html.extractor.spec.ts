import { readFileSync } from 'node:fs';
import { fixturePath } from '../../../test/fixtures/fixtures';
import { extractHtml } from './html.extractor';

const html = (source: string) => extractHtml(Buffer.from(source, 'utf8')).segments[0].text;

describe('extractHtml', () => {
  const fixture = () => extractHtml(readFileSync(fixturePath('freelance-tax.html'))).segments[0].text;

  it('drops script, style, noscript and template content', () => {
    expect(fixture()).not.toMatch(/LEAK|analyticsId|font-family|enable JavaScript/);
  });

  it('keeps the title and visible paragraphs, one block per paragraph, source line breaks undone', () => {
    const paragraphs = fixture().split('\n\n');
    expect(paragraphs[0]).toBe('Taxes for freelancers');
    expect(paragraphs[1]).toBe('Taxes for freelancers');
    expect(paragraphs[2]).toMatch(/^When you work for yourself, no employer withholds income tax from your pay\. Instead, /);
  });

  it('decodes entities', () => {
    const text = fixture();
    expect(text).toContain('Social Security & Medicare');
    expect(text).toContain('trade \u2014 a rule');
    expect(text).toContain('April 15');
  });

  it('gives table rows as lines of tab-separated cells', () => {
    expect(fixture().endsWith('Quarterly payment\tDue date\nFirst\tApril 15\nSecond\tJune 15')).toBe(true);
  });

  it('separates blocks once however deeply they nest, and joins inline elements', () => {
    expect(html('<div><div><p>One <b>bold</b><i>word</i>.</p></div></div><div><section><h2>Two</h2></section></div>')).toBe(
      'One boldword.\n\nTwo',
    );
  });

  it('turns br into line breaks and keeps preformatted text as written', () => {
    expect(html('<p>line one<br>line two</p><pre>  keep\n    indent &lt;here&gt;</pre>')).toBe(
      'line one\nline two\n\n  keep\n    indent <here>',
    );
  });

  it('skips upper-case scripts, comments and a leading XML declaration', () => {
    expect(html('<?xml version="1.0"?><!DOCTYPE html><BODY><SCRIPT>var x = "<p>no</p>";</SCRIPT><!-- hidden -->Shown</BODY>')).toBe(
      'Shown',
    );
  });

  it('survives very deep nesting without recursion', () => {
    const depth = 20_000;
    expect(html(`${'<span>'.repeat(depth)}deep${'</span>'.repeat(depth)}`)).toBe('deep');
  });
});
