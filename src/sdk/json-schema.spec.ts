import { linearJsonSchemaValidator, schemaDefinitionProblem, schemaProblems } from './json-schema';

const stringWithPattern = (pattern: string) => ({ type: 'object', properties: { a: { type: 'string', pattern } } });

describe('schemaProblems', () => {
  it('matches patterns as JSON Schema reads them, with RE2', () => {
    const schema = stringWithPattern('^\\d{3}-[A-Z]\\w*$');
    expect(schemaProblems(schema, { a: '123-Abc' })).toEqual([]);
    expect(schemaProblems(schema, { a: '12-abc' })).toEqual([{ path: 'a', message: 'must match pattern "^\\d{3}-[A-Z]\\w*$"' }]);
    expect(schemaProblems({ type: 'object', patternProperties: { '^x': { type: 'number' } } }, { xa: 'no', b: 1 })).toEqual([
      { path: 'xa', message: 'must be number' },
    ]);
  });

  it('refuses a catastrophic pattern in linear time (no backtracking)', () => {
    // With V8's engine, 29 characters took seconds and each one more doubles it.
    expect(schemaProblems(stringWithPattern('^(a+)+$'), { a: 'a'.repeat(5000) + '!' })).toEqual([
      { path: 'a', message: 'must match pattern "^(a+)+$"' },
    ]);
  });

  it('stops a check that would spend more than its budget, naming the pattern and the length', () => {
    const problems = schemaProblems(stringWithPattern('^[ab]*a[ab]{20}$'), { a: 'ab'.repeat(500_000) });
    expect(problems).toHaveLength(1);
    expect(problems[0].path).toBe('');
    expect(problems[0].message).toContain('1000000 characters is too long to check against the pattern "^[ab]*a[ab]{20}$"');
    // Any allowed pattern checks a 1,000-character value.
    expect(schemaProblems(stringWithPattern('^[a-z]{0,40}[0-9]*$'), { a: 'a'.repeat(40) + '1'.repeat(960) })).toEqual([]);
  });
});

describe('schemaDefinitionProblem', () => {
  it.each([
    [{ type: 'object', properties: { a: { type: 'string', title: 5 } } }, 'title must be string'],
    [stringWithPattern('(?=a)b'), 'no lookahead'],
    [{ type: 'object', patternProperties: { '(a)\\1': { type: 'string' } } }, 'no lookahead, lookbehind or backreferences'],
    [stringWithPattern('a'.repeat(1001)), 'more than the 1000 allowed'],
    [stringWithPattern('^[a-z]{0,500}$'), 'compiles to 1004 instructions, more than the 100 allowed'],
    [{ type: 'object', properties: { a: { $ref: '#/nowhere' } } }, "can't resolve reference"],
    [{ type: 'objec' }, 'schema is invalid'],
    ['{}', 'must be a JSON Schema (an object)'],
  ])('refuses %j: %s', (schema, reason) => {
    expect(schemaDefinitionProblem(schema)).toContain(reason);
  });

  it('takes a usable schema', () => {
    expect(schemaDefinitionProblem({ type: 'object', properties: { a: { type: 'string', pattern: '^\\p{L}+$', title: 'A' } } })).toBeNull();
  });
});

describe('linearJsonSchemaValidator', () => {
  it("answers as the MCP SDK's validators do", () => {
    const validate = linearJsonSchemaValidator.getValidator(stringWithPattern('^(a+)+$'));
    expect(validate({ a: 'aaa' })).toEqual({ valid: true, data: { a: 'aaa' }, errorMessage: undefined });
    expect(validate({ a: 'a'.repeat(40) + '!' })).toEqual({
      valid: false,
      data: undefined,
      errorMessage: 'a must match pattern "^(a+)+$"',
    });
  });
});
