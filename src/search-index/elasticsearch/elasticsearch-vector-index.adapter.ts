import { Client, errors, estypes } from '@elastic/elasticsearch';
import { AppError, ErrorCode, isAppError } from '../../common/app-error';
import type { AppConfig } from '../../config/app-config';
import {
  assertSearchK,
  assertUnitFilter,
  assertUsableVector,
  assertVectorPassages,
  dimensionsByCollection,
  embeddingMismatch,
  FileFields,
  IndexUnit,
  TextHit,
  UnitFilter,
  VectorHit,
  VectorIndex,
} from '../../domain/vector-index.port';
import { elasticsearchFileFilter, FILE_FIELDS_MAPPING, fileFieldsSource } from './elasticsearch-file-filter';

export type VectorIndexType = 'hnsw' | 'int8_hnsw' | 'bbq_hnsw';

export interface ElasticsearchVectorIndexOptions {
  /** Index name; one index holds every collection. */
  index: string;
  /** Vector dimension to map at init; any other is mapped on the first upsert that uses it. */
  dimension?: number;
  /**
   * Refresh policy of upserts. `wait_for` (the default) resolves once the units are searchable, so
   * an ingested file is findable when its job ends, at the price of waiting for the next refresh.
   */
  refresh?: estypes.Refresh;
  /**
   * HNSW graph over float vectors, over int8-quantised ones (a quarter of the memory), or over
   * 1-bit BBQ ones (a 32nd). Quantised candidates are re-scored with the float vectors, so
   * distances stay exact. Default `int8_hnsw`: it keeps the recall of float HNSW (0.95-0.99 at
   * 1M x 512 with the candidates below) where BBQ needs more oversampling to get there on 512-d
   * sentence vectors; BBQ is the choice when the vectors' memory, not latency, is the limit.
   */
  vectorIndexType?: VectorIndexType;
}

/** Elasticsearch refuses more kNN candidates per shard than this. */
const MAX_NUM_CANDIDATES = 10_000;
/** Candidates examined per result: HNSW recall on the collection-filtered graph, at little cost. */
const CANDIDATES_PER_RESULT = 10;
const MIN_NUM_CANDIDATES = 100;
/** Quantised candidates per result re-scored with float vectors: BBQ's 1-bit ranking needs more. */
const RESCORE_OVERSAMPLE: Record<VectorIndexType, number | null> = { hnsw: null, int8_hnsw: 2, bbq_hnsw: 3 };
/** Units one `passageVectors` request reads at most: the default `index.max_result_window`. */
const MAX_VECTOR_UNITS = 10_000;
/** Passages per `passageVectors` request: a passage has a few windows, so their units fit MAX_VECTOR_UNITS. */
const VECTOR_PASSAGES_PER_REQUEST = 256;
/**
 * Reads a unit's float vector from its doc values (`vectorValue`, Painless's documented access to
 * a `dense_vector`): the mapping keeps vectors out of `_source`, so they cannot be read from there.
 */
const READ_VECTOR_SCRIPT = 'doc[params.field].vectorValue';

/** Graph links per node and candidates while linking: Elasticsearch's defaults, written down. */
const HNSW_M = 16;
const HNSW_EF_CONSTRUCTION = 100;

const vectorField = (dimension: number) => `vector_${dimension}`;

interface UnitSource {
  collection_id: string;
  file_id: string;
  passage_id: string;
  dimension: number;
  text: string;
}

/**
 * Marks an index whose every unit was written by an adapter that keeps file fields: only such an
 * index is given filters on them. An older index gets the `file` mapping but not the mark, and
 * keeps taking filters as file ids (its units lack the fields) until it is built again.
 */
const FIELDS_MARK = 'units_keep_file_fields';

const STATIC_MAPPING: estypes.MappingTypeMapping = {
  // Only the fields below and the vector fields this adapter adds: a stray field is a bug.
  dynamic: 'strict',
  _meta: { [FIELDS_MARK]: true },
  // Vectors live in the kNN index (floats kept there for re-scoring) and are never read back.
  _source: { excludes: ['vector_*'] },
  properties: {
    collection_id: { type: 'keyword' },
    file_id: { type: 'keyword' },
    passage_id: { type: 'keyword' },
    dimension: { type: 'integer' },
    text: { type: 'text', analyzer: 'english' },
    // The unit's file's filterable fields (elasticsearch-file-filter.ts), set by setFileFields.
    file: FILE_FIELDS_MAPPING,
  },
};

