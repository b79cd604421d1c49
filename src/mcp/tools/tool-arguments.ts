import { getMetadataStorage, isString, length } from 'class-validator';
import { AppError, FieldError } from '../../common/app-error';
import type { JsonSchema } from '../../common/class-schema';
import { checkInput, dtoSchema } from '../../common/input-validation';

/**
 * A tool's arguments, checked by the same DTO classes the REST API validates. The interface fixes
 * the argument names (INTERFACE.md 4.2: `query`, not the REST body's `text`); this is the one place
 * where they map onto the DTO fields, both ways: arguments in, field errors back out by the
 * argument's name. The published JSON Schema is derived from the same classes.
 */
export interface ToolArguments<Args> {
  /** The `inputSchema` of tools/list: a strict object of the interface's argument names. */
  readonly schema: { type: 'object'; properties: Record<string, JsonSchema>; required?: string[]; additionalProperties: false };
  /**
   * The arguments, validated and typed.
   * @throws AppError VALIDATION_FAILED naming each bad argument
   */
  parse(args: Record<string, unknown>): Args;
}

type Class<T> = new () => T;

export interface ToolArgumentsSpec<Ref extends object, Input extends object> {
  /** Ids the REST API carries in its path (collection_id, file_id), with their interface names. */
  ref?: Class<Ref>;
  /** The shared input DTO the REST API validates as its body or query. */
  input?: Class<Input>;
  /** Argument name -> DTO field, for the fields the tool offers; the others keep their defaults. */
  names?: Record<string, keyof Input & string>;
  /** What a model is told about an argument, where the DTO's REST wording does not fit. */
  descriptions?: Record<string, string>;
}

const NO_INPUT = class {};

/** class-validator's own checks, by the name its metadata gives a rule, with the rule's constraints. */
const QUICK_RULES: Record<string, (constraints: unknown[]) => (value: unknown) => boolean> = {
  isString: () => (value) => isString(value),
  isLength:
    ([min, max]) =>
    (value) =>
      typeof value === 'string' && length(value, min as number, max as number | undefined),
};

/**
 * The rules of the id classes (`ref`) checked without class-validator's machinery, which costs more
 * than the rest of a tool call's own work: for a class whose every rule is one of QUICK_RULES
 * (class-validator's own functions, with the rule's constraints), every property required and
 * nothing transformed, true means class-validator finds nothing wrong either. Anything else (a
 * value to refuse, words to refuse it with) goes through class-validator. Undefined for a class
 * with any other rule.
 */
function quickCheck(target: Class<object>): ((plain: Record<string, unknown>) => boolean) | undefined {
  const rules = new Map<string, ((value: unknown) => boolean)[]>();
  for (const meta of getMetadataStorage().getTargetValidationMetadatas(target, '', true, false)) {
    const rule = QUICK_RULES[meta.name ?? '']?.(meta.constraints ?? []);
    if (!rule || meta.each || meta.groups?.length) return undefined;
    rules.set(meta.propertyName, [...(rules.get(meta.propertyName) ?? []), rule]);
  }
  const checks = [...rules];
  return (plain) => {
    let given = 0;
    for (const [property, propertyRules] of checks) {
      const value = plain[property];
      if (value === undefined || !propertyRules.every((rule) => rule(value))) return false;
      given++;
    }
    return given === Object.keys(plain).length;
  };
}

/** Builds the arguments of one tool: `{...ids, input}`, where `input` is an instance of the DTO. */
export function toolArguments<Ref extends object = object, Input extends object = object>(
  spec: ToolArgumentsSpec<Ref, Input>,
): ToolArguments<Ref & { input: Input }> {
  const ref = (spec.ref ?? NO_INPUT) as Class<Ref>;
  const input = (spec.input ?? NO_INPUT) as Class<Input>;
  const names = spec.names ?? {};
  const refSchema = dtoSchema(ref).schema;
  const inputSchema = dtoSchema(input).schema;
  const argumentOf = new Map(Object.entries(names).map(([argument, field]) => [field as string, argument]));
  const refPasses = spec.ref ? quickCheck(ref) : undefined;

  const hidden = (inputSchema.required ?? []).filter((field) => !argumentOf.has(field));
  if (hidden.length) throw new Error(`${input.name}: required fields ${hidden.join(', ')} need an argument name`);

  const properties: Record<string, JsonSchema> = { ...refSchema.properties };
  const required = [...(refSchema.required ?? [])];
  for (const [argument, field] of Object.entries(names)) {
    const property = inputSchema.properties[field];
    if (!property) throw new Error(`${input.name} has no validated field ${field}`);
    properties[argument] = interfaceTypes(property);
    if (inputSchema.required?.includes(field)) required.push(argument);
  }
  for (const [argument, description] of Object.entries(spec.descriptions ?? {})) {
    if (!properties[argument]) throw new Error(`no argument ${argument} to describe`);
    properties[argument] = { ...properties[argument], description };
  }
  const schema = { type: 'object' as const, properties, ...(required.length ? { required } : {}), additionalProperties: false as const };

  return {
    schema,
    parse(args) {
      const refPart: Record<string, unknown> = {};
      const inputPart: Record<string, unknown> = {};
      const unknown: FieldError[] = [];
      for (const [argument, value] of Object.entries(args)) {
        if (Object.prototype.hasOwnProperty.call(refSchema.properties, argument)) refPart[argument] = value;
        else if (Object.prototype.hasOwnProperty.call(names, argument)) inputPart[names[argument]] = value;
        // Worded as the validation pipe words an unknown field of a REST body.
        else unknown.push({ field: argument, reason: `property ${argument} should not exist` });
      }
      // A tool without ids or without a DTO skips that part: nothing of it can be there to check.
      const refs = !spec.ref
        ? { value: {} as Ref, errors: [] }
        : refPasses?.(refPart)
          ? { value: Object.assign(new ref(), refPart), errors: [] }
          : checkInput(ref, refPart);
      const fields = spec.input ? checkInput(input, inputPart) : { value: {} as Input, errors: [] };
      const errors = [...refs.errors, ...fields.errors.map((error) => renamed(error, argumentOf)), ...unknown];
      if (errors.length) throw AppError.validation(errors, 'Invalid arguments');
      return Object.assign(refs.value, { input: fields.value });
    },
  };
}

/** A field error of the DTO as the error of the argument it came in as. */
function renamed(error: FieldError, argumentOf: ReadonlyMap<string, string>): FieldError {
  const [field, rest] = splitPath(error.field);
  const argument = argumentOf.get(field) ?? field;
  // class-validator's messages start with the field's name: they must speak of the argument.
  const reason = error.reason.startsWith(`${field} `) ? `${argument}${error.reason.slice(field.length)}` : error.reason;
  return { field: argument + rest, reason };
}

function splitPath(path: string): [string, string] {
  const end = path.search(/[.[]/);
  return end === -1 ? [path, ''] : [path.slice(0, end), path.slice(end)];
}

/**
 * INTERFACE.md 4.2 types the counts as `number`: a whole number is said with `multipleOf` rather
 * than as JSON Schema's `integer`, so the declared type is the interface's.
 */
function interfaceTypes(property: JsonSchema): JsonSchema {
  return property.type === 'integer' ? { ...property, type: 'number', multipleOf: 1 } : property;
}
