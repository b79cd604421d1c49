import { CompleteResult, GetPromptResult, Prompt, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { COLLECTION_ICON, SEARCH_ICON } from './icons';
import { COLLECTIONS_PER_CALL, FILES_PER_CALL, McpBackend, RESULTS_PER_SEARCH } from './mcp-backend.port';
import { decodeCursor, pageOf } from './paging';
import { protocolError } from './protocol-errors';
import { fileUri, passageUri } from './resources/resource-uris';

/**
 * The prompts RAG clients look for: answer a question from a collection with citations (the
 * passages found for it come embedded, each under the URI to cite), and summarize one file.
 */

const COLLECTION_ARGUMENT = { name: 'collection_id', description: 'Id of the collection (starts with col_)', required: true };

export const PROMPTS: Prompt[] = [
  {
    name: 'answer_with_citations',
    title: 'Answer from a collection, with citations',
    description:
      'Searches the collection for the question and hands the closest passages to the model with the instruction to answer ' +
      'from them alone and cite each passage it uses by its URI.',
    arguments: [COLLECTION_ARGUMENT, { name: 'question', description: 'The question to answer', required: true }],
    icons: SEARCH_ICON,
  },
  {
    name: 'summarize_file',
    title: 'Summarize a file',
    description: 'Hands the text extracted from one indexed file to the model with the instruction to summarize it.',
    arguments: [COLLECTION_ARGUMENT, { name: 'file_id', description: 'Id of the file (starts with fle_)', required: true }],
    icons: COLLECTION_ICON,
  },
];

const PROMPTS_PER_PAGE = 100;
const MAX_QUESTION_CHARS = 8192;

export function listPrompts(cursor: unknown): { prompts: Prompt[]; nextCursor?: string } {
  const [offset] = decodeCursor('prompts/list', cursor);
  const { page, nextCursor } = pageOf('prompts/list', PROMPTS, offset, PROMPTS_PER_PAGE);
  return { prompts: page, ...(nextCursor ? { nextCursor } : {}) };
}

function argument(args: Record<string, string> | undefined, name: string, max = 200): string {
  const value = args?.[name]?.trim();
  if (!value) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Missing required argument ${name}`);
  if (value.length > max) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Argument ${name} must be at most ${max} characters`);
  return value;
}

export async function getPrompt(
  backend: McpBackend,
  name: string,
  args: Record<string, string> | undefined,
  report?: (error: unknown) => void,
): Promise<GetPromptResult> {
  if (!PROMPTS.some((prompt) => prompt.name === name))
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt ${name}: prompts/list names the prompts of this server`);
  const collectionId = argument(args, 'collection_id');
  try {
    if (name === 'answer_with_citations') {
      const question = argument(args, 'question', MAX_QUESTION_CHARS);
      const { result } = await backend.search(collectionId, { text: question, topK: RESULTS_PER_SEARCH, offset: 0 });
      return {
        description: `Answer "${question}" from collection ${collectionId}, citing the passages`,
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text:
                `Answer the question below using only the passages that follow, found in collection ${collectionId}. ` +
                'After each statement, cite the passage it comes from by its URI in square brackets, e.g. [collections://...]. ' +
                'If the passages do not hold the answer, say so instead of guessing.' +
                (result.length === 0 ? '\n\nThe search found no passages: say that the collection does not answer it.' : '') +
                `\n\nQuestion: ${question}`,
            },
          },
          ...result.map((hit) => ({
            role: 'user' as const,
            content: {
              type: 'resource' as const,
              resource: { uri: passageUri(collectionId, hit.fileId, hit.id), mimeType: 'text/plain', text: hit.content },
            },
          })),
        ],
      };
    }
    const fileId = argument(args, 'file_id');
    const file = await backend.fileText(collectionId, fileId);
    return {
      description: `Summarize ${file.name}`,
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Summarize the file "${file.name}" that follows: its main points, in a few paragraphs.` },
        },
        {
          role: 'user',
          content: { type: 'resource', resource: { uri: fileUri(collectionId, fileId), mimeType: 'text/plain', text: file.content } },
        },
      ],
    };
  } catch (error) {
    throw protocolError(error, report);
  }
}

const NO_COMPLETION: CompleteResult = { completion: { values: [], total: 0, hasMore: false } };

/** What completion/complete is asked to complete: an argument of a prompt, or a variable of a resource template. */
export type CompletionRef = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

/**
 * completion/complete: the caller's collection ids (and a collection's file ids) that start with, or
 * are named like, what is typed, for a prompt of this server or a resource (a template's or a URI).
 * @throws ProtocolError InvalidParams for a collection the caller cannot read
 */
export async function complete(
  backend: McpBackend,
  ref: CompletionRef,
  argumentName: string,
  value: string,
  context: Record<string, string> | undefined,
  report?: (error: unknown) => void,
): Promise<CompleteResult> {
  // A prompt this server does not have has nothing to complete: no values, as the specification's
  // conformance suite expects (it asks for one of its own fixtures), rather than an error.
  if (ref.type === 'ref/prompt' && !PROMPTS.some((prompt) => prompt.name === ref.name)) return NO_COMPLETION;
  const typed = value.trim().toLowerCase();
  const matches = (id: string, name: string) => id.toLowerCase().startsWith(typed) || name.toLowerCase().includes(typed);
  let values: string[] = [];
  try {
    if (argumentName === 'collection_id') {
      const { items } = await backend.listCollections({ offset: 0, limit: COLLECTIONS_PER_CALL });
      values = items.filter((c) => matches(c.id, c.name)).map((c) => c.id);
    } else if (argumentName === 'file_id' && context?.collection_id) {
      const { items } = await backend.listFiles(argument(context, 'collection_id'), {
        offset: 0,
        limit: FILES_PER_CALL,
        status: 'indexed',
      });
      values = items.filter((f) => matches(f.id, f.name)).map((f) => f.id);
    }
  } catch (error) {
    throw protocolError(error, report);
  }
  return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
}
