import { plainToInstance, Type } from 'class-transformer';
import { IsObject, Matches, ValidateNested, ValidationError, validateSync, ValidatorOptions } from 'class-validator';
import { AppError, FieldError } from './app-error';
import { classSchema, ClassSchema, JsonSchema, PropertyDoc, SchemaClass } from './class-schema';

/**
 * The input DTOs both doors share: the REST API validates them with the global pipe, the MCP tools
 * (remote and stdio) with `validateInput`, with the same options, so one rule gives one answer
 * wherever the input comes in. Imports nothing of Nest.
 */

/** Unknown fields are refused rather than dropped, so a typo never silently loses data. */
// forbidUnknownValues off as Nest's pipe has it: a class without rules (a tool without ids) validates empty.
export const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: false,
  validationError: { target: false },
};

/** The one reason given for a required field that is absent, whatever rules it has. */
export const REQUIRED = 'is required';

/**
 * Flattens nested class-validator errors into `{field: 'a.b[0].c', reason}` pairs. A field that is
 * absent gets one reason, `is required`, rather than every rule its absence breaks.
 */
export function fieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? (/^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`) : error.property;
    // The REST pipe drops `value` from errors that have children, so only a leaf's undefined means absent.
    if (error.value === undefined && error.constraints && !error.children?.length) return [{ field, reason: REQUIRED }];
    const own = Object.values(error.constraints ?? {}).map((reason) => ({ field, reason }));
    return [...own, ...fieldErrors(error.children ?? [], field)];
  });
}

/** An object whose own values are all plain (no object a copy would share). */
const holdsPlainValues = (result: unknown): result is object =>
  typeof result === 'object' && result !== null && Object.values(result).every((value) => typeof value !== 'object' || value === null);

/** A copy of `result`, of its class, holding nothing but plain values. */
const copyOf = <T extends object>(result: T): T => Object.assign(Object.create(Object.getPrototypeOf(result) as object) as T, result);

/**
 * DTO classes an empty input was once found valid for, with what it became. What an empty input
 * becomes holds nothing but the class's own defaults, so its validity cannot change: later empty
 * inputs (a webhook call without a query string, a webhook body holding only `input`) skip
 * validation, which costs tens of microseconds on every such request. When those defaults are
 * plain values, later ones skip class-transformer too and get a copy (`copyOf`) of the first
 * result; otherwise (`null` here) the class is built again from `{}` each time.
 */
const VALID_WHEN_EMPTY = new WeakMap<object, object | null>();

/** No own keys (query objects may have no prototype). */
export const isEmptyInput = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

/** `dto` made from an empty input, when that is known to be valid; undefined otherwise. */
export function knownValidWhenEmpty<T extends object>(dto: new () => T, plain: unknown): T | undefined {
  if (!isEmptyInput(plain)) return undefined;
  const made = VALID_WHEN_EMPTY.get(dto);
  if (made === undefined) return undefined;
  return made ? copyOf(made as T) : plainToInstance(dto, {});
}

/** Records that `dto` validated `plain` without errors, becoming `result`, if `plain` was empty. */
export function rememberValid(dto: object, plain: unknown, result: unknown): void {
  if (!isEmptyInput(plain) || VALID_WHEN_EMPTY.has(dto)) return;
  // A copy: the caller is handed `result` itself.
  VALID_WHEN_EMPTY.set(dto, holdsPlainValues(result) ? copyOf(result) : null);
}

/**
 * Query strings once found valid, by DTO class, with what they became. A query is a few strings,
 * and what a DTO makes of them depends on nothing else, so the same query again (a webhook's
 * `?wait=10` on every call) skips the transformation and the validation: about 90 µs of the
 * 1.5 ms of CPU a `?wait` call cost under load. Only results holding nothing but plain values
 * are kept (a copy of one is then a new result), from queries up to QUERY_KEY_CHARS long, and the
 * first QUERIES_KEPT of each class: a caller varying its queries makes no cache grow.
 */
const VALID_QUERIES = new WeakMap<object, Map<string, object>>();
const QUERIES_KEPT = 64;
const QUERY_KEY_CHARS = 512;

/** The key of a query of strings alone (a name given twice makes an array: not kept), or undefined. */
function queryKey(plain: unknown): string | undefined {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) return undefined;
  const entries = Object.entries(plain);
  if (entries.some(([, value]) => typeof value !== 'string')) return undefined;
  const key = JSON.stringify(entries);
  return key.length <= QUERY_KEY_CHARS ? key : undefined;
}

/** A new `dto` like the one the query `plain` once became, when that is known; undefined otherwise. */
export function knownValidQuery<T extends object>(dto: new () => T, plain: unknown): T | undefined {
  const known = VALID_QUERIES.get(dto);
  const key = known && queryKey(plain);
  const result = key === undefined ? undefined : known?.get(key);
  return result && copyOf(result as T);
}

/** Records that the query `plain` became `result`, a valid `dto`, if both can be kept (see VALID_QUERIES). */
export function rememberValidQuery(dto: object, plain: unknown, result: unknown): void {
  if (!holdsPlainValues(result)) return;
  const key = queryKey(plain);
  if (key === undefined) return;
  const known = VALID_QUERIES.get(dto) ?? new Map<string, object>();
  VALID_QUERIES.set(dto, known);
  // A copy: the caller is handed `result` itself.
  if (known.size < QUERIES_KEPT) known.set(key, copyOf(result));
}

/** `plain` as an instance of `dto`, transformed and validated as the REST pipe does it, and what is wrong with it. */
export function checkInput<T extends object>(dto: new () => T, plain: Record<string, unknown>): { value: T; errors: FieldError[] } {
  const known = knownValidWhenEmpty(dto, plain);
  if (known) return { value: known, errors: [] };
  const keyed = prototypeKeyError(plain);
  if (keyed) return { value: plainToInstance(dto, {}), errors: [keyed] };
  const value = plainToInstance(dto, plain);
  const errors = fieldErrors(validateSync(value, VALIDATOR_OPTIONS));
  if (!errors.length) rememberValid(dto, plain, value);
  return { value, errors };
}

/**
 * `plain` as a valid instance of `dto`.
 * @throws AppError VALIDATION_FAILED naming each bad field
 */
export function validateInput<T extends object>(dto: new () => T, plain: Record<string, unknown>): T {
  const { value, errors } = checkInput(dto, plain);
  if (errors.length) throw AppError.validation(errors);
  return value;
}

const PROTOTYPE_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

/** A JSON object, or a query's (fast-querystring's have a prototype that has none), not an instance of a class. */
function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === null || prototype === Object.prototype || Object.getPrototypeOf(prototype) === null;
}

/** An object or array met in a walk, with the entry it is in and its key or index there (null at the top). */
type WalkEntry = [node: object, parent: WalkEntry | null, key: string | number];

/** `key` in the object or array of `entry`, as a field path: `a.b[2].c`. */
function pathOf(entry: WalkEntry, key: string): string {
  const keys: Array<string | number> = [key];
  for (let at: WalkEntry | null = entry; at?.[1]; at = at[1]) keys.push(at[2]);
  let path = '';
  for (let i = keys.length - 1; i >= 0; i--) {
    const part = keys[i];
    path = typeof part === 'number' ? `${path}[${part}]` : path ? `${path}.${part}` : part;
  }
  return path;
}

/**
 * A key named `constructor`, `prototype` or `__proto__` in `value` (a JSON body, a query,
 * a tool's arguments), as the error of its field; undefined when there is none. Nest's validation
 * pipe deletes such keys before class-transformer reads a body (which fails on a `constructor`
 * key), wherever they are: a node parameter or a pinned item named so was dropped without a word.
 * Refused here instead, by both doors. Iterative, in time linear in the value and about as long
 * as JSON.parse took to make it: only objects and arrays are stacked, arrays walked by index, and
 * the path is built only for the key found. Typed arrays and objects of a class (an upload's
 * buffer) are not walked.
 */
export function prototypeKeyError(value: unknown): FieldError | undefined {
  const stack: WalkEntry[] = typeof value === 'object' && value !== null ? [[value, null, '']] : [];
  while (stack.length) {
    const entry = stack.pop()!;
    const node = entry[0];
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'object' && item !== null) stack.push([item, entry, i]);
      }
      continue;
    }
    if (!isPlainObject(node)) continue;
    for (const key in node) {
      if (!Object.prototype.hasOwnProperty.call(node, key)) continue;
      if (PROTOTYPE_KEYS.has(key)) {
        return {
          field: pathOf(entry, key),
          reason: `is a key named "${key}": keys named constructor, prototype or __proto__ are not accepted`,
        };
      }
      const item = (node as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push([item, entry, key]);
    }
  }
  return undefined;
}

/** A name shown in listings holds no control characters (C0, tab and newline among them, and DEL). */
export const NoControlCharacters = (): PropertyDecorator =>
  Matches(/^[^\u0000-\u001f\u007f]*$/, { message: '$property must not contain control characters' });

/**
 * A field holding one object, checked by the rules of `type`. Not ValidateNested alone: given an
 * array, class-validator checks each of its elements instead, so `[]` (or `[{...}]`) would pass
 * and the service would read fields that are not there.
 */
export function NestedObject(type: () => new () => object): PropertyDecorator {
  return (prototype, property) => {
    IsObject()(prototype, property);
    ValidateNested()(prototype, property);
    Type(type)(prototype, property);
  };
}

/** A field holding an array of objects, each checked by the rules of `type` (an array inside it is refused, as for NestedObject). */
export function NestedObjects(type: () => new () => object): PropertyDecorator {
  return (prototype, property) => {
    IsObject({ each: true })(prototype, property);
    ValidateNested({ each: true })(prototype, property);
    Type(type)(prototype, property);
  };
}

/**
 * Counts arrive as strings in query strings (and in the interface's own search example): only
 * whole numbers convert, so anything else is refused as what it is rather than as NaN or 0.
 */
export const wholeNumberFromString = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;

export const trimmed = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? value.trim() : value);

const DOCS = new WeakMap<object, Map<string, PropertyDoc>>();

/**
 * Documents a field of a shared input DTO: its description and any JSON Schema the rules cannot
 * say. The rules themselves (types, lengths, bounds) come from the class-validator decorators.
 */
export function Field(doc: PropertyDoc = {}): PropertyDecorator {
  return (prototype, property) => {
    if (typeof property !== 'string') throw new TypeError('@Field() needs a string property name');
    const docs = DOCS.get(prototype) ?? new Map<string, PropertyDoc>();
    docs.set(property, doc);
    DOCS.set(prototype, docs);
    describeForOpenApi(prototype.constructor as SchemaClass);
  };
}

/** The JSON Schema of a shared input DTO, inherited fields included. */
export function dtoSchema(dto: SchemaClass): ClassSchema {
  const merged = new Map<string, PropertyDoc>();
  const chain: object[] = [];
  for (let proto: object | null = dto.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto))
    chain.unshift(proto);
  for (const proto of chain) for (const [name, doc] of DOCS.get(proto) ?? []) merged.set(name, doc);
  return classSchema(dto, merged);
}

/**
 * @nestjs/swagger reads a class's properties from a static `_OPENAPI_METADATA_FACTORY` when there is
 * one: what its CLI plugin writes at compile time. Giving it the derived schema documents a DTO
 * without importing @nestjs/swagger here, so the API docs show the very rules the DTO enforces.
 */
const OPENAPI_METADATA_FACTORY = '_OPENAPI_METADATA_FACTORY';

function describeForOpenApi(target: SchemaClass): void {
  const own = Object.getOwnPropertyDescriptor(target, OPENAPI_METADATA_FACTORY);
  if ((own?.value as { derived?: true } | undefined)?.derived) return;
  // A factory the CLI plugin compiled in (when `nest build` runs it) keeps what only it knows; the rules win.
  const compiled = typeof own?.value === 'function' ? (own.value as () => Record<string, JsonSchema>) : undefined;
  const factory = Object.assign(() => ({ ...compiled?.(), ...openApiProperties(dtoSchema(target).schema) }), { derived: true as const });
  Object.defineProperty(target, OPENAPI_METADATA_FACTORY, { value: factory, configurable: true, writable: true });
}

/** Any JSON value, in the OpenAPI 3.0 dialect (which has no `null` type, hence `nullable`). */
export const anyJsonValue = (): { oneOf: JsonSchema[]; nullable: true } => ({
  oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'object' }, { type: 'array', items: {} }],
  nullable: true,
});

/** JSON Schema properties as the options of @nestjs/swagger's ApiProperty. */
function openApiProperties(schema: ClassSchema['schema']): Record<string, JsonSchema> {
  const required = new Set(schema.required ?? []);
  return Object.fromEntries(
    Object.entries(schema.properties).map(([name, property]) => {
      const options: JsonSchema = { ...property, required: required.has(name) };
      // A property any JSON value may fill: swagger would otherwise call it an object (its design type).
      if (['type', 'enum', 'oneOf', 'anyOf'].every((keyword) => options[keyword] === undefined)) Object.assign(options, anyJsonValue());
      return [name, options];
    }),
  );
}
