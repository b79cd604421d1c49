import type { FileField, FileFilter, FilterScalar, FilterTest, RangeBounds } from '../../domain/file-filter';

/** The `files` column of each field a filter may name. */
const COLUMNS: Record<FileField, string> = {
  id: 'id',
  name: 'name',
  type: 'mime',
  size: 'size',
  createdAt: 'created_at',
  pages: 'pages',
  title: 'title',
  author: 'author',
};
/** Fields every file has: `exists` on them is a constant. */
const ALWAYS_SET = new Set<FileField>(['id', 'name', 'type', 'size', 'createdAt']);

const OPERATORS: Record<keyof RangeBounds, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

export interface SqlCondition {
  sql: string;
  params: unknown[];
}

/**
 * A checked filter as a condition on `files` rows: every value is a bound parameter and every
 * column or JSON path comes from a fixed map or a key the filter checked against METADATA_KEY.
 * Each test is 0 or 1, never NULL, so `not` keeps files that lack the field. A metadata test
 * walks the key's value with json_each: a scalar is one row, a list one row per item, so a list
 * matches when any item does; the row's JSON type keeps numbers, strings and booleans apart.
 */
export function sqlFilter(filter: FileFilter): SqlCondition {
  const params: unknown[] = [];
  const walk = (node: FileFilter): string => {
    if (node.op === 'and' || node.op === 'or') return `(${node.of.map(walk).join(node.op === 'and' ? ' AND ' : ' OR ')})`;
    if (node.op === 'not') return `NOT ${walk(node.of)}`;
    if ('file' in node.field) return fileTest(COLUMNS[node.field.file], ALWAYS_SET.has(node.field.file), node.test, params);
    return metadataTest(`$."${node.field.metadata}"`, node.test, params);
  };
  const sql = walk(filter);
  return { sql, params };
}

function fileTest(column: string, alwaysSet: boolean, test: FilterTest, params: unknown[]): string {
  switch (test.op) {
    case 'exists':
      return alwaysSet ? (test.value ? '1' : '0') : `(${column} IS ${test.value ? 'NOT ' : ''}NULL)`;
    case 'eq':
      params.push(test.value);
      return `COALESCE(${column} = ?, 0)`;
    case 'in':
      params.push(...test.values);
      return `COALESCE(${column} IN (${test.values.map(() => '?').join(', ')}), 0)`;
    case 'range':
      return `COALESCE(${bounds(column, test, params)}, 0)`;
  }
}

function metadataTest(path: string, test: FilterTest, params: unknown[]): string {
  if (test.op === 'exists') {
    params.push(path);
    return `(json_type(metadata, ?) IS ${test.value ? 'NOT ' : ''}NULL)`;
  }
  params.push(path);
  let where: string;
  if (test.op === 'range') {
    const numeric = typeof (test.gt ?? test.gte ?? test.lt ?? test.lte) === 'number';
    where = `${numeric ? "type IN ('integer', 'real')" : "type = 'text'"} AND ${bounds('value', test, params)}`;
  } else {
    const values = test.op === 'eq' ? [test.value] : test.values;
    where = typedIn(values, params);
  }
  return `EXISTS (SELECT 1 FROM json_each(metadata, ?) WHERE ${where})`;
}

/** `value` equal to one of `values`, each compared within its own JSON type. */
function typedIn(values: readonly FilterScalar[], params: unknown[]): string {
  const strings = values.filter((v): v is string => typeof v === 'string');
  const numbers = values.filter((v): v is number => typeof v === 'number');
  const parts: string[] = [];
  if (strings.length) {
    params.push(...strings);
    parts.push(`(type = 'text' AND value IN (${strings.map(() => '?').join(', ')}))`);
  }
  if (numbers.length) {
    params.push(...numbers);
    parts.push(`(type IN ('integer', 'real') AND value IN (${numbers.map(() => '?').join(', ')}))`);
  }
  if (values.includes(true)) parts.push("type = 'true'");
  if (values.includes(false)) parts.push("type = 'false'");
  return `(${parts.join(' OR ')})`;
}

function bounds(column: string, test: RangeBounds, params: unknown[]): string {
  const parts: string[] = [];
  for (const key of Object.keys(OPERATORS) as (keyof RangeBounds)[]) {
    if (test[key] === undefined) continue;
    params.push(test[key]);
    parts.push(`${column} ${OPERATORS[key]} ?`);
  }
  return `(${parts.join(' AND ')})`;
}
