import { readFileSync } from 'node:fs';
import { HONEYBEE_ROWS } from '../../../test/fixtures/fixture-texts';
import { fixturePath } from '../../../test/fixtures/fixtures';
import { extractCsv, parseCsvLines, sniffDelimiter } from './csv.extractor';

describe('extractCsv', () => {
  it('gives one line per record, fields tab-separated, quotes undone, inner line breaks joined', () => {
    const { segments } = extractCsv(readFileSync(fixturePath('honeybees.csv')));
    const lines = segments[0].text.split('\n');
    expect(lines).toHaveLength(1 + HONEYBEE_ROWS.length);
    expect(lines[0]).toBe('topic\tdetails');
    HONEYBEE_ROWS.forEach(([topic, details], i) => {
      expect(lines[i + 1]).toBe(`${topic}\t${details.replace(/\n/g, ' ')}`);
    });
  });
});

describe('parseCsvLines', () => {
  it.each([
    ['plain fields', 'a,b,c\n1,2,3', ['a\tb\tc', '1\t2\t3']],
    ['CRLF and a trailing newline', 'a,b\r\n1,2\r\n', ['a\tb', '1\t2']],
    ['old Mac line ends', 'a,b\r1,2', ['a\tb', '1\t2']],
    ['doubled quotes', '"say ""hi""",x', ['say "hi"\tx']],
    ['delimiters and newlines inside quotes', '"a, b","line\nbreak"', ['a, b\tline break']],
    ['spaces around fields', '  a  , "b" ,c ', ['a\tb\tc']],
    ['a quote inside an unquoted field', '5" screen,ok', ['5" screen\tok']],
    ['an unterminated quote runs to the end', 'a,"never closed\nstill here', ['a\tnever closed still here']],
    ['empty records and trailing empty fields', 'a,,\n\n,\n,b', ['a', '\tb']],
  ])('%s', (_, input, expected) => {
    expect(parseCsvLines(input)).toEqual(expected);
  });

  it('reads other delimiters', () => {
    expect(parseCsvLines('a;b\n"x;y";z', ';')).toEqual(['a\tb', 'x;y\tz']);
  });
});

describe('sniffDelimiter', () => {
  it.each([
    ['name,age,city\nx,1,y', ','],
    ['name;age;city\nx;1;y', ';'],
    ['name\tage\tcity', '\t'],
    ['name|age|city', '|'],
    ['"a;b;c",d,e', ','],
    ['single column', ','],
  ])('%j uses %j', (text, delimiter) => {
    expect(sniffDelimiter(text)).toBe(delimiter);
  });
});
