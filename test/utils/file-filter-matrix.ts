/**
 * The filter cases every place that answers a file filter must answer alike: the file stores
 * (SQLite JSON functions, a Mongo query) and an index that keeps its files' fields (Elasticsearch).
 * Each suite stores these files its own way and passes how it finds the names a filter keeps.
 */

const at = (day: number) => new Date(Date.UTC(2024, 0, day));

/** A file of the matrix: its name, its user metadata and its other fields. */
export interface MatrixFile {
  name: string;
  metadata: Record<string, unknown>;
  fields: { pages?: number; title?: string; author?: string; mime?: string; createdAt: Date };
}

/** Indexed files a, b, c and e (d, in the file stores, is pending: no index holds it). */
export const MATRIX_FILES: MatrixFile[] = [
  {
    name: 'a',
    metadata: { kind: 'contract', year: 2021, tags: ['lease'], signed: '2021-03-04' },
    fields: { pages: 3, title: 'Lease A', createdAt: at(1) },
  },
  { name: 'b', metadata: { kind: 'contract', year: 2023, tags: ['lease', 'renewal'], draft: false }, fields: { createdAt: at(2) } },
  {
    name: 'c',
    metadata: { kind: 'memo', year: 2023.5, draft: true },
    fields: { mime: 'application/pdf', author: 'Ada', createdAt: at(3) },
  },
  { name: 'e', metadata: { year: '2021' }, fields: { createdAt: at(5) } },
];

/** The pending file of the file stores' matrix. */
export const PENDING_FILE: MatrixFile = { name: 'd', metadata: {}, fields: { createdAt: at(4) } };

/** Every case of the matrix over the indexed files: `names` answers the sorted names a filter keeps. */
export async function expectFilterMatrix(names: (filter: unknown) => Promise<string[]>): Promise<void> {
  expect(await names({ field: 'metadata.kind', eq: 'contract' })).toEqual(['a', 'b']);
  expect(await names({ field: 'metadata.year', eq: 2021 })).toEqual(['a']);
  expect(await names({ field: 'metadata.year', eq: '2021' })).toEqual(['e']);
  expect(await names({ field: 'metadata.year', gte: 2022 })).toEqual(['b', 'c']);
  expect(await names({ field: 'metadata.year', in: [2021, '2021'] })).toEqual(['a', 'e']);
  expect(await names({ field: 'metadata.tags', eq: 'renewal' })).toEqual(['b']);
  expect(await names({ field: 'metadata.tags', in: ['lease'] })).toEqual(['a', 'b']);
  expect(await names({ field: 'metadata.draft', eq: false })).toEqual(['b']);
  expect(await names({ field: 'metadata.draft', eq: true })).toEqual(['c']);
  expect(await names({ field: 'metadata.signed', lt: '2022-01-01' })).toEqual(['a']);
  expect(await names({ field: 'metadata.draft', exists: true })).toEqual(['b', 'c']);
  expect(await names({ field: 'metadata.kind', exists: false })).toEqual(['e']);
  expect(await names({ not: { field: 'metadata.draft', eq: true } })).toEqual(['a', 'b', 'e']);
  expect(
    await names({
      or: [
        { field: 'type', eq: 'application/pdf' },
        { field: 'pages', gt: 2 },
      ],
    }),
  ).toEqual(['a', 'c']);
  expect(
    await names({
      and: [
        { field: 'title', exists: false },
        { field: 'author', exists: false },
      ],
    }),
  ).toEqual(['b', 'e']);
  expect(await names({ not: { field: 'title', eq: 'Lease A' } })).toEqual(['b', 'c', 'e']);
  expect(await names({ field: 'createdAt', gte: '2024-01-02', lt: '2024-01-04' })).toEqual(['b', 'c']);
}
