import { expressionBound } from './bounded-expression';

describe('expressionBound', () => {
  it.each([
    ['input.query.length > 3', 1],
    ['{"text": input.query, "top_k": "5"}', 1],
    ['variables.baseUrl', 1],
    ['item.amount > 100 && item.status === "ok" ? item.id : null', 3],
    ['typeof item.email === "string"', 1],
    ['nodes["call"]?.response.body[input.i]', 2],
    ['`${input.a}-${input.b}`', 2],
    ['[input.a, { a: input.b, "b": 1, c: [2, /x+/] }]', 2],
    ['(1, -input.n, !input.ok)', 2],
  ])('proves %s bounded, with its name references', (code, references) => {
    expect(expressionBound(code)).toEqual({ bounded: true, references });
  });

  it.each([
    ['a call', 'input.name.toUpperCase()'],
    ['a call hidden in an optional chain', 'input.f?.()'],
    ['new', 'new Array(1e9)'],
    ['a tagged template', 'String.raw`x`'],
    ['a function literal', '(() => 1)'],
    ['a getter', '({ get x() { return 1 } })'],
    ['a method', '({ m() {} })'],
    ['a class with a static block', '(class { static { while (true) {} } })'],
    ['an assignment', '(input.s = input.s + input.s)'],
    ['an update', 'input.n++'],
    ['delete', 'delete input.a'],
    ['array spread', '[...input.text]'],
    ['object spread', '({ ...input })'],
    ['a BigInt literal', '2n ** 100000000n'],
    ['a computed key (Symbol.toPrimitive)', '({ [Symbol.toPrimitive]: Array.prototype.join }) + ""'],
    ['a builtin as toString', '({ toString: Array.prototype.join, length: 1e9 }) + ""'],
    ['a prototype of our choosing', '({ __proto__: Array.prototype, length: 1e9 }) + ""'],
    ['a quoted __proto__', '({ "__proto__": Array.prototype, length: 1e9 }) + ""'],
    ['toJSON', '({ toJSON: Array.prototype.join, length: 1e9 })'],
    ['dynamic import', 'import("fs")'],
    ['a second statement', '1; 2'],
    ['a syntax error', 'input +'],
  ])('refuses %s', (_, code) => {
    expect(expressionBound(code).bounded).toBe(false);
  });
});
