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

  it('reads a UTF-8 BOM, UTF-16 and Windows-1252 exports, sniffing their delimiter', () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('"name";"city"\r\n"Zoë";"Köln"\r\n')]);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('name\tcity\r\nZoë\tKöln\r\n', 'utf16le')]);
    const windows1252 = Buffer.from([...Buffer.from('name|city\n'), 0x93, 0x5a, 0x6f, 0xeb, 0x94, 0x7c, 0x4b, 0xf6, 0x6c, 0x6e]);
    expect(extractCsv(bom).segments).toEqual([{ text: 'name\tcity\nZoë\tKöln' }]);
    expect(extractCsv(utf16).segments).toEqual([{ text: 'name\tcity\nZoë\tKöln' }]);
    expect(extractCsv(windows1252).segments).toEqual([{ text: 'name\tcity\n\u201cZoë\u201d\tKöln' }]);
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
    ['line ends mixed in one file', 'a,b\r\nc,d\ne,f\rg,h', ['a\tb', 'c\td', 'e\tf', 'g\th']],
    ['a CRLF inside quotes with indented continuation', 'a,"b\r\n   c"\r\nd', ['a\tb c', 'd']],
    ['tabs and spaces after a closing quote', '"a" \t ,b', ['a\tb']],
    ['a doubled quote at the end of an unterminated field', 'a,"x""', ['a\tx"']],
    ['text after a closing quote and a space, kept as written', '"abc" def,x\n"b" ,c', ['"abc" def\tx', '"b"\tc']],
    ['text right after a closing quote, kept as written', '"abc"def,x', ['"abc"def\tx']],
    ['text after a closing quote, then an unterminated quote', '"a" b,"open\nmore', ['"a" b\topen more']],
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
