import type { JsonSchema } from './api-types';

export interface SchemaProblem {
  /** Dotted path below the validated value, '' for the value itself. */
  path: string;
  reason: string;
}

/**
 * Checks a value against the JSON Schema keywords the node-type schemas use (type, enum, const,
 * bounds, lengths, pattern, items, properties, required, additionalProperties, anyOf/oneOf).
 * Formats and other keywords are left to the server, whose 400 lists what this lets through.
 * Ajv would cover more, but it compiles schemas into functions with `new Function`, which the
 * console's Content-Security-Policy (no 'unsafe-eval') rightly refuses.
 */
export function validateSchema(schema: JsonSchema, value: unknown, path = ''): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const fail = (reason: string, at = path) => problems.push({ path: at, reason });

  if (schema.type !== undefined) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => hasType(value, type))) {
      fail(`must be ${types.map(article).join(' or ')}, got ${describe(value)}`);
      return problems;
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed: unknown) => equal(allowed, value))) {
    fail(`must be one of ${schema.enum.map((v: unknown) => JSON.stringify(v)).join(', ')}`);
  }
  if ('const' in schema && !equal(schema.const, value)) fail(`must be ${JSON.stringify(schema.const)}`);

  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) fail(`must be at least ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) fail(`must be at most ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum)
      fail(`must be more than ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum)
      fail(`must be less than ${schema.exclusiveMaximum}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema.minLength === 'number' && length < schema.minLength) {
      fail(schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters`);
    }
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) fail(`must be at most ${schema.maxLength} characters`);
    // A pattern is the server's to check (in linear time): the browser's backtracking engine
    // could hang the approver's tab on a pattern an editor wrote.
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) fail(`must have at least ${schema.minItems} item(s)`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) fail(`must have at most ${schema.maxItems} item(s)`);
    if (schema.uniqueItems === true && value.some((v, i) => value.findIndex((w) => equal(v, w)) !== i)) fail('must not repeat an item');
    if (isSchema(schema.items)) value.forEach((item, i) => problems.push(...validateSchema(schema.items, item, join(path, String(i)))));
  }
  if (isObject(value)) {
    const properties: Record<string, JsonSchema> = isObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
    for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
      if (value[name] === undefined) fail('is required', join(path, name));
    }
    for (const [name, item] of Object.entries(value)) {
      if (item === undefined) continue;
      if (properties[name]) problems.push(...validateSchema(properties[name], item, join(path, name)));
      else if (schema.additionalProperties === false) fail('is not a parameter of this node', join(path, name));
      else if (isSchema(schema.additionalProperties)) problems.push(...validateSchema(schema.additionalProperties, item, join(path, name)));
    }
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const options = schema[keyword];
    if (!Array.isArray(options) || !options.length) continue;
    const passing = options.filter((option: JsonSchema) => validateSchema(option, value, path).length === 0).length;
    if (passing === 0) fail(`does not match any of the allowed forms`);
    else if (keyword === 'oneOf' && passing > 1) fail('matches more than one of the allowed forms');
  }
  return problems;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

const article = (type: string) =>
  type === 'integer' || type === 'array' || type === 'object' ? `an ${type}` : type === 'null' ? 'null' : `a ${type}`;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isSchema = (value: unknown): value is JsonSchema => isObject(value);
const join = (path: string, name: string) => (path ? `${path}.${name}` : name);

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  return keysA.length === keysB.length && keysA.every((k) => equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
