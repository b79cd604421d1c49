import { AppError, FieldError } from '../common/app-error';

/**
 * What users attach to a file: a flat JSON object whose values are strings, numbers, booleans,
 * dates (ISO 8601 strings, kept as UTC `2024-05-01T00:00:00.000Z` so they order as text) or lists
 * of strings. Search filters and file listings read it; changing it never re-embeds the file.
 */
export type MetadataValue = string | number | boolean | string[];
export type FileMetadata = Record<string, MetadataValue>;

export const MAX_METADATA_KEYS = 64;
export const MAX_METADATA_KEY_CHARS = 64;
export const MAX_METADATA_STRING_CHARS = 1024;
export const MAX_METADATA_LIST_ITEMS = 100;
/** Bytes of the whole object as JSON. */
export const MAX_METADATA_BYTES = 16 * 1024;
/** Keys are plain names: they become JSON paths and Mongo/Elasticsearch field names, never syntax. */
export const METADATA_KEY = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;

/** `2024-05-01`, `2024-05-01T10:00Z`, `2024-05-01T10:00:00.5+02:00`: a date, as JSON cannot say otherwise. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** A string that reads as an ISO 8601 date, as UTC ISO text; any other string as it is. */
export function normalisedString(value: string): string {
  if (!ISO_DATE.test(value)) return value;
  const time = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}

/**
 * Checks user metadata and returns it normalised (dates as UTC ISO text). `field` is how the
 * caller's door names it (`metadata`).
 * @throws AppError VALIDATION_FAILED naming each bad key (`metadata.year`) and why
 */
export function validMetadata(value: unknown, field = 'metadata'): FileMetadata {
  const errors: FieldError[] = [];
  const out = metadataOf(value, field, errors, false);
  if (errors.length) throw AppError.validation(errors);
  return out as FileMetadata;
}

/**
 * Applies a JSON merge patch (RFC 7396) of metadata: a key set to null is removed, any other value
 * replaces the key's. The result is checked as a whole (key count, size).
 * @throws AppError VALIDATION_FAILED naming each bad key
 */
export function patchedMetadata(current: FileMetadata, patch: unknown, field = 'metadata'): FileMetadata {
  const errors: FieldError[] = [];
  const changes = metadataOf(patch, field, errors, true);
  if (errors.length) throw AppError.validation(errors);
  const next: FileMetadata = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  checkTotals(next, field, errors);
  if (errors.length) throw AppError.validation(errors);
  return next;
}

function metadataOf(value: unknown, field: string, errors: FieldError[], allowNull: boolean): Record<string, MetadataValue | null> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.push({ field, reason: 'must be a JSON object of strings, numbers, booleans, dates or lists of strings' });
    return {};
  }
  const out: Record<string, MetadataValue | null> = {};
  const keys = Object.keys(value);
  if (keys.length > MAX_METADATA_KEYS) {
    errors.push({ field, reason: `may have at most ${MAX_METADATA_KEYS} keys; it has ${keys.length}` });
    return {};
  }
  for (const key of keys) {
    const at = `${field}.${key}`;
    if (key.length > MAX_METADATA_KEY_CHARS || !METADATA_KEY.test(key)) {
      errors.push({
        field: at,
        reason: `key must be 1 to ${MAX_METADATA_KEY_CHARS} letters, digits, _ or -, not starting with -`,
      });
      continue;
    }
    const item = (value as Record<string, unknown>)[key];
    const checked = metadataValue(item, at, errors, allowNull);
    if (checked !== undefined) out[key] = checked;
  }
  if (!allowNull) checkTotals(out as FileMetadata, field, errors);
  return out;
}

function metadataValue(item: unknown, at: string, errors: FieldError[], allowNull: boolean): MetadataValue | null | undefined {
  if (item === null && allowNull) return null;
  if (typeof item === 'boolean') return item;
  if (typeof item === 'number') {
    if (Number.isFinite(item)) return item;
    errors.push({ field: at, reason: 'must be a finite number' });
    return undefined;
  }
  if (typeof item === 'string') {
    if (item.length <= MAX_METADATA_STRING_CHARS) return normalisedString(item);
    errors.push({ field: at, reason: `must be at most ${MAX_METADATA_STRING_CHARS} characters` });
    return undefined;
  }
  if (Array.isArray(item)) {
    if (item.length > MAX_METADATA_LIST_ITEMS) {
      errors.push({ field: at, reason: `a list may have at most ${MAX_METADATA_LIST_ITEMS} items` });
      return undefined;
    }
    const bad = item.findIndex((s) => typeof s !== 'string' || s.length > MAX_METADATA_STRING_CHARS);
    if (bad !== -1) {
      errors.push({ field: `${at}[${bad}]`, reason: `a list holds strings of at most ${MAX_METADATA_STRING_CHARS} characters` });
      return undefined;
    }
    return (item as string[]).map(normalisedString);
  }
  errors.push({
    field: at,
    reason:
      typeof item === 'object' && item !== null
        ? 'nested objects are not accepted: use a flat key, e.g. author_name'
        : `must be a string, number, boolean, date or list of strings${allowNull ? ', or null to remove it' : ''}`,
  });
  return undefined;
}

function checkTotals(metadata: FileMetadata, field: string, errors: FieldError[]): void {
  const keys = Object.keys(metadata).length;
  if (keys > MAX_METADATA_KEYS) errors.push({ field, reason: `may have at most ${MAX_METADATA_KEYS} keys; it would have ${keys}` });
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > MAX_METADATA_BYTES) errors.push({ field, reason: `must be at most ${MAX_METADATA_BYTES} bytes as JSON; it is ${bytes}` });
}
