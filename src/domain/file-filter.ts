import { AppError, FieldError } from '../common/app-error';
import { MAX_METADATA_KEY_CHARS, METADATA_KEY, normalisedString } from './file-metadata';

/**
 * Which files a search or a listing keeps, as users write it (JSON):
 *
 *   { "field": "metadata.year", "gte": 2020, "lt": 2024 }
 *   { "and": [ { "field": "type", "in": ["application/pdf"] }, { "not": { "field": "metadata.draft", "eq": true } } ] }
 *
 * A test names a `field` (a file's own: id, name, type, size, createdAt, pages, title, author; or
 * `metadata.<key>`) and one of `eq`, `in`, `exists`, or range bounds (`gt`, `gte`, `lt`, `lte`,
 * combinable). A metadata list matches when any of its items does. A file without the field fails
 * every test but `exists: false`. The stores translate the checked tree, never the raw input.
 */

export const FILE_FIELDS = {
  id: 'string',
  name: 'string',
  type: 'string',
  title: 'string',
  author: 'string',
  size: 'number',
  pages: 'number',
  createdAt: 'date',
} as const;
export type FileField = keyof typeof FILE_FIELDS;

export type FilterScalar = string | number | boolean;
export type FilterField = { file: FileField } | { metadata: string };
export interface RangeBounds {
  gt?: number | string;
  gte?: number | string;
  lt?: number | string;
  lte?: number | string;
}
export type FilterTest =
  | { op: 'eq'; value: FilterScalar }
  | { op: 'in'; values: FilterScalar[] }
  | { op: 'exists'; value: boolean }
  | ({ op: 'range' } & RangeBounds);

export type FileFilter =
  | { op: 'and'; of: FileFilter[] }
  | { op: 'or'; of: FileFilter[] }
  | { op: 'not'; of: FileFilter }
  | { op: 'test'; field: FilterField; test: FilterTest };

/** Operators and tests in one filter. */
export const MAX_FILTER_NODES = 64;
export const MAX_FILTER_DEPTH = 8;
/** Values across every `in` of one filter. */
export const MAX_FILTER_VALUES = 1000;
export const MAX_FILTER_STRING_CHARS = 1024;

const RANGE_KEYS = ['gt', 'gte', 'lt', 'lte'] as const;
const TEST_KEYS = new Set(['field', 'eq', 'in', 'exists', ...RANGE_KEYS]);

/**
 * Checks a filter in one pass over its input (each node and value is looked at once, and the
 * walk stops at the first bound it passes) and returns the checked tree.
 * @throws AppError VALIDATION_FAILED naming the place (`filter.and[1].gte`) and the reason
 */
