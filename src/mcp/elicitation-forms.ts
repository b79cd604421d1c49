import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import type { FieldError } from '../common/app-error';
import type { ApprovalDecision, ToolRunApproval } from './mcp-backend.port';

/**
 * The forms this server asks a client's user to fill in (MCP elicitation, form mode): an approval's
 * decision with the fields the approval asks for, and the arguments a workflow tool call lacks. The
 * specification restricts a form to a flat object of primitive fields; a schema that cannot be said
 * that way gets no form (the caller gets the approval link, or the refusal, instead).
 */

type Schema = Record<string, unknown>;
type FormSchema = ElicitRequestFormParams['requestedSchema'];
type FormProperty = FormSchema['properties'][string];

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const STRING_FORMATS = new Set(['email', 'uri', 'date', 'date-time']);
const pick = (schema: Schema, keys: string[]) =>
  Object.fromEntries(keys.filter((key) => schema[key] !== undefined).map((key) => [key, schema[key]]));

/** One property as a form field, or undefined when the form cannot hold it. */
function formField(schema: unknown): FormProperty | undefined {
  if (!isObject(schema)) return undefined;
  const text = pick(schema, ['title', 'description']);
  const stringsOnly = (values: unknown) => Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === 'string');
  switch (schema.type) {
    case 'string':
      if (schema.enum !== undefined)
        return stringsOnly(schema.enum) ? ({ type: 'string', ...text, ...pick(schema, ['enum', 'default']) } as FormProperty) : undefined;
      if (schema.format !== undefined && !STRING_FORMATS.has(schema.format as string)) return undefined;
      return { type: 'string', ...text, ...pick(schema, ['format', 'minLength', 'maxLength', 'default']) } as FormProperty;
    case 'number':
    case 'integer':
      return { type: schema.type, ...text, ...pick(schema, ['minimum', 'maximum', 'default']) } as FormProperty;
    case 'boolean':
      return { type: 'boolean', ...text, ...pick(schema, ['default']) } as FormProperty;
    case 'array':
      if (!isObject(schema.items) || schema.items.type !== 'string' || !stringsOnly(schema.items.enum)) return undefined;
      return {
        type: 'array',
        ...text,
        items: { type: 'string', enum: schema.items.enum },
        ...pick(schema, ['minItems', 'maxItems', 'default']),
      } as FormProperty;
    default:
      return undefined;
  }
}

/** The properties of an object schema as form fields, or undefined when one of them cannot be a field. */
function formFields(
  schema: Schema | null,
  only?: ReadonlySet<string>,
): { properties: Record<string, FormProperty>; required: string[] } | undefined {
  if (!schema) return { properties: {}, required: [] };
  if (schema.type !== 'object' || (schema.properties !== undefined && !isObject(schema.properties))) return undefined;
  const properties: Record<string, FormProperty> = {};
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Schema)) {
    if (only && !only.has(name)) continue;
    const field = formField(property);
    if (!field) return undefined;
    properties[name] = field;
  }
  const required = (Array.isArray(schema.required) ? (schema.required as unknown[]) : []).filter(
    (name): name is string => typeof name === 'string' && name in properties,
  );
  return { properties, required };
}

const DECISION = 'decision';
const COMMENT = 'comment';

/** The form deciding an approval: approve or reject, a comment, and the fields the approval asks for. */
export function approvalForm(approval: ToolRunApproval, notice?: string): ElicitRequestFormParams | undefined {
  const fields = formFields(approval.fields);
  if (!fields || DECISION in fields.properties || COMMENT in fields.properties) return undefined;
  return {
    mode: 'form',
    message: `${notice ? `${notice} ` : ''}Approval needed: ${approval.summary}\nApprove or reject (it times out at ${approval.expiresAt}).`,
    requestedSchema: {
      type: 'object',
      properties: {
        // A plain enum: every revision's form schema (and every client) reads it.
        [DECISION]: { type: 'string', title: 'Decision', enum: ['approved', 'rejected'], default: 'approved' } as FormProperty,
        [COMMENT]: { type: 'string', title: 'Comment', description: 'Why (optional)', maxLength: 2000 },
        ...fields.properties,
      },
      required: [DECISION, ...fields.required],
    },
  };
}

/**
 * The decision an answer to the approval form takes: accept decides as chosen (with the fields),
 * decline rejects, cancel (the user dismissed the form) decides nothing.
 */
export function decisionOf(answer: unknown, approval: ToolRunApproval): ApprovalDecision | 'dismissed' | undefined {
  if (!isObject(answer)) return undefined;
  if (answer.action === 'cancel') return 'dismissed';
  if (answer.action === 'decline') return { decision: 'rejected' };
  if (answer.action !== 'accept') return undefined;
  const content = isObject(answer.content) ? answer.content : {};
  const asked = new Set(Object.keys(isObject(approval.fields?.properties) ? (approval.fields.properties as Schema) : {}));
  const fields = Object.fromEntries(Object.entries(content).filter(([name]) => asked.has(name)));
  const comment = typeof content[COMMENT] === 'string' && content[COMMENT].trim() ? content[COMMENT].trim() : undefined;
  return {
    decision: content[DECISION] === 'rejected' ? 'rejected' : 'approved',
    ...(approval.fields ? { fields } : {}),
    ...(comment ? { comment } : {}),
  };
}

/**
 * The form asking for the arguments a workflow tool call lacks or got wrong (the top-level ones its
 * input schema names), or undefined when a problem lies deeper or a field cannot be a form field.
 */
export function argumentsForm(tool: string, inputSchema: Schema, problems: readonly FieldError[]): ElicitRequestFormParams | undefined {
  const names = new Set<string>();
  for (const problem of problems) {
    const name = problem.field.split(/[./[]/)[0];
    const properties = isObject(inputSchema.properties) ? inputSchema.properties : {};
    if (!name || name === '(arguments)' || !(name in properties)) return undefined;
    names.add(name);
  }
  if (names.size === 0) return undefined;
  const fields = formFields(inputSchema, names);
  if (!fields) return undefined;
  return {
    mode: 'form',
    message: `${tool} needs: ${problems.map((p) => `${p.field} ${p.reason}`).join('; ')}`,
    requestedSchema: { type: 'object', properties: fields.properties, required: [...names].filter((n) => n in fields.properties) },
  };
}
