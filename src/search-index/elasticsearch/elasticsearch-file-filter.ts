import type { estypes } from '@elastic/elasticsearch';
import type { FileField, FileFilter, FilterScalar, FilterTest } from '../../domain/file-filter';
import type { FileFields } from '../../domain/vector-index.port';

/**
 * The file fields each unit carries (under `file`), and a checked file filter as an Elasticsearch
 * query on them, in the query DSL's own terms (term, terms, range, exists, nested; bool filter,
 * should, must_not), so the filter goes into `knn.filter` and applies while the graph is walked.
 *
 * Metadata is a `nested` list of {key, s | n | b}: one entry per value (a list gives one per
 * item), its value in the field of its JSON type. The mapping is the same whatever keys users
 * choose (no field per key, so no mapping explosion), and a test reads one entry: a list matches
 * when any item does, and a comparison only matches values of the bound's type, as in the stores.
 * `must_not` keeps units whose file lacks the field, as the stores' `not` does.
 */

/** The mapping of `file`, added to the index's (existing indexes get it by put-mapping). */
export const FILE_FIELDS_MAPPING: estypes.MappingProperty = {
  properties: {
    name: { type: 'keyword' },
    type: { type: 'keyword' },
    title: { type: 'keyword' },
    author: { type: 'keyword' },
    size: { type: 'long' },
    pages: { type: 'long' },
    created_at: { type: 'date' },
    metadata: {
      type: 'nested',
      properties: { key: { type: 'keyword' }, s: { type: 'keyword' }, n: { type: 'double' }, b: { type: 'boolean' } },
    },
  },
};

/** One value of a metadata key, in the field of its type. */
interface MetadataEntry {
  key: string;
  s?: string;
  n?: number;
  b?: boolean;
}

/** What a unit keeps of its file, under `file` (null fields are left out: they do not exist). */
export interface FileFieldsSource {
  name: string;
  type: string;
  size: number;
  pages?: number;
  title?: string;
  author?: string;
  created_at: string;
  metadata: MetadataEntry[];
}

export function fileFieldsSource(fields: FileFields): FileFieldsSource {
  const metadata: MetadataEntry[] = [];
  for (const [key, value] of Object.entries(fields.metadata)) {
    for (const item of Array.isArray(value) ? value : [value]) metadata.push({ key, ...typed(item) });
  }
  return {
    name: fields.name,
    type: fields.type,
    size: fields.size,
    ...(fields.pages !== null ? { pages: fields.pages } : {}),
    ...(fields.title !== null ? { title: fields.title } : {}),
    ...(fields.author !== null ? { author: fields.author } : {}),
    created_at: fields.createdAt.toISOString(),
    metadata,
  };
}

/** The path of a file's own field; `id` is the unit's `file_id`. */
const PATHS: Record<FileField, string> = {
  id: 'file_id',
  name: 'file.name',
  type: 'file.type',
  title: 'file.title',
  author: 'file.author',
  size: 'file.size',
  pages: 'file.pages',
  createdAt: 'file.created_at',
};

export function elasticsearchFileFilter(filter: FileFilter): estypes.QueryDslQueryContainer {
  switch (filter.op) {
    case 'and':
      return { bool: { filter: filter.of.map(elasticsearchFileFilter) } };
    case 'or':
      return { bool: { should: filter.of.map(elasticsearchFileFilter), minimum_should_match: 1 } };
    case 'not':
      return { bool: { must_not: [elasticsearchFileFilter(filter.of)] } };
    case 'test':
      return 'file' in filter.field ? fieldTest(PATHS[filter.field.file], filter.test) : metadataTest(filter.field.metadata, filter.test);
  }
}

function fieldTest(path: string, test: FilterTest): estypes.QueryDslQueryContainer {
  switch (test.op) {
    case 'eq':
      return { term: { [path]: test.value } };
    case 'in':
      return { terms: { [path]: test.values } };
    case 'exists':
      return test.value ? { exists: { field: path } } : { bool: { must_not: [{ exists: { field: path } }] } };
    case 'range':
      return { range: { [path]: bounds(test) } };
  }
}

/** A test of one metadata key: an entry of that key whose value passes. */
function metadataTest(key: string, test: FilterTest): estypes.QueryDslQueryContainer {
  const entry = (value?: estypes.QueryDslQueryContainer): estypes.QueryDslQueryContainer => ({
    nested: {
      path: 'file.metadata',
      query: { bool: { filter: [{ term: { 'file.metadata.key': key } }, ...(value ? [value] : [])] } },
    },
  });
  switch (test.op) {
    case 'eq':
      return entry({ term: { [valuePath(test.value)]: test.value } });
    case 'in': {
      // One terms query per type among the values: 1 and "1" are different values.
      const byPath = new Map<string, FilterScalar[]>();
      for (const value of test.values) byPath.set(valuePath(value), [...(byPath.get(valuePath(value)) ?? []), value]);
      const tests = [...byPath].map(([path, values]) => ({ terms: { [path]: values } }));
      return entry(tests.length === 1 ? tests[0] : { bool: { should: tests, minimum_should_match: 1 } });
    }
    case 'exists':
      return test.value ? entry() : { bool: { must_not: [entry()] } };
    case 'range': {
      const sample = test.gt ?? test.gte ?? test.lt ?? test.lte;
      return entry({ range: { [valuePath(sample!)]: bounds(test) } });
    }
  }
}

function valuePath(value: FilterScalar): string {
  return `file.metadata.${typeof value === 'number' ? 'n' : typeof value === 'boolean' ? 'b' : 's'}`;
}

function typed(value: FilterScalar): Omit<MetadataEntry, 'key'> {
  if (typeof value === 'number') return { n: value };
  if (typeof value === 'boolean') return { b: value };
  return { s: value };
}

function bounds(test: Extract<FilterTest, { op: 'range' }>): estypes.QueryDslUntypedRangeQuery {
  const out: estypes.QueryDslUntypedRangeQuery = {};
  if (test.gt !== undefined) out.gt = test.gt;
  if (test.gte !== undefined) out.gte = test.gte;
  if (test.lt !== undefined) out.lt = test.lt;
  if (test.lte !== undefined) out.lte = test.lte;
  return out;
}
