import { readFileSync } from 'node:fs';
import { MARATHON_ADVICE, MARATHON_PLAN } from '../../../test/fixtures/fixture-texts';
import { fixturePath } from '../../../test/fixtures/fixtures';
import { cellText, extractXlsx } from './xlsx.extractor';

describe('extractXlsx', () => {
  it('gives one segment per sheet, labelled with its name, rows as tab-separated lines', async () => {
    const { segments } = await extractXlsx(readFileSync(fixturePath('marathon.xlsx')), {});
    expect(segments.map((s) => s.label)).toEqual(['Plan', 'Advice']);
    const rows = segments[0].text.split('\n');
    expect(rows[0]).toBe('Week\tFocus\tLong run (km)\tNotes');
    expect(rows[1]).toBe(MARATHON_PLAN[0].join('\t'));
    expect(segments[1].text).toBe(MARATHON_ADVICE.join('\n'));
  });

  it('gives the cached result of a formula, never the formula', async () => {
    const { segments } = await extractXlsx(readFileSync(fixturePath('marathon.xlsx')), {});
    const total = MARATHON_PLAN.reduce((sum, [, , km]) => sum + km, 0);
    expect(segments[0].text.split('\n').pop()).toBe(`Total\t\t${total}\tKilometres of long runs over the plan`);
    expect(segments[0].text).not.toMatch(/SUM\(/);
  });
});

describe('cellText', () => {
  it.each([
    ['a formula result of zero', { formula: 'A1-A1', result: 0 }, '0'],
    ['a formula without a cached result', { formula: 'NOW()' }, ''],
    ['a shared formula', { sharedFormula: 'C2', result: 'yes' }, 'yes'],
    ['a formula that errs', { formula: '1/0', result: { error: '#DIV/0!' } }, '#DIV/0!'],
    ['an error value', { error: '#N/A' }, '#N/A'],
    ['rich text', { richText: [{ text: 'Bold' }, { text: ' and plain' }] }, 'Bold and plain'],
    ['a hyperlink', { text: 'the site', hyperlink: 'https://example.org' }, 'the site'],
    ['a date', new Date(Date.UTC(2024, 2, 5)), '2024-03-05'],
    ['a date and time', new Date(Date.UTC(2024, 2, 5, 14, 30)), '2024-03-05T14:30:00Z'],
    ['binary floating-point noise', 0.1 + 0.2, '0.3'],
    ['a boolean', true, 'TRUE'],
    ['a line break inside a cell', 'two\nlines', 'two lines'],
    ['an empty cell', null, ''],
  ])('%s', (_, value, expected) => {
    expect(cellText(value as Parameters<typeof cellText>[0])).toBe(expected);
  });
});
