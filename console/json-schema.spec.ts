import { validateSchema } from './json-schema';

describe('validateSchema', () => {
  it('checks types, integers and bounds', () => {
    expect(validateSchema({ type: 'integer', minimum: 1, maximum: 5 }, 3)).toEqual([]);
    expect(validateSchema({ type: 'integer' }, 1.5)).toEqual([{ path: '', reason: 'must be an integer, got number 1.5' }]);
    expect(validateSchema({ type: 'number', exclusiveMinimum: 0 }, 0)).toEqual([{ path: '', reason: 'must be more than 0' }]);
    expect(validateSchema({ type: ['string', 'null'] }, null)).toEqual([]);
    expect(validateSchema({ type: 'string' }, 3)).toEqual([{ path: '', reason: 'must be a string, got number 3' }]);
  });

  it('checks strings by length in characters, and leaves patterns to the server', () => {
    expect(validateSchema({ type: 'string', maxLength: 2 }, '😀😀')).toEqual([]);
    // A catastrophic pattern would hang the tab with the browser's engine: the server checks it in linear time.
    expect(validateSchema({ type: 'string', pattern: '^(a+)+$' }, 'a'.repeat(40) + '!')).toEqual([]);
  });

  it('walks objects and arrays, naming the path of each problem', () => {
    const schema = {
      type: 'object',
      properties: {
        list: { type: 'array', maxItems: 2, items: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
      },
      additionalProperties: { type: 'string' },
    };
    expect(validateSchema(schema, { list: [{ n: 1 }, {}, { n: 'x' }], extra: 1 })).toEqual([
      { path: 'list', reason: 'must have at most 2 item(s)' },
      { path: 'list.1.n', reason: 'is required' },
      { path: 'list.2.n', reason: 'must be an integer, got string "x"' },
      { path: 'extra', reason: 'must be a string, got number 1' },
    ]);
  });

  it('compares enum and const values by content', () => {
    expect(validateSchema({ enum: [['a'], { b: 1 }] }, { b: 1 })).toEqual([]);
    expect(validateSchema({ const: { b: 1 } }, { b: 2 })).toEqual([{ path: '', reason: 'must be {"b":1}' }]);
  });

  it('wants one match for oneOf and at least one for anyOf', () => {
    const oneOf = { oneOf: [{ type: 'integer' }, { type: 'string', maxLength: 3 }] };
    expect(validateSchema(oneOf, '12')).toEqual([]);
    expect(validateSchema(oneOf, 'xxxx')).toEqual([{ path: '', reason: 'does not match any of the allowed forms' }]);
    expect(validateSchema({ oneOf: [{ type: 'number' }, { type: 'integer' }] }, 1)).toEqual([
      { path: '', reason: 'matches more than one of the allowed forms' },
    ]);
    expect(validateSchema({ anyOf: [{ type: 'number' }, { type: 'integer' }] }, 1)).toEqual([]);
  });
});
