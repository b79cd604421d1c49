import type { default as AjvClass, ValidateFunction } from 'ajv';
import { linearRegExp, PatternBudgetExceeded, PatternRefused, withPatternBudget } from './linear-regexp';

/** One thing a JSON Schema refuses in a value. */
export interface SchemaProblem {
  /** Where, as a dotted path from the value (`address.zip`); '' for the value itself. */
  path: string;
  /** For a missing required property: its name (the problem sits on the object that lacks it). */
  missing?: string;
  /** ajv's reason, e.g. `must be number`. */
  message: string;
}

const MAX_COMPILED = 256;
// Schemas of different owners may share an `$id`: none is registered, and each is dropped from
// ajv's own cache once compiled, so the map below is the only cache (least recently used goes).
const compiled = new Map<string, ValidateFunction>();
let instance: AjvClass | undefined;

/**
 * ajv, loaded on the first check: the rest of the SDK needs no package at all, so a plugin that
 * carries its own copy of the SDK loads without ajv unless it checks schemas.
 */
function ajv(): AjvClass {
  if (!instance) {
    const Ajv = (require('ajv') as typeof import('ajv')).default;
    // Patterns run on RE2 (linear-regexp.ts), never on V8's backtracking engine.
    const regExp = Object.assign((pattern: string) => linearRegExp(pattern), { code: 'linearRegExp' });
    instance = new Ajv({ allErrors: true, strict: false, addUsedSchema: false, code: { regExp } });
  }
  return instance;
}

function validatorOf(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (validate) {
    compiled.delete(key);
  } else {
    const compiler = ajv();
    try {
      validate = compiler.compile(schema);
    } finally {
      compiler.removeSchema(schema);
    }
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
  }
  compiled.set(key, validate);
  return validate;
}

/**
 * What `schema` refuses in `value`, every problem (empty when it matches); compiled validators are
 * kept for the next call with the same schema. The one JSON Schema check of the service and its
 * plugins, each caller wording the problems its own way. Its patterns run in linear time within
 * one budget for the whole check: a value too long to check against them is one problem at the
 * top (`path` ''), whose message says which pattern and how long.
 * @throws Error when `schema` is no usable JSON Schema (see schemaDefinitionProblem)
 */
export function schemaProblems(schema: object, value: unknown): SchemaProblem[] {
  const validate = validatorOf(schema);
  let valid: boolean;
  try {
    valid = withPatternBudget(() => validate(value) as boolean);
  } catch (error) {
    if (error instanceof PatternBudgetExceeded) return [{ path: '', message: error.message }];
    throw error;
  }
  if (valid) return [];
  return (validate.errors ?? []).map((e) => {
    const missing = e.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
    return {
      path: e.instancePath.replace(/^\//, '').replace(/\//g, '.'),
      ...(missing ? { missing } : {}),
      message: e.message ?? 'is invalid',
    };
  });
}

/**
 * Why `schema` cannot be used as a JSON Schema, or null when it can: what breaks the meta-schema
 * (a `title` that is no string, a `type` that is no type name), a pattern that is not linear
 * (lookaround, backreferences) or longer than 1,000 characters, a `$ref` to nowhere. For save time, so that a
 * bad schema is refused where it is written, never where it is used.
 */
export function schemaDefinitionProblem(schema: unknown): string | null {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON Schema (an object)';
  try {
    validatorOf(schema);
    return null;
  } catch (error) {
    const message = (error as Error).message;
    return error instanceof PatternRefused ? message : message.replace(/^schema is invalid: data/, 'schema is invalid: ');
  }
}

/**
 * `schemaProblems` as the MCP SDK's `jsonSchemaValidator` (what its client checks an outside
 * server's tool results with, and its server elicitation answers), so that no schema anyone sends
 * reaches a backtracking engine.
 */
export const linearJsonSchemaValidator = {
  getValidator<T>(schema: object) {
    type Result = { valid: true; data: T; errorMessage: undefined } | { valid: false; data: undefined; errorMessage: string };
    // A schema that cannot be used refuses every value, rather than failing whatever listed it.
    const unusable = schemaDefinitionProblem(schema);
    return (input: unknown): Result => {
      if (unusable !== null) return { valid: false, data: undefined, errorMessage: `the schema cannot be used: ${unusable}` };
      const problems = schemaProblems(schema, input);
      return problems.length === 0
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: problems.map((p) => `${p.path || 'value'} ${p.message}`).join('; ') };
    };
  },
};

/**
 * Why `value` is no usable JSON Schema for the parameter `name` (with `object`, of an object:
 * `type: "object"`), or null: the save-time check of a parameter that holds a schema (approval
 * fields, a tool's input, an agent's output).
 */
export function schemaParameterProblem(value: unknown, name: string, options: { object?: boolean } = {}): string | null {
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (options.object && !(isObject && (value as { type?: unknown }).type === 'object')) {
    return `${name} must be a JSON Schema of an object: {"type": "object", "properties": {...}}`;
  }
  const problem = schemaDefinitionProblem(value);
  return problem && `${name} cannot be used: ${problem}`;
}

/**
 * `schemaParameterProblem` as a class-validator rule, for
 * `@ValidateBy(jsonSchemaRule('fields', { object: true }))` (plain data: the SDK imports no package).
 */
export function jsonSchemaRule(name: string, options: { object?: boolean } = {}) {
  return {
    name: 'isJsonSchema',
    validator: {
      validate: (value: unknown) => schemaParameterProblem(value, name, options) === null,
      defaultMessage: (args?: { value: unknown }) => schemaParameterProblem(args?.value, name, options) ?? '',
    },
  };
}
