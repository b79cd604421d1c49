import { isTemplate, splitTemplate, TemplateSyntaxError } from './template';

describe('isTemplate', () => {
  it.each([
    ['${input.name}', true],
    ['https://api.example.com/${input.id}/items', true],
    ['a ${ {a: 1}.a } b', true],
    ['input.name', false],
    ['{"text": input.query}', false],
    ['costs $5 {approx}', false],
    ['open ${ never closed', false],
  ])('%s -> %s', (source, expected) => {
    expect(isTemplate(source)).toBe(expected);
  });
});

describe('splitTemplate', () => {
  it('cuts literal text and insertions', () => {
    expect(splitTemplate('Hello ${input.name}, you are ${input.age}!')).toEqual({
      literals: ['Hello ', ', you are ', '!'],
      codes: ['input.name', 'input.age'],
    });
  });

  it('keeps empty literals at the edges and between adjacent insertions', () => {
    expect(splitTemplate('${a}${b}')).toEqual({ literals: ['', '', ''], codes: ['a', 'b'] });
  });

  it('skips braces inside object literals, strings, template literals and comments', () => {
    const codes = ['{ a: { b: 1 } }.a.b', '"}" + \'}\' + "\\"}"', '`x${ {k: "}"}.k }y`', 'a /* } */ + b', 'a // }\n + b'];
    const template = codes.map((code) => `[\${${code}}]`).join('');
    expect(splitTemplate(template).codes).toEqual(codes);
  });

  it('returns a template without insertions as one literal', () => {
    expect(splitTemplate('plain text')).toEqual({ literals: ['plain text'], codes: [] });
  });

  it.each(['a ${ b ${c}', '${ "}', '${ `${x}', '${ /* }'])('rejects an unterminated insertion in %s', (template) => {
    expect(() => splitTemplate(template)).toThrow(TemplateSyntaxError);
  });
});