/**
 * The scale-out index: one Elasticsearch index of units, `dense_vector` kNN (cosine) for vectors
 * and BM25 on `text`. Each dimension has its own vector field (`vector_<dim>`), so collections
 * embedded by different models share the index, as they share the embedded adapter's file.
 * Unit ids are document ids, which makes an upsert of the same unit a replacement. Each unit keeps
 * its file's filterable fields and metadata, so a search filter is a query on the units themselves
 * (in `knn.filter`), whatever the number of files it keeps.
 */
export class ElasticsearchVectorIndex extends VectorIndex {
  private readonly index: string;
  private readonly refresh: estypes.Refresh;
  private readonly vectorIndexType: VectorIndexType;
  private readonly mappedDimensions = new Set<number>();
  /** The index carries FIELDS_MARK: read at init. */
  private keepsFileFields = false;

  /** @param client owned by the adapter from now on: `close()` closes it. */
  constructor(
    private readonly client: Client,
    private readonly options: ElasticsearchVectorIndexOptions,
  ) {
    super();
    this.index = options.index;
    this.refresh = options.refresh ?? 'wait_for';
    this.vectorIndexType = options.vectorIndexType ?? 'int8_hnsw';
  }

  static fromConfig(config: AppConfig, options: Omit<ElasticsearchVectorIndexOptions, 'index'> = {}): ElasticsearchVectorIndex {
    if (!config.ELASTICSEARCH_URL) throw new AppError(ErrorCode.INTERNAL, 'ELASTICSEARCH_URL is not set');
    const client = new Client({
      node: config.ELASTICSEARCH_URL,
      ...(config.ELASTICSEARCH_API_KEY ? { auth: { apiKey: config.ELASTICSEARCH_API_KEY } } : {}),
    });
    return new ElasticsearchVectorIndex(client, {
      index: config.ELASTICSEARCH_INDEX,
      vectorIndexType: config.ELASTICSEARCH_VECTOR_INDEX,
      ...options,
    });
  }

  async init(): Promise<void> {
    await this.call('create the index', async () => {
      if (!(await this.client.indices.exists({ index: this.index }))) {
        try {
          await this.client.indices.create({ index: this.index, mappings: STATIC_MAPPING });
        } catch (error) {
          // Another process created it between our check and our create.
          if (!(error instanceof errors.ResponseError && error.body?.error?.type === 'resource_already_exists_exception')) throw error;
        }
      }
      const mapping = await this.client.indices.getMapping({ index: this.index });
      const properties = mapping[this.index]?.mappings.properties ?? {};
      this.keepsFileFields = mapping[this.index]?.mappings._meta?.[FIELDS_MARK] === true;
      // An index created before units kept their file's fields: adding a field is allowed, and idempotent.
      if (!('file' in properties)) await this.client.indices.putMapping({ index: this.index, properties: { file: FILE_FIELDS_MAPPING } });
      for (const name of Object.keys(properties)) {
        const match = /^vector_(\d+)$/.exec(name);
        if (match) this.mappedDimensions.add(Number(match[1]));
      }
    });
    if (this.options.dimension !== undefined) await this.mapVectorField(this.options.dimension);
  }

  async upsert(units: IndexUnit[]): Promise<void> {
    if (units.length === 0) return;
    const dimensions = dimensionsByCollection(units);
    for (const dimension of new Set(dimensions.values())) await this.mapVectorField(dimension);
    for (const [collectionId, dimension] of dimensions) {
      // Units this batch replaces do not count as the collection's existing vectors.
      const replaced = units.filter((unit) => unit.collectionId === collectionId).map((unit) => unit.id);
      const existing = await this.collectionDimension(collectionId, replaced);
      if (existing !== undefined && existing !== dimension) throw embeddingMismatch(collectionId, existing, dimension);
    }

    const operations = units.flatMap((unit) => [
      { index: { _index: this.index, _id: unit.id } },
      {
        collection_id: unit.collectionId,
        file_id: unit.fileId,
        passage_id: unit.passageId,
        dimension: unit.vector.length,
        text: unit.text,
        [vectorField(unit.vector.length)]: Array.from(unit.vector),
      },
    ]);
    const response = await this.call('index units', () => this.client.bulk({ operations, refresh: this.refresh }));
    if (response.errors) {
      const failed = response.items.map((item) => item.index).filter((item) => item?.error);
      const status = failed[0]?.status ?? 500;
      const retryable = status === 429 || status >= 500;
      throw new AppError(
        retryable ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL,
        `Elasticsearch rejected ${failed.length} of ${units.length} units`,
        { details: { status, type: failed[0]?.error?.type, reason: failed[0]?.error?.reason }, retryable },
      );
    }
  }