export function parseFileFilter(input: unknown, field = 'filter'): FileFilter {
  const budget = { nodes: 0, values: 0 };
  const errors: FieldError[] = [];
  const fail = (at: string, reason: string): never => {
    errors.push({ field: at, reason });
    throw AppError.validation(errors);
  };

  const node = (value: unknown, at: string, depth: number): FileFilter => {
    if (++budget.nodes > MAX_FILTER_NODES) fail(field, `may have at most ${MAX_FILTER_NODES} operators and tests`);
    if (depth > MAX_FILTER_DEPTH) fail(at, `nests deeper than ${MAX_FILTER_DEPTH} levels`);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return fail(
        at,
        'must be an object: {"and": [...]}, {"or": [...]}, {"not": {...}} or {"field": ..., "eq"|"in"|"exists"|"gt"|... : ...}',
      );
    }
    const keys = Object.keys(value);
    const record = value as Record<string, unknown>;
    for (const op of ['and', 'or'] as const) {
      if (!(op in record)) continue;
      if (keys.length !== 1) fail(at, `"${op}" stands alone in its object`);
      const list = record[op];
      if (!Array.isArray(list) || list.length === 0) fail(`${at}.${op}`, 'must be a non-empty list of filters');
      const of = (list as unknown[]).map((item, i) => node(item, `${at}.${op}[${i}]`, depth + 1));
      return op === 'and' ? { op, of } : { op, of };
    }
    if ('not' in record) {
      if (keys.length !== 1) fail(at, '"not" stands alone in its object');
      return { op: 'not', of: node(record.not, `${at}.not`, depth + 1) };
    }
    return test(record, keys, at);
  };

  const test = (record: Record<string, unknown>, keys: string[], at: string): FileFilter => {
    const unknown = keys.find((key) => !TEST_KEYS.has(key));
    if (unknown !== undefined)
      fail(`${at}.${unknown}`, 'is not a filter operator; use and, or, not, field, eq, in, exists, gt, gte, lt, lte');
    const target = filterField(record.field, `${at}.field`, fail);
    const kind = 'file' in target ? FILE_FIELDS[target.file] : 'any';
    const ops = keys.filter((key) => key !== 'field');
    if (ops.length === 0) fail(at, 'needs one of eq, in, exists, or range bounds gt, gte, lt, lte');
    const ranged = ops.every((op) => (RANGE_KEYS as readonly string[]).includes(op));
    if (ops.length > 1 && !ranged) fail(at, `takes one of eq, in, exists, or range bounds; it has ${ops.join(', ')}`);
    const op = ops[0];
    if (op === 'exists') {
      if (typeof record.exists !== 'boolean') fail(`${at}.exists`, 'must be true or false');
      return { op: 'test', field: target, test: { op: 'exists', value: record.exists as boolean } };
    }
    if (op === 'eq') return { op: 'test', field: target, test: { op: 'eq', value: scalar(record.eq, kind, `${at}.eq`, fail) } };
    if (op === 'in') {
      const list = record.in;
      if (!Array.isArray(list) || list.length === 0) fail(`${at}.in`, 'must be a non-empty list of values');
      budget.values += (list as unknown[]).length;
      if (budget.values > MAX_FILTER_VALUES) fail(`${at}.in`, `the filter may list at most ${MAX_FILTER_VALUES} values in all`);
      return {
        op: 'test',
        field: target,
        test: { op: 'in', values: (list as unknown[]).map((v, i) => scalar(v, kind, `${at}.in[${i}]`, fail)) },
      };
    }
    const bounds: RangeBounds = {};
    let type: string | undefined;
    for (const key of ops as (typeof RANGE_KEYS)[number][]) {
      const bound = scalar(record[key], kind, `${at}.${key}`, fail);
      if (typeof bound === 'boolean') fail(`${at}.${key}`, 'a range bound must be a number, a string or a date');
      if (type !== undefined && typeof bound !== type) fail(`${at}.${key}`, 'range bounds must all be numbers or all be strings/dates');
      type = typeof bound;
      bounds[key] = bound as number | string;
    }
    return { op: 'test', field: target, test: { op: 'range', ...bounds } };
  };

  return node(input, field, 1);
}

function filterField(value: unknown, at: string, fail: (at: string, reason: string) => never): FilterField {
  const reason = `must be one of ${Object.keys(FILE_FIELDS).join(', ')} or metadata.<key>`;
  if (typeof value !== 'string') return fail(at, reason);
  if (value.startsWith('metadata.')) {
    const key = value.slice('metadata.'.length);
    if (key.length === 0 || key.length > MAX_METADATA_KEY_CHARS || !METADATA_KEY.test(key))
      return fail(at, `names no valid metadata key: ${reason}`);
    return { metadata: key };
  }
  if (!Object.prototype.hasOwnProperty.call(FILE_FIELDS, value)) return fail(at, reason);
  return { file: value as FileField };
}

/** A value to compare with, of the field's type; strings that read as dates normalised as metadata dates are. */
function scalar(value: unknown, kind: string, at: string, fail: (at: string, reason: string) => never): FilterScalar {
  if (kind === 'number') {
    if (typeof value !== 'number' || !Number.isFinite(value)) return fail(at, 'must be a number for this field');
    return value;
  }
  if (kind === 'date') {
    const time = typeof value === 'string' ? Date.parse(normalisedString(value)) : NaN;
    if (Number.isNaN(time)) return fail(at, 'must be an ISO 8601 date, e.g. 2024-05-01 or 2024-05-01T10:00:00Z');
    return new Date(time).toISOString();
  }
  if (typeof value === 'string') {
    if (value.length > MAX_FILTER_STRING_CHARS) return fail(at, `must be at most ${MAX_FILTER_STRING_CHARS} characters`);
    return kind === 'any' ? normalisedString(value) : value;
  }
  if (kind === 'any' && (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))) return value;
  return fail(at, kind === 'string' ? 'must be a string for this field' : 'must be a string, number or boolean');
}
