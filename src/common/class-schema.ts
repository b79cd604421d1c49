import { getMetadataStorage, ValidateBy, ValidationOptions } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

/**
 * JSON Schema from class-validator classes: the rules that validate an input are also what
 * describes it (node parameters in the builder, MCP tool arguments, the REST API's OpenAPI), so a
 * limit is written once. Imports nothing of Nest: the stdio MCP program uses it too.
 */

export type JsonSchema = Record<string, unknown>;

/** JSON type names a property can have; `unknown` when no decorator fixes one. */
export type PropertyType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'unknown';

/** What the validation rules cannot say about a property. */
export interface PropertyDoc {
  description?: string;
  title?: string;
  /** Extra JSON Schema keywords (e.g. `examples`), applied over the derived ones. */
  schema?: JsonSchema;
}

export interface ClassSchema {
  /** A strict object schema: `additionalProperties: false`, as the validation pipe refuses unknown fields. */
  schema: JsonSchema & { properties: Record<string, JsonSchema>; required?: string[] };
  /** Declared type of each property. */
  types: Record<string, PropertyType>;
}

// Any class whose instances hold the validated fields; abstract ones too (nothing is built from it but its defaults).
export type SchemaClass = abstract new () => object;

const TYPE_OF: Record<string, PropertyType> = {
  isString: 'string',
  isNumber: 'number',
  isInt: 'integer',
  isBoolean: 'boolean',
  isArray: 'array',
  isObject: 'object',
};

const IS_ABSOLUTE_URL = 'isAbsoluteUrl';

const FORMAT_OF: Record<string, string> = {
  isUrl: 'uri',
  [IS_ABSOLUTE_URL]: 'uri',
  isEmail: 'email',
  isUUID: 'uuid',
  isIso8601: 'date-time',
  isDateString: 'date-time',
  isIP: 'ip',
  isFQDN: 'hostname',
};

/**
 * An absolute URL of any scheme, as `new URL()` reads it (JSON Schema `format: uri`). Which schemes
 * a service accepts is its own rule, with its own message.
 */
export function IsAbsoluteUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_ABSOLUTE_URL,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && URL.canParse(value),
        defaultMessage: (args) => `${args?.property} must be an absolute URL, e.g. https://example.com/report.pdf`,
      },
    },
    options,
  );
}

/**
 * The JSON Schema of a class from its class-validator metadata and `docs` (rules are matched by
 * class-validator's own names, e.g. `isLength` for `@Length()`). Only rules with a JSON
 * Schema equivalent are mapped; the others still validate, they are just not described. A property
 * is required unless it is `@IsOptional()` or has a default value (a field initialiser).
 */
export function classSchema(target: SchemaClass, docs: ReadonlyMap<string, PropertyDoc> = new Map()): ClassSchema {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(target as new () => object, '', true, false);
  const defaults = instantiate(target);
  // Inherited fields first, as a reader of the class hierarchy would list them.
  const depth = (owner: unknown) => {
    let n = 0;
    for (let c: unknown = target; c && c !== owner; c = Object.getPrototypeOf(c)) n++;
    return -n;
  };
  const ordered = [...metadata].sort((a, b) => depth(a.target) - depth(b.target));
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const m of ordered) byProperty.set(m.propertyName, [...(byProperty.get(m.propertyName) ?? []), m]);
  for (const name of docs.keys()) if (!byProperty.has(name)) byProperty.set(name, []);

  const properties: Record<string, JsonSchema> = {};
  const types: Record<string, PropertyType> = {};
  const required: string[] = [];
  for (const [name, rules] of byProperty) {
    const doc = docs.get(name);
    const { schema, type, optional } = propertySchema(rules);
    const fallback = defaults[name];
    properties[name] = {
      ...(doc?.title ? { title: doc.title } : {}),
      ...(doc?.description ? { description: doc.description } : {}),
      ...schema,
      ...(fallback !== undefined ? { default: fallback } : {}),
      ...(doc?.schema ?? {}),
    };
    types[name] = type;
    if (!optional && fallback === undefined) required.push(name);
  }
  return {
    schema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    types,
  };
}

/**
 * Flags that change nothing about which strings a pattern matches, as class-validator tests them
 * (`String.prototype.match`, from the start of the string each time): `g` and `d` only change what
 * a match returns, and `u` is how JSON Schema validators read every pattern (Ajv compiles them
 * with it). A pattern without `u` is taken as it is: the two readings differ only around
 * characters outside the Basic Multilingual Plane, which no rule here is about.
 */
const FLAGS_JSON_SCHEMA_HAS = new Set(['g', 'd', 'u']);

/**
 * `pattern` for a `@Matches` rule. JSON Schema's `pattern` has no flags, so a rule whose regex has
 * `i` (ignore case), `m` (^ and $ at line ends), `s` (. matches newlines), `y` (sticky) or `v`
 * (set notation) would mean something else as a bare pattern: it gets no `pattern` at all, and
 * that rule is checked by the service only, rather than described wrongly.
 */
function patternKeyword(pattern: unknown, modifiers: unknown): JsonSchema {
  const regex = pattern instanceof RegExp;
  const source = regex ? pattern.source : String(pattern);
  const flags = regex ? pattern.flags : typeof modifiers === 'string' ? modifiers : '';
  return [...flags].every((flag) => FLAGS_JSON_SCHEMA_HAS.has(flag)) ? { pattern: source } : {};
}

function instantiate(target: SchemaClass): Record<string, unknown> {
  return new (target as new () => object)() as Record<string, unknown>;
}

function propertySchema(rules: ValidationMetadata[]): { schema: JsonSchema; type: PropertyType; optional: boolean } {
  const own: JsonSchema = {};
  const items: JsonSchema = {};
  let optional = false;
  let type: PropertyType = 'unknown';
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
      return { ...enumType(c[0] as unknown[]), enum: [...(c[0] as unknown[])] };
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
    case 'isLength':
      return { minLength: c[0], ...(c[1] !== undefined ? { maxLength: c[1] } : {}) };
    case 'isNotEmpty':
      return { minLength: 1 };
    case 'matches':
      return patternKeyword(c[0], c[1]);
    case 'arrayMinSize':
      return { minItems: c[0] };
    case 'arrayMaxSize':
      return { maxItems: c[0] };
    case 'arrayUnique':
      return { uniqueItems: true };
    case 'isJson':
      return { contentMediaType: 'application/json' };
    default:
      return rule.name && FORMAT_OF[rule.name] ? { format: FORMAT_OF[rule.name] } : {};
  }
}

/** The JSON type of an enum whose values share one, e.g. the items of a list of statuses. */
function enumType(values: unknown[]): JsonSchema {
  const types = new Set(values.map((value) => typeof value));
  return types.size === 1 && (types.has('string') || types.has('number')) ? { type: [...types][0] } : {};
}