  /** True for an index created with the file fields (FIELDS_MARK); an older one takes file ids. */
  override get filtersFileFields(): boolean {
    return this.keepsFileFields;
  }

  /**
   * Replaces the file's fields on every unit of the file, searchable when this resolves. Files
   * indexed before units kept their fields get them at their next metadata change or re-indexing.
   */
  override async setFileFields(collectionId: string, fileId: string, fields: FileFields): Promise<void> {
    await this.call('set the file fields', () =>
      this.client.updateByQuery({
        index: this.index,
        query: { bool: { filter: [{ term: { collection_id: collectionId } }, { term: { file_id: fileId } }] } },
        script: { lang: 'painless', source: 'ctx._source.file = params.file', params: { file: fileFieldsSource(fields) } },
        refresh: true,
      }),
    );
  }

  async searchVector(collectionId: string, vector: Float32Array, k: number, filter?: UnitFilter): Promise<VectorHit[]> {
    assertSearchK(k);
    assertUsableVector(vector, 'Query vector');
    assertUnitFilter(filter);
    if (filter && 'fileIds' in filter && filter.fileIds.length === 0) return [];
    const dimension = await this.collectionDimension(collectionId);
    if (dimension === undefined) return [];
    if (dimension !== vector.length) throw embeddingMismatch(collectionId, dimension, vector.length);

    // The filter applies while the graph is walked (not after), and Elasticsearch scans the
    // matching documents exactly when they are fewer than num_candidates: k hits at any selectivity.
    const oversample = RESCORE_OVERSAMPLE[this.vectorIndexType];
    const knn: estypes.KnnSearch = {
      field: vectorField(dimension),
      query_vector: Array.from(vector),
      k,
      num_candidates: Math.min(MAX_NUM_CANDIDATES, Math.max(MIN_NUM_CANDIDATES, k * CANDIDATES_PER_RESULT)),
      filter: scope(collectionId, filter),
      ...(oversample ? { rescore_vector: { oversample } } : {}),
    };
    const response = await this.call('search vectors', () =>
      this.client.search<UnitSource>({ index: this.index, knn, size: k, _source: ['passage_id', 'file_id'] }),
    );
    return response.hits.hits.map((hit) => ({
      unitId: hit._id!,
      passageId: hit._source!.passage_id,
      fileId: hit._source!.file_id,
      // Cosine similarity scores as (1 + cos) / 2, so 1 - cos = 2 - 2 * score.
      distance: Math.min(2, Math.max(0, 2 - 2 * (hit._score ?? 0))),
    }));
  }

  async searchText(collectionId: string, text: string, k: number, filter?: UnitFilter): Promise<TextHit[]> {
    assertSearchK(k);
    assertUnitFilter(filter);
    if (text.trim() === '' || (filter && 'fileIds' in filter && filter.fileIds.length === 0)) return [];
    // A match query analyses the text as words: user input is never parsed as query syntax.
    const response = await this.call('search text', () =>
      this.client.search<UnitSource>({
        index: this.index,
        size: k,
        query: { bool: { must: { match: { text: { query: text } } }, filter: scope(collectionId, filter) } },
        _source: ['passage_id', 'file_id'],
      }),
    );
    return response.hits.hits.map((hit) => ({
      unitId: hit._id!,
      passageId: hit._source!.passage_id,
      fileId: hit._source!.file_id,
      score: hit._score ?? 0,
    }));
  }

  /**
   * A filtered search for the passages' units that returns each unit's vector as a script field.
   * Requests of VECTOR_PASSAGES_PER_REQUEST passages, so that their units stay within one page.
   */
  async passageVectors(collectionId: string, passageIds: readonly string[]): Promise<Map<string, Float32Array[]>> {
    assertVectorPassages(passageIds);
    const vectors = new Map<string, Float32Array[]>();
    const ids = [...new Set(passageIds)];
    if (ids.length === 0) return vectors;
    const dimension = await this.collectionDimension(collectionId);
    if (dimension === undefined) return vectors;
    for (let start = 0; start < ids.length; start += VECTOR_PASSAGES_PER_REQUEST) {
      const batch = ids.slice(start, start + VECTOR_PASSAGES_PER_REQUEST);
      const response = await this.call('read passage vectors', () =>
        this.client.search<Pick<UnitSource, 'passage_id'>>({
          index: this.index,
          size: MAX_VECTOR_UNITS,
          query: { bool: { filter: [{ term: { collection_id: collectionId } }, { terms: { passage_id: batch } }] } },
          _source: ['passage_id'],
          script_fields: {
            vector: { script: { source: READ_VECTOR_SCRIPT, params: { field: vectorField(dimension) } } },
          },
        }),
      );
      for (const hit of response.hits.hits) {
        const passageId = hit._source?.passage_id;
        const values = (hit.fields?.vector as unknown[] | undefined)?.flat() as number[] | undefined;
        if (!passageId || !values?.length) continue;
        const list = vectors.get(passageId) ?? [];
        list.push(Float32Array.from(values));
        vectors.set(passageId, list);
      }
    }
    return vectors;
  }

