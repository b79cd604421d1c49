import { z } from 'zod';
import { MAX_SEARCH_COLLECTIONS, MultiSearchDto } from '../../collections/search.dto';
import { AppError } from '../../common/app-error';
import { RESULTS_PER_SEARCH } from '../mcp-backend.port';
import { offsetDescription } from './inputs';
import { rerankOutcome, searchHit } from './records';
import { FILTER_HELP, hitLinks } from './search-hits';
import { toolArguments } from './tool-arguments';
import { defineTool, READ_ONLY } from './tool-definition';

export const searchCollectionsTool = defineTool({
  name: 'service_search_collections',
  title: 'Search several collections',
  description:
    `Semantic search across collections at once: the ones in collection_ids (1 to ${MAX_SEARCH_COLLECTIONS}), or every collection ` +
    'you can read with all: true. Each collection is ranked on its own and the rankings are merged fairly (by rank, so a large ' +
    "collection does not crowd out a small one's best match). With rerank, a cross-scorer then reorders the top of the merged " +
    'list (rerank.top_n passages): the configured reranker, or the /rerank endpoint rerank.url names; if it fails, the results ' +
    "come in the merged order and the answer's rerank says why. Returns at most " +
    `${RESULTS_PER_SEARCH} results per call, best first, from offset; each names its collectionId, the passage id, its text, its ` +
    'cosine distance and its file. A collection you cannot read fails the call, named, and nothing is searched. ' +
    FILTER_HELP,
  input: toolArguments({
    input: MultiSearchDto,
    names: { collection_ids: 'collection_ids', all: 'all', query: 'text', offset: 'offset', filter: 'filter', rerank: 'rerank' },
    descriptions: { offset: offsetDescription('results') },
  }),
  output: z.object({
    result: z
      .array(searchHit.extend({ collectionId: z.string().describe('The collection the passage is from') }))
      .describe('Best first (most relevant first when reranked)'),
    rerank: rerankOutcome.optional().describe('Present when the search was to be reranked: whether it was'),
    offset: z.number(),
    nextOffset: z.number().nullable().describe('Offset of the next results, or null when there are no more'),
  }),
  annotations: READ_ONLY,
  async run(backend, { input }) {
    if ((input.collection_ids === undefined) === (input.all !== true)) {
      throw AppError.validation([{ field: 'collection_ids', reason: 'give either collection_ids or all: true' }], 'Invalid arguments');
    }
    const offset = input.offset ?? 0;
    const target = input.all ? { all: true as const } : { collectionIds: input.collection_ids! };
    const { result, rerank } = await backend.searchMany(target, {
      text: input.text,
      topK: RESULTS_PER_SEARCH,
      offset,
      filter: input.filter,
      ...(input.rerank ? { rerank: input.rerank } : {}),
    });
    const page = result.slice(0, RESULTS_PER_SEARCH);
    return {
      result: page,
      offset,
      nextOffset: page.length === RESULTS_PER_SEARCH ? offset + page.length : null,
      ...(rerank ? { rerank } : {}),
    };
  },
  links: ({ result }) => hitLinks(result),
});
