import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { LoadOptions, parameterDocs, ParametersClass } from '../sdk';

export type JsonSchema = Record<string, unknown>;

/** JSON type names a parameter can have; `unknown` when no decorator fixes one. */
export type ParameterType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'unknown';

export interface ParametersSchema {
  schema: JsonSchema;
  /** Declared type of each property, used to coerce expression results before validation. */
  types: Record<string, ParameterType>;
  /** Properties documented as `template: true`. */
  templates: Set<string>;
  /** Properties documented as `code: true` (JavaScript run by the node in the sandbox). */
  codes: Set<string>;
  /** `loadOptions` of the properties that have dynamic options. */
  optionLoaders: Map<string, LoadOptions>;
}

const TYPE_OF: Record<string, ParameterType> = {
  isString: 'string',
  isNumber: 'number',
  isInt: 'integer',
  isBoolean: 'boolean',
  isArray: 'array',
  isObject: 'object',
};

const FORMAT_OF: Record<string, string> = {
  isUrl: 'uri',
  isEmail: 'email',
  isUUID: 'uuid',
  isISO8601: 'date-time',
  isDateString: 'date-time',
  isIP: 'ip',
  isFQDN: 'hostname',
};

/**
 * Builds the JSON Schema of a parameter class from its class-validator metadata and `@Parameter()`
 * docs, so the one class serves validation, documentation and the builder. Only decorators with a
 * JSON Schema equivalent are mapped; the others still validate, they are just not described.
 */
export function parametersSchema(parameters: ParametersClass<object>): ParametersSchema {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(parameters, '', true, false);
  const docs = parameterDocs(parameters);
  const defaults = new parameters() as Record<string, unknown>;
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const m of metadata) byProperty.set(m.propertyName, [...(byProperty.get(m.propertyName) ?? []), m]);
  for (const name of docs.keys()) if (!byProperty.has(name)) byProperty.set(name, []);

  const properties: Record<string, JsonSchema> = {};
  const types: Record<string, ParameterType> = {};
  const required: string[] = [];
  const templates = new Set<string>();
  const codes = new Set<string>();
  const optionLoaders = new Map<string, LoadOptions>();
  for (const [name, rules] of byProperty) {
    const doc = docs.get(name);
    const { schema, type, optional } = propertySchema(rules);
    const fallback = defaults[name];
    properties[name] = {
      ...(doc?.displayName ? { title: doc.displayName } : {}),
      ...(doc?.description ? { description: doc.description } : {}),
      ...schema,
      ...(fallback !== undefined ? { default: fallback } : {}),
      // Tells a builder that `${...}` in this text is rendered in every mode.
      ...(doc?.template ? { 'x-template': true } : {}),
      // Tells a builder to offer a code editor: the text is a JavaScript function body.
      ...(doc?.code ? { 'x-code': 'javascript' } : {}),
      ...(doc?.schema ?? {}),
      // Tells a builder to offer a dropdown filled from GET .../parameters/<name>/options.
      ...(doc?.loadOptions ? { 'x-dynamic-options': true } : {}),
    };
    types[name] = type;
    if (doc?.template) templates.add(name);
    if (doc?.code) codes.add(name);
    if (doc?.loadOptions) optionLoaders.set(name, doc.loadOptions);
    if (!optional && fallback === undefined) required.push(name);
  }
  return {
    schema: {
      type: 'object',
      properties,
      ...(required.length ? { required } : {}),
      additionalProperties: false,
    },
    types,
    templates,
    codes,
    optionLoaders,
  };
}

function propertySchema(rules: ValidationMetadata[]): { schema: JsonSchema; type: ParameterType; optional: boolean } {
  const own: JsonSchema = {};
  const items: JsonSchema = {};
  let optional = false;
  let type: ParameterType = 'unknown';
  for (const rule of rules) {
    if (rule.name === 'isOptional') {
      optional = true;
      continue;
    }
    const target = rule.each ? items : own;
    const mappedType = rule.name ? TYPE_OF[rule.name] : undefined;
    if (mappedType) {
      target.type = mappedType;
      if (!rule.each) type = mappedType;
    }
    Object.assign(target, constraintKeywords(rule));
  }
  if (Object.keys(items).length) {
    own.type = 'array';
    own.items = items;
    type = 'array';
  }
  return { schema: own, type, optional };
}

/** JSON Schema keywords for one class-validator rule; an empty object when it has none. */
function constraintKeywords(rule: ValidationMetadata): JsonSchema {
  const c = rule.constraints ?? [];
  switch (rule.name) {
    case 'isIn':
      return { enum: [...(c[0] as unknown[])] };
    case 'isEnum':
      return { enum: Array.isArray(c[1]) ? [...(c[1] as unknown[])] : Object.values(c[0] as object) };
    case 'min':
      return { minimum: c[0] };
    case 'max':
      return { maximum: c[0] };
    case 'isPositive':
      return { exclusiveMinimum: 0 };
    case 'isNegative':
      return { exclusiveMaximum: 0 };
    case 'minLength':
      return { minLength: c[0] };
    case 'maxLength':
      return { maxLength: c[0] };
    case 'length':
      return { minLength: c[0], ...(c[1] !== undefined ? { maxLength: c[1] } : {}) };
    case 'isNotEmpty':
      return { minLength: 1 };
    case 'matches':
      return { pattern: c[0] instanceof RegExp ? c[0].source : String(c[0]) };
    case 'arrayMinSize':
      return { minItems: c[0] };
    case 'arrayMaxSize':
      return { maxItems: c[0] };
    case 'arrayUnique':
      return { uniqueItems: true };
    case 'isJSON':
      return { contentMediaType: 'application/json' };
    default:
      return rule.name && FORMAT_OF[rule.name] ? { format: FORMAT_OF[rule.name] } : {};
  }
}