  async deleteByFile(collectionId: string, fileId: string): Promise<void> {
    await this.deleteWhere([{ term: { collection_id: collectionId } }, { term: { file_id: fileId } }]);
  }

  async deleteByCollection(collectionId: string): Promise<void> {
    await this.deleteWhere([{ term: { collection_id: collectionId } }]);
  }

  async countUnits(collectionId: string): Promise<number> {
    const response = await this.call('count units', () =>
      this.client.count({ index: this.index, query: { term: { collection_id: collectionId } } }),
    );
    return response.count;
  }

  async ping(): Promise<void> {
    const alive = await this.call('ping', () => this.client.ping());
    if (!alive) throw new AppError(ErrorCode.UNAVAILABLE, 'Elasticsearch did not answer the ping', { retryable: true });
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  private async deleteWhere(filter: estypes.QueryDslQueryContainer[]): Promise<void> {
    await this.call('delete units', () =>
      this.client.deleteByQuery({
        index: this.index,
        query: { bool: { filter } },
        // Deleted units must not turn up in the next search or count.
        refresh: true,
        // A unit re-indexed meanwhile is the newer truth; deleting it anyway is what was asked.
        conflicts: 'proceed',
      }),
    );
  }

  /** The dimension of the collection's vectors, ignoring units `except`; undefined when it has none. */
  private async collectionDimension(collectionId: string, except: string[] = []): Promise<number | undefined> {
    const response = await this.call('read the collection dimension', () =>
      this.client.search<Pick<UnitSource, 'dimension'>>({
        index: this.index,
        size: 1,
        query: {
          bool: {
            filter: { term: { collection_id: collectionId } },
            ...(except.length ? { must_not: { ids: { values: except } } } : {}),
          },
        },
        _source: ['dimension'],
      }),
    );
    return response.hits.hits[0]?._source?.dimension;
  }

  private async mapVectorField(dimension: number): Promise<void> {
    if (this.mappedDimensions.has(dimension)) return;
    // Idempotent: putting the same field definition again is a no-op, also across processes.
    await this.call('map the vector field', () =>
      this.client.indices.putMapping({
        index: this.index,
        properties: {
          [vectorField(dimension)]: {
            type: 'dense_vector',
            dims: dimension,
            index: true,
            similarity: 'cosine',
            index_options: { type: this.vectorIndexType, m: HNSW_M, ef_construction: HNSW_EF_CONSTRUCTION },
          },
        },
      }),
    );
    this.mappedDimensions.add(dimension);
  }

  private async call<T>(action: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw toAppError(error, action);
    }
  }
}

/** The collection, and the filter's files when there is one: by id, or by their fields. */
function scope(collectionId: string, filter?: UnitFilter): estypes.QueryDslQueryContainer | estypes.QueryDslQueryContainer[] {
  const collection = { term: { collection_id: collectionId } };
  if (!filter) return collection;
  return [collection, 'fileIds' in filter ? { terms: { file_id: [...filter.fileIds] } } : elasticsearchFileFilter(filter.files)];
}

function toAppError(error: unknown, action: string): AppError {
  if (isAppError(error)) return error;
  if (error instanceof errors.ResponseError) {
    const status = error.statusCode ?? 500;
    const retryable = status === 429 || status >= 500;
    const type: unknown = error.body?.error?.type;
    return new AppError(retryable ? ErrorCode.UNAVAILABLE : ErrorCode.INTERNAL, `Elasticsearch could not ${action} (${status})`, {
      cause: error,
      details: { status, type },
      retryable,
    });
  }
  if (error instanceof errors.ConnectionError || error instanceof errors.TimeoutError || error instanceof errors.NoLivingConnectionsError) {
    return new AppError(ErrorCode.UNAVAILABLE, `Elasticsearch is unreachable: could not ${action}`, { cause: error, retryable: true });
  }
  return new AppError(ErrorCode.INTERNAL, `Elasticsearch could not ${action}`, { cause: error });
}
