import { Client, errors } from '@elastic/elasticsearch';
import Mock, { MockPattern } from '@elastic/elasticsearch-mock';
import { AppError, ErrorCode } from '../../common/app-error';
import { IndexUnit } from '../../domain/vector-index.port';
import { parseFileFilter } from '../../domain/file-filter';
import { ElasticsearchVectorIndex } from './elasticsearch-vector-index.adapter';

/**
 * Request and response shapes against a mocked Elasticsearch: what the adapter sends and how it
 * reads answers. Behaviour against a real cluster is the contract suite's job (ELASTICSEARCH_URL).
 */
const INDEX = 'units-test';
const FILE_FIELDS = {
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

interface Recorded {
  method: string;
  path: string;
  querystring: Record<string, string>;
  body: unknown;
}

function setup(
  options: {
    dimension?: number;
    collectionDimension?: number;
    indexExists?: boolean;
    /** False: the index maps no file fields (one created before units kept them). */
    fileMapped?: boolean;
    vectorIndexType?: 'hnsw' | 'int8_hnsw' | 'bbq_hnsw';
  } = {},
) {
  const mock = new Mock();
  const requests: Recorded[] = [];
  const on = (method: string, path: string, answer: (params: MockPattern) => Record<string, unknown> | errors.ResponseError) =>
    mock.add({ method, path }, (params) => {
      requests.push({ method, path: params.path as string, querystring: params.querystring ?? {}, body: params.body });
      return answer(params);
    });

  on('HEAD', `/${INDEX}`, () =>
    options.indexExists ? {} : new errors.ResponseError({ body: {}, statusCode: 404, headers: {}, warnings: [], meta: {} as never }),
  );
  on('PUT', `/${INDEX}`, () => ({ acknowledged: true }));
  on('GET', `/${INDEX}/_mapping`, () => ({
    [INDEX]: {
      mappings: {
        ...(options.fileMapped !== false ? { _meta: { units_keep_file_fields: true } } : {}),
        properties: { vector_16: { type: 'dense_vector' }, ...(options.fileMapped !== false ? { file: { properties: {} } } : {}) },
      },
    },
  }));
  on('PUT', `/${INDEX}/_mapping`, () => ({ acknowledged: true }));
  on('POST', `/${INDEX}/_search`, (params) => {
    const body = params.body as { knn?: unknown; query?: { bool?: { must?: unknown } }; script_fields?: unknown };
    if (body.script_fields) {
      // Script fields come back as a list of values; a vector is one value, an array.
      return hits([
        { _id: 'psg_1_0', _score: 0, _source: { passage_id: 'psg_1' }, fields: { vector: [[0.6, 0.8, 0]] } },
        { _id: 'psg_1_1', _score: 0, _source: { passage_id: 'psg_1' }, fields: { vector: [[0, 0, 1]] } },
        { _id: 'psg_2_0', _score: 0, _source: { passage_id: 'psg_2' }, fields: { vector: [1, 0, 0] } },
      ]);
    }
    if (body.knn) {
      return hits([
        { _id: 'unt_near', _score: 0.95, _source: { passage_id: 'psg_1', file_id: 'fle_1' } },
        { _id: 'unt_far', _score: 0.5, _source: { passage_id: 'psg_2', file_id: 'fle_2' } },
      ]);
    }
    if (body.query?.bool?.must) {
      return hits([{ _id: 'unt_text', _score: 3.25, _source: { passage_id: 'psg_3', file_id: 'fle_3' } }]);
    }
    // The collection-dimension probe.
    return hits(options.collectionDimension ? [{ _id: 'unt_any', _score: 0, _source: { dimension: options.collectionDimension } }] : []);
  });
  on('POST', '/_bulk', () => ({ took: 1, errors: false, items: [] }));
  on('POST', `/${INDEX}/_delete_by_query`, () => ({ deleted: 2 }));
  on('POST', `/${INDEX}/_count`, () => ({ count: 7 }));
  on('POST', `/${INDEX}/_update_by_query`, () => ({ updated: 3, failures: [] }));

  const client = new Client({ node: 'http://localhost:9200', Connection: mock.getConnection() });
  const index = new ElasticsearchVectorIndex(client, {
    index: INDEX,
    dimension: options.dimension,
    vectorIndexType: options.vectorIndexType,
  });
  const sent = (method: string, path: string) => requests.filter((r) => r.method === method && r.path === path);
  return { mock, index, requests, sent, on };
}

function hits(list: unknown[]) {
  return {
    took: 1,
    timed_out: false,
    _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
    hits: { total: { value: list.length, relation: 'eq' }, hits: list },
  };
}

const unit = (id: string, vector: number[], collectionId = 'col_1'): IndexUnit => ({
  id,
  collectionId,
  fileId: 'fle_1',
  passageId: 'psg_1',
  text: 'the unit text',
  vector: Float32Array.from(vector),
});

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('ElasticsearchVectorIndex (mocked Elasticsearch)', () => {
  it('init creates the index with an explicit strict mapping and maps the configured dimension (mock)', async () => {
    const { index, sent } = setup({ dimension: 512 });
    await index.init();

    const [create] = sent('PUT', `/${INDEX}`);
    expect(create.body).toEqual({
      mappings: {
        dynamic: 'strict',
        _meta: { units_keep_file_fields: true },
        _source: { excludes: ['vector_*'] },
        properties: {
          collection_id: { type: 'keyword' },
          file_id: { type: 'keyword' },
          passage_id: { type: 'keyword' },
          dimension: { type: 'integer' },
          text: { type: 'text', analyzer: 'english' },
          file: FILE_FIELDS,
        },
      },
    });
    expect(sent('PUT', `/${INDEX}/_mapping`).map((r) => r.body)).toEqual([
      {
        properties: {
          vector_512: {
            type: 'dense_vector',
            dims: 512,
            index: true,
            similarity: 'cosine',
            index_options: { type: 'int8_hnsw', m: 16, ef_construction: 100 },
          },
        },
      },
    ]);
  });

  it('init leaves an existing index alone and remembers its vector fields (mock)', async () => {
    const { index, sent } = setup({ indexExists: true, dimension: 16 });
    await index.init();
    expect(sent('PUT', `/${INDEX}`)).toHaveLength(0);
    expect(sent('PUT', `/${INDEX}/_mapping`)).toHaveLength(0);
  });

  it('init adds the file fields to an index created before units kept them (mock)', async () => {
    const { index, sent } = setup({ indexExists: true, dimension: 16, fileMapped: false });
    await index.init();
    expect(sent('PUT', `/${INDEX}`)).toHaveLength(0);
    expect(sent('PUT', `/${INDEX}/_mapping`).map((r) => r.body)).toEqual([{ properties: { file: FILE_FIELDS } }]);
    // Its units lack the fields: filters keep reaching it as file ids.
    expect(index.filtersFileFields).toBe(false);
  });

  it("setFileFields replaces the file's fields on its units by query, with refresh, metadata as typed entries (mock)", async () => {
    const { index, sent } = setup();
    await index.init();
    expect(index.filtersFileFields).toBe(true);
    await index.setFileFields('col_1', 'fle_1', {
      name: 'report.pdf',
      type: 'application/pdf',
      size: 1234,
      pages: 3,
      title: null,
      author: 'Ada',
      createdAt: new Date('2024-05-01T10:00:00Z'),
      metadata: { year: 2021, draft: false, tags: ['a', 'b'], source: 'web' },
    });
    const [update] = sent('POST', `/${INDEX}/_update_by_query`);
    expect(update.querystring).toEqual({ refresh: 'true' });
    expect(update.body).toEqual({
      query: { bool: { filter: [{ term: { collection_id: 'col_1' } }, { term: { file_id: 'fle_1' } }] } },
      script: {
        lang: 'painless',
        source: 'ctx._source.file = params.file',
        params: {
          file: {
            name: 'report.pdf',
            type: 'application/pdf',
            size: 1234,
            pages: 3,
            author: 'Ada',
            created_at: '2024-05-01T10:00:00.000Z',
            metadata: [
              { key: 'year', n: 2021 },
              { key: 'draft', b: false },
              { key: 'tags', s: 'a' },
              { key: 'tags', s: 'b' },
              { key: 'source', s: 'web' },
            ],
          },
        },
      },
    });
  });

  it('translates a file filter into a bool query in knn.filter and beside the text query, with no file ids (mock)', async () => {
    const { index, sent } = setup({ collectionDimension: 2 });
    await index.init();
    const files = parseFileFilter({
      and: [
        { field: 'type', in: ['application/pdf', 'text/plain'] },
        { field: 'metadata.year', gte: 2020, lt: 2024 },
        {
          or: [
            { field: 'metadata.source', eq: 'web' },
            { field: 'metadata.tags', in: ['a', 1] },
          ],
        },
        { not: { field: 'metadata.draft', eq: true } },
        { field: 'metadata.reviewed', exists: false },
        { field: 'createdAt', gte: '2024-01-01' },
        { field: 'title', exists: true },
        { field: 'id', eq: 'fle_1' },
      ],
    });
    await index.searchVector('col_1', Float32Array.from([1, 0]), 10, { files });
    await index.searchText('col_1', 'zebra', 5, { files });
    const entry = (key: string, value?: unknown) => ({
      nested: { path: 'file.metadata', query: { bool: { filter: [{ term: { 'file.metadata.key': key } }, ...(value ? [value] : [])] } } },
    });
    const expected = [
      { term: { collection_id: 'col_1' } },
      {
        bool: {
          filter: [
            { terms: { 'file.type': ['application/pdf', 'text/plain'] } },
            entry('year', { range: { 'file.metadata.n': { gte: 2020, lt: 2024 } } }),
            {
              bool: {
                should: [
                  entry('source', { term: { 'file.metadata.s': 'web' } }),
                  entry('tags', {
                    bool: {
                      should: [{ terms: { 'file.metadata.s': ['a'] } }, { terms: { 'file.metadata.n': [1] } }],
                      minimum_should_match: 1,
                    },
                  }),
                ],
                minimum_should_match: 1,
              },
            },
            { bool: { must_not: [entry('draft', { term: { 'file.metadata.b': true } })] } },
            { bool: { must_not: [entry('reviewed')] } },
            { range: { 'file.created_at': { gte: '2024-01-01T00:00:00.000Z' } } },
            { exists: { field: 'file.title' } },
            { term: { file_id: 'fle_1' } },
          ],
        },
      },
    ];
    const bodies = sent('POST', `/${INDEX}/_search`).map(
      (r) => r.body as { knn?: { filter: unknown }; query?: { bool: { filter: unknown } } },
    );
    expect(bodies.find((b) => b.knn)!.knn!.filter).toEqual(expected);
    expect(bodies.find((b) => b.query?.bool && 'must' in b.query.bool)!.query!.bool.filter).toEqual(expected);
  });

  it('upsert maps a new dimension, then bulk-indexes units by id with refresh=wait_for (mock)', async () => {
    const { index, sent } = setup();
    await index.init();
    await index.upsert([unit('unt_a', [0.5, 0.25, 0, 1]), unit('unt_b', [1, 0, 0, 0])]);

    expect(sent('PUT', `/${INDEX}/_mapping`)[0].body).toMatchObject({ properties: { vector_4: { dims: 4 } } });
    const [bulk] = sent('POST', '/_bulk');
    expect(bulk.querystring).toEqual({ refresh: 'wait_for' });
    expect(bulk.body).toEqual([
      { index: { _index: INDEX, _id: 'unt_a' } },
      { collection_id: 'col_1', file_id: 'fle_1', passage_id: 'psg_1', dimension: 4, text: 'the unit text', vector_4: [0.5, 0.25, 0, 1] },
      { index: { _index: INDEX, _id: 'unt_b' } },
      { collection_id: 'col_1', file_id: 'fle_1', passage_id: 'psg_1', dimension: 4, text: 'the unit text', vector_4: [1, 0, 0, 0] },
    ]);
  });

  it('upsert probes the collection dimension without the units it replaces (mock)', async () => {
    const { index, sent } = setup();
    await index.init();
    await index.upsert([unit('unt_a', [1, 0])]);

    const [probe] = sent('POST', `/${INDEX}/_search`);
    expect(probe.body).toEqual({
      size: 1,
      query: { bool: { filter: { term: { collection_id: 'col_1' } }, must_not: { ids: { values: ['unt_a'] } } } },
      _source: ['dimension'],
    });
  });

  it('upsert refuses another dimension than the collection has, sending no bulk (mock)', async () => {
    const { index, sent } = setup({ collectionDimension: 8 });
    await index.init();
    const error = await rejection(index.upsert([unit('unt_a', [1, 0, 0, 0])]));
    expect(error.code).toBe(ErrorCode.EMBEDDING_MISMATCH);
    expect(sent('POST', '/_bulk')).toHaveLength(0);
  });

  it('searchVector sends a filtered kNN query and turns cosine scores into distances (mock)', async () => {
    const { index, sent } = setup({ collectionDimension: 3 });
    await index.init();
    const result = await index.searchVector('col_1', Float32Array.from([0, 1, 0]), 50);

    const knnRequest = sent('POST', `/${INDEX}/_search`).find((r) => (r.body as { knn?: unknown }).knn);
    expect(knnRequest!.body).toEqual({
      knn: {
        field: 'vector_3',
        query_vector: [0, 1, 0],
        k: 50,
        num_candidates: 500,
        filter: { term: { collection_id: 'col_1' } },
        rescore_vector: { oversample: 2 },
      },
      size: 50,
      _source: ['passage_id', 'file_id'],
    });
    expect(result).toEqual([
      { unitId: 'unt_near', passageId: 'psg_1', fileId: 'fle_1', distance: expect.closeTo(0.1, 6) },
      { unitId: 'unt_far', passageId: 'psg_2', fileId: 'fle_2', distance: expect.closeTo(1, 6) },
    ]);
  });

  it('searchVector restricts the kNN to the filter files through knn.filter, and an empty filter asks nothing (mock)', async () => {
    const { index, sent } = setup({ collectionDimension: 2 });
    await index.init();
    await index.searchVector('col_1', Float32Array.from([1, 0]), 10, { fileIds: ['fle_1', 'fle_9'] });
    const knn = sent('POST', `/${INDEX}/_search`)
      .map((r) => (r.body as { knn?: { filter: unknown; num_candidates: number } }).knn)
      .find(Boolean);
    expect(knn!.filter).toEqual([{ term: { collection_id: 'col_1' } }, { terms: { file_id: ['fle_1', 'fle_9'] } }]);
    expect(knn!.num_candidates).toBe(100);

    const before = sent('POST', `/${INDEX}/_search`).length;
    expect(await index.searchVector('col_1', Float32Array.from([1, 0]), 10, { fileIds: [] })).toEqual([]);
    expect(await index.searchText('col_1', 'zebra', 10, { fileIds: [] })).toEqual([]);
    expect(sent('POST', `/${INDEX}/_search`)).toHaveLength(before);
  });

  it('passageVectors reads the units of the passages with their vectors as a script field, by passage (mock)', async () => {
    const { index, sent } = setup({ collectionDimension: 3 });
    await index.init();
    const vectors = await index.passageVectors('col_1', ['psg_1', 'psg_2', 'psg_1']);
    expect([...vectors.keys()]).toEqual(['psg_1', 'psg_2']);
    expect(vectors.get('psg_1')!.map((v) => Array.from(v))).toEqual([
      [expect.closeTo(0.6, 6), expect.closeTo(0.8, 6), 0],
      [0, 0, 1],
    ]);
    expect(vectors.get('psg_2')!.map((v) => Array.from(v))).toEqual([[1, 0, 0]]);
    const request = sent('POST', `/${INDEX}/_search`).find((r) => (r.body as { script_fields?: unknown }).script_fields);
    expect(request!.body).toEqual({
      size: 10_000,
      query: { bool: { filter: [{ term: { collection_id: 'col_1' } }, { terms: { passage_id: ['psg_1', 'psg_2'] } }] } },
      _source: ['passage_id'],
      script_fields: { vector: { script: { source: 'doc[params.field].vectorValue', params: { field: 'vector_3' } } } },
    });
  });

  it('passageVectors asks nothing for no passages or an empty collection, and refuses too many passages (mock)', async () => {
    const { index, sent } = setup();
    await index.init();
    expect((await index.passageVectors('col_1', [])).size).toBe(0);
    expect((await index.passageVectors('col_1', ['psg_1'])).size).toBe(0);
    expect(sent('POST', `/${INDEX}/_search`).filter((r) => (r.body as { script_fields?: unknown }).script_fields)).toHaveLength(0);
    const error = await rejection(
      index.passageVectors(
        'col_1',
        Array.from({ length: 1_025 }, (_, i) => `psg_${i}`),
      ),
    );
    expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
  });

  it('searchText applies the same filter beside the collection (mock)', async () => {
    const { index, sent } = setup();
    await index.init();
    await index.searchText('col_1', 'zebra', 5, { fileIds: ['fle_3'] });
    const body = sent('POST', `/${INDEX}/_search`)[0].body as { query: { bool: { filter: unknown } } };
    expect(body.query.bool.filter).toEqual([{ term: { collection_id: 'col_1' } }, { terms: { file_id: ['fle_3'] } }]);
  });

  it('refuses a filter naming more files than a terms query takes, before asking the cluster (mock)', async () => {
    const { index, sent } = setup({ collectionDimension: 2 });
    await index.init();
    const fileIds = Array.from({ length: 65_537 }, (_, i) => `fle_${i}`);
    const error = await rejection(index.searchVector('col_1', Float32Array.from([1, 0]), 10, { fileIds }));
    expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
    expect(error.details).toEqual({ fields: [{ field: 'filter', reason: expect.stringContaining('65536') }] });
    expect(sent('POST', `/${INDEX}/_search`).filter((r) => (r.body as { knn?: unknown }).knn)).toHaveLength(0);
  });

  it('maps bbq_hnsw when chosen and re-scores its 1-bit candidates three times over (mock)', async () => {
    const { index, sent } = setup({ dimension: 512, collectionDimension: 512, vectorIndexType: 'bbq_hnsw' });
    await index.init();
    const [mapping] = sent('PUT', `/${INDEX}/_mapping`).map((r) => r.body as { properties: Record<string, { index_options: unknown }> });
    expect(mapping.properties.vector_512.index_options).toEqual({ type: 'bbq_hnsw', m: 16, ef_construction: 100 });
    await index.searchVector('col_1', new Float32Array(512).fill(1), 10);
    const knn = sent('POST', `/${INDEX}/_search`)
      .map((r) => (r.body as { knn?: { rescore_vector?: unknown } }).knn)
      .find(Boolean);
    expect(knn!.rescore_vector).toEqual({ oversample: 3 });
  });

  it('searchVector asks for at least 100 candidates, and answers [] for an empty collection without a kNN query (mock)', async () => {
    const withUnits = setup({ collectionDimension: 2 });
    await withUnits.index.init();
    await withUnits.index.searchVector('col_1', Float32Array.from([1, 0]), 3);
    const knn = withUnits
      .sent('POST', `/${INDEX}/_search`)
      .map((r) => (r.body as { knn?: { num_candidates: number } }).knn)
      .find(Boolean);
    expect(knn!.num_candidates).toBe(100);

    const empty = setup();
    await empty.index.init();
    expect(await empty.index.searchVector('col_1', Float32Array.from([1, 0]), 3)).toEqual([]);
    expect(empty.sent('POST', `/${INDEX}/_search`)).toHaveLength(1);
  });

  it('searchText sends the user text as a match query filtered by collection (mock)', async () => {
    const { index, sent } = setup();
    await index.init();
    const result = await index.searchText('col_1', 'zebra AND "quantum', 5);

    expect(sent('POST', `/${INDEX}/_search`)[0].body).toEqual({
      size: 5,
      query: { bool: { must: { match: { text: { query: 'zebra AND "quantum' } } }, filter: { term: { collection_id: 'col_1' } } } },
      _source: ['passage_id', 'file_id'],
    });
    expect(result).toEqual([{ unitId: 'unt_text', passageId: 'psg_3', fileId: 'fle_3', score: 3.25 }]);
  });

  it('deletes by query with refresh, and counts by collection (mock)', async () => {
    const { index, sent } = setup();
    await index.init();
    await index.deleteByFile('col_1', 'fle_9');
    await index.deleteByCollection('col_2');
    expect(await index.countUnits('col_1')).toBe(7);

    const deletes = sent('POST', `/${INDEX}/_delete_by_query`);
    expect(deletes.map((r) => r.querystring)).toEqual([
      { refresh: 'true', conflicts: 'proceed' },
      { refresh: 'true', conflicts: 'proceed' },
    ]);
    expect(deletes.map((r) => r.body)).toEqual([
      { query: { bool: { filter: [{ term: { collection_id: 'col_1' } }, { term: { file_id: 'fle_9' } }] } } },
      { query: { bool: { filter: [{ term: { collection_id: 'col_2' } }] } } },
    ]);
    expect(sent('POST', `/${INDEX}/_count`)[0].body).toEqual({ query: { term: { collection_id: 'col_1' } } });
  });

  it('reports an overloaded cluster as a retryable UNAVAILABLE (mock)', async () => {
    const { index, mock, on } = setup();
    await index.init();
    mock.clear({ method: 'POST', path: `/${INDEX}/_count` });
    on(
      'POST',
      `/${INDEX}/_count`,
      () =>
        new errors.ResponseError({
          body: { error: { type: 'es_rejected_execution_exception' } },
          statusCode: 429,
          headers: {},
          warnings: [],
          meta: {} as never,
        }),
    );

    const error = await rejection(index.countUnits('col_1'));
    expect(error).toMatchObject({
      code: ErrorCode.UNAVAILABLE,
      retryable: true,
      details: { status: 429, type: 'es_rejected_execution_exception' },
    });
  });

  it('fails an upsert whose bulk items were rejected (mock)', async () => {
    const { index, mock, on } = setup();
    await index.init();
    mock.clear({ method: 'POST', path: '/_bulk' });
    on('POST', '/_bulk', () => ({
      took: 1,
      errors: true,
      items: [{ index: { _id: 'unt_a', status: 400, error: { type: 'document_parsing_exception', reason: 'bad vector' } } }],
    }));

    const error = await rejection(index.upsert([unit('unt_a', [1, 0])]));
    expect(error).toMatchObject({
      code: ErrorCode.INTERNAL,
      retryable: false,
      details: { status: 400, type: 'document_parsing_exception' },
    });
  });

  it('reports an unreachable cluster as UNAVAILABLE from ping (mock)', async () => {
    const mock = new Mock();
    mock.add({ method: 'HEAD', path: '/' }, () => new errors.ConnectionError('connect ECONNREFUSED'));
    const client = new Client({ node: 'http://localhost:9200', Connection: mock.getConnection(), maxRetries: 0 });
    const index = new ElasticsearchVectorIndex(client, { index: INDEX });
    expect(await rejection(index.ping())).toMatchObject({ code: ErrorCode.UNAVAILABLE, retryable: true });
  });
});
