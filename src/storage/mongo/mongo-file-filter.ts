import type { FileField, FileFilter, FilterTest } from '../../domain/file-filter';

/** The document path of each field a filter may name. */
const PATHS: Record<FileField, string> = {
  id: '_id',
  name: 'name',
  type: 'mime',
  size: 'size',
  createdAt: 'createdAt',
  pages: 'pages',
  title: 'title',
  author: 'author',
};

/**
 * A checked filter as a MongoDB query on file documents. Metadata lives under `metadata.<key>`
 * (keys are checked names, never operators); Mongo's own rules give the semantics the SQLite
 * store spells out: a list matches when any item does, comparisons only match values of the
 * bound's BSON type, and `$nor` keeps documents that lack the field. `createdAt` is a BSON date,
 * so its bounds are turned back into dates; metadata dates are ISO text and compare as text.
 */
export function mongoFilter(filter: FileFilter): Record<string, unknown> {
  if (filter.op === 'and') return { $and: filter.of.map(mongoFilter) };
  if (filter.op === 'or') return { $or: filter.of.map(mongoFilter) };
  if (filter.op === 'not') return { $nor: [mongoFilter(filter.of)] };
  const isDate = 'file' in filter.field && filter.field.file === 'createdAt';
  const path = 'file' in filter.field ? PATHS[filter.field.file] : `metadata.${filter.field.metadata}`;
  return { [path]: condition(filter.test, isDate ? (v) => (typeof v === 'string' ? new Date(v) : v) : (v) => v) };
}

function condition(test: FilterTest, value: (v: unknown) => unknown): Record<string, unknown> {
  switch (test.op) {
    case 'eq':
      return { $eq: value(test.value) };
    case 'in':
      return { $in: test.values.map(value) };
    // null counts as absent, as in the SQLite store (pages, title and author are null when unknown).
    case 'exists':
      return test.value ? { $exists: true, $ne: null } : { $in: [null] };
    case 'range': {
      const out: Record<string, unknown> = {};
      if (test.gt !== undefined) out.$gt = value(test.gt);
      if (test.gte !== undefined) out.$gte = value(test.gte);
      if (test.lt !== undefined) out.$lt = value(test.lt);
      if (test.lte !== undefined) out.$lte = value(test.lte);
      return out;
    }
  }
}
