import type { default as AjvClass, ValidateFunction } from 'ajv';

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
    instance = new Ajv({ allErrors: true, strict: false, addUsedSchema: false });
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
 * plugins, each caller wording the problems its own way.
 * @throws Error when `schema` is no usable JSON Schema
 */
export function schemaProblems(schema: object, value: unknown): SchemaProblem[] {
  const validate = validatorOf(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => {
    const missing = e.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
    return {
      path: e.instancePath.replace(/^\//, '').replace(/\//g, '.'),
      ...(missing ? { missing } : {}),
      message: e.message ?? 'is invalid',
    };
  });
}
