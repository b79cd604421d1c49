import { z } from 'zod';
import { LruCache } from '../../common/lru-cache';
import { COLLECTION_ICON, McpIcon, SEARCH_ICON, WORKFLOW_ICON } from '../icons';
import type { WorkflowToolRecord } from '../mcp-backend.port';
import { COLLECTION_TOOLS, CollectionTool, ToolHints } from '.';

/** One entry of tools/list, as the MCP specification shapes it. */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  outputSchema: Record<string, unknown> & { type: 'object' };
  annotations: ToolHints & { title: string };
  icons: McpIcon[];
  /** MCP 2025-11-25 tasks: whether a call may ask to run as a task. */
  execution?: { taskSupport: 'optional' };
}

/** A zod schema as the JSON Schema tools/list publishes: the output side (what a result holds). */
const outputJsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'output' }) as ListedTool['outputSchema'];

const COLLECTION_TOOL_ENTRIES: ReadonlyMap<string, { tool: CollectionTool; listed: ListedTool }> = new Map(
  COLLECTION_TOOLS.map((tool) => [
    tool.name,
    {
      tool,
      listed: {
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input.schema as ListedTool['inputSchema'],
        outputSchema: outputJsonSchema(tool.output),
        annotations: { title: tool.title, ...tool.annotations },
        icons: tool.name.startsWith('service_search_collection') ? SEARCH_ICON : COLLECTION_ICON,
      },
    },
  ]),
);

/** The collection tool `name`, or undefined. */
export const collectionTool = (name: string): CollectionTool | undefined => COLLECTION_TOOL_ENTRIES.get(name)?.tool;

/** The eight collection tools, in the order INTERFACE.md 4.2 lists them. */
export const COLLECTION_TOOL_LISTING: readonly ListedTool[] = [...COLLECTION_TOOL_ENTRIES.values()].map((entry) => entry.listed);

/** What a workflow tool call answers (its structuredContent, and the JSON of its text). */
export const workflowCallResult = z.object({
  runId: z.string().describe('The run the call started; the resource runs://<runId> follows it'),
  status: z
    .enum(['queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled'])
    .describe('succeeded: output holds the answer; failed: error says why; waiting: it waits for an approval or a Wait node'),
  output: z.unknown().describe("The workflow's answer once the run succeeded, else null"),
  error: z.object({ code: z.string(), message: z.string() }).nullable().describe('Why the run failed or was canceled'),
  approval: z
    .object({
      summary: z.string(),
      expiresAt: z.string().describe('ISO 8601 timestamp, UTC: the approval times out then'),
      approvalUrl: z.string().optional().describe('The page where the approver decides: give it to the user'),
    })
    .optional()
    .describe('The approval the run waits at, when the answer came before a decision'),
});
export type WorkflowCallResult = z.output<typeof workflowCallResult>;

const WORKFLOW_RESULT_SCHEMA = outputJsonSchema(workflowCallResult);

/** A workflow tool runs a workflow: it may do anything the workflow does, so it claims no safety. */
const WORKFLOW_TOOL_HINTS: ToolHints = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

/** The same workflow tool listed in many sessions and requests shares one entry. */
const WORKFLOW_TOOL_ENTRIES = new LruCache<string, ListedTool>(256);

export const workflowToolFingerprint = (tool: WorkflowToolRecord): string =>
  JSON.stringify([tool.name, tool.workflowId, tool.title, tool.description, tool.inputSchema]);

export function workflowToolListing(tool: WorkflowToolRecord): ListedTool {
  const key = workflowToolFingerprint(tool);
  let listed = WORKFLOW_TOOL_ENTRIES.get(key);
  if (!listed) {
    listed = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema as ListedTool['inputSchema'],
      outputSchema: WORKFLOW_RESULT_SCHEMA,
      annotations: { title: tool.title, ...WORKFLOW_TOOL_HINTS },
      icons: WORKFLOW_ICON,
      execution: { taskSupport: 'optional' },
    };
    WORKFLOW_TOOL_ENTRIES.set(key, listed);
  }
  return listed;
}

/**
 * The tool naming rule of MCP 2025-11-25 (SEP-986): 1 to 128 characters among letters, digits,
 * `_`, `-` and `.`. Every name this server lists follows it (the collection tools' and the names
 * workflow tools are given), which the tests check.
 */
export const TOOL_NAME_RULE = /^[A-Za-z0-9_.-]{1,128}$/;
