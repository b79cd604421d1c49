import { z } from 'zod';
import { SearchOptionsDto } from '../../collections/search.dto';
import { RESULTS_PER_SEARCH } from '../mcp-backend.port';
import { CollectionRef, offsetDescription } from './inputs';
import { rerankOutcome, searchHit } from './records';
import { toolArguments } from './tool-arguments';
import { defineTool, READ_ONLY } from './tool-definition';
import { FILTER_HELP, hitLinks } from './search-hits';

export const searchCollectionTool = defineTool({
  name: 'service_search_collection',
  title: 'Search a collection',
  description:
    'Semantic search in one collection: finds the passages whose meaning is closest to query (a question or a phrase in ' +
    `natural language works best; exact words need not match). Returns at most ${RESULTS_PER_SEARCH} results per call, closest first, ` +
    'starting at offset (0 for the best matches); each has the passage id, its text (content), its cosine distance to the query ' +
    '(smaller is closer) and the id and name of its file. For more, call again with offset = nextOffset. ' +
    'Each passage and its file also come as resource links (collections://...) that resources/read opens: cite them. ' +
    'Only files whose status is indexed are searched: after service_add_file_to_collection, wait until ' +
    'service_list_collection_files shows the file as indexed. With rerank, a cross-scorer reorders the top passages ' +
    '(rerank.top_n of them): the configured reranker, or the /rerank endpoint rerank.url names; if it fails, the results ' +
    "come in the search's own order and the answer's rerank says why. " +
    FILTER_HELP,
  input: toolArguments({
    ref: CollectionRef,
    input: SearchOptionsDto,
    // top_k is the tool's own (RESULTS_PER_SEARCH) and mode the default: neither is offered.
    names: { query: 'text', offset: 'offset', filter: 'filter', rerank: 'rerank' },
    descriptions: { offset: offsetDescription('results') },
  }),
  output: z.object({
    result: z.array(searchHit).describe('Matching passages, closest first (most relevant first when reranked)'),
    rerank: rerankOutcome.optional().describe('Present when the search was to be reranked: whether it was'),
    offset: z.number(),
    nextOffset: z.number().nullable().describe('Offset of the next results, or null when there are no more'),
  }),
  annotations: READ_ONLY,
  async run(backend, { collection_id, input }) {
    const offset = input.offset ?? 0;
    const { result, rerank } = await backend.search(collection_id, {
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
  links: ({ result }, { collection_id }) => hitLinks(result.map((hit) => ({ ...hit, collectionId: collection_id }))),
});
