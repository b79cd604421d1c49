import { ChatTool, McpSession, NodeContext, schemaProblems } from 'workflow-collection-service/sdk';
import type { AiAgentParameters } from './ai-agent.parameters';

/** A tool as the loop calls it: the model's view of it, and what runs when the model asks. */
export interface AgentTool {
  spec: ChatTool;
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** A tool failure the model reads as the tool's result (its arguments were wrong, the tool failed). */
export class ToolFailure extends Error {}

/** Why the schema refuses `args` (one line per field), or null. */
export function argumentsProblem(schema: Record<string, unknown>, args: unknown): string | null {
  const problems = schemaProblems(schema, args);
  if (problems.length === 0) return null;
  return problems
    .map(({ path, missing, message }) =>
      missing ? `${path ? `${path}.` : ''}${missing} is required` : `${path || '(arguments)'} ${message}`,
    )
    .join('; ');
}

/**
 * The tools the node offers the model: a search of its collections, its workflows, and the tools
 * of its MCP servers (connected here; the caller closes the sessions). Names are made unique and
 * fit what OpenAI-compatible servers accept.
 */
export async function agentTools(
  ctx: NodeContext<AiAgentParameters>,
  signal: AbortSignal,
): Promise<{ tools: Map<string, AgentTool>; sessions: McpSession[] }> {
  const { collections, searchTopK, workflows, mcpServers } = ctx.params;
  const tools = new Map<string, AgentTool>();
  const add = (wanted: string, tool: Omit<AgentTool, 'spec'> & { spec: Omit<ChatTool, 'name'> }) => {
    const base = toolName(wanted);
    let name = base;
    for (let n = 2; tools.has(name); n++) name = `${base.slice(0, 60)}_${n}`;
    tools.set(name, { ...tool, spec: { ...tool.spec, name } });
  };

  if (collections.length) {
    add('search_collections', {
      spec: {
        description: `Search in the document collections ${collections.join(', ')}, by meaning and by keywords (hybrid, reranked when the service has a reranker). Answers the best passages for the query first, each with fileId, fileName, passage, distance (smaller is closer in meaning) and rerankScore when reranked: cite fileName (and fileId) for what you take from a passage.`,
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string', minLength: 1, description: 'What to look for, in natural language' },
            filter: {
              type: 'object',
              description:
                'Optional: only passages of files this filter keeps, e.g. {"field":"metadata.year","gte":2020}, {"field":"type","eq":"application/pdf"}, ' +
                'combined with {"and":[...]}, {"or":[...]}, {"not":{...}}; fields: id, name, type, size, createdAt, pages, title, author, metadata.<key>',
            },
            ...(collections.length > 1
              ? {
                  collectionId: {
                    type: 'string',
                    enum: collections,
                    description: 'Search only this collection (all of them when left out)',
                  },
                }
              : {}),
          },
          required: ['query'],
          additionalProperties: false,
        },
      },
      // One collection the run's user may not read (or that fails) leaves the others searched:
      // the model is told which were refused and why, and only when none answers is it an error.
      run: async (args) => {
        const targets = typeof args.collectionId === 'string' ? [args.collectionId] : collections;
        const filter = typeof args.filter === 'object' && args.filter !== null ? { filter: args.filter as Record<string, unknown> } : {};
        const found = await Promise.allSettled(
          targets.map((id) =>
            ctx.collections.search(id, { text: String(args.query), topK: searchTopK, offset: 0, mode: 'hybrid', ...filter }),
          ),
        );
        const refused = found.flatMap((outcome, index) =>
          outcome.status === 'rejected' ? [{ collectionId: targets[index], reason: (outcome.reason as Error).message }] : [],
        );
        if (refused.length === targets.length) throw (found[0] as PromiseRejectedResult).reason;
        const rankings = found.map((outcome, index) =>
          outcome.status === 'fulfilled'
            ? outcome.value.items.map((hit) => ({
                collectionId: targets[index],
                fileId: hit.fileId,
                fileName: hit.fileName,
                passage: hit.content,
                distance: hit.distance,
                ...(hit.page !== null ? { page: hit.page } : {}),
                ...(hit.rerankScore !== undefined ? { rerankScore: hit.rerankScore } : {}),
              }))
            : [],
        );
        const passages = merged(rankings).slice(0, searchTopK);
        // A reranker that failed leaves that collection in its own order: the model is told.
        const notReranked = found.flatMap((outcome, index) =>
          outcome.status === 'fulfilled' && outcome.value.rerank?.applied === false
            ? [{ collectionId: targets[index], reason: outcome.value.rerank.error ?? 'the reranker failed' }]
            : [],
        );
        if (refused.length === 0 && notReranked.length === 0) return passages;
        return { passages, ...(refused.length ? { refused } : {}), ...(notReranked.length ? { notReranked } : {}) };
      },
    });
  }

  const described = await Promise.all(workflows.map((id) => ctx.workflows.describeTool(id)));
  for (const workflow of described) {
    add(workflow.name, {
      spec: { description: workflow.description, parameters: workflow.inputSchema },
      run: async (args, toolSignal) => {
        const run = await ctx.workflows.execute(workflow.workflowId, args, { signal: toolSignal });
        if (run.status !== 'succeeded')
          throw new ToolFailure(`The workflow run ${run.runId} ${run.status}${run.error ? `: ${run.error.message}` : ''}`);
        return run.output ?? null;
      },
    });
  }

  const sessions: McpSession[] = [];
  try {
    const connected = await Promise.all(
      mcpServers.map(async (server) => {
        const session = await ctx.mcp.connect({ url: server.url, ...(server.credential ? { credential: server.credential } : {}) }, signal);
        sessions.push(session);
        return { server, session, listed: await session.listTools() };
      }),
    );
    for (const { server, session, listed } of connected) {
      const allowed = server.tools ? new Set(server.tools) : null;
      for (const tool of listed) {
        if (allowed && !allowed.has(tool.name)) continue;
        add(tool.name, {
          spec: { description: tool.description ?? `Tool ${tool.name} of ${new URL(server.url).host}`, parameters: tool.inputSchema },
          run: async (args) => {
            const result = await session.callTool(tool.name, args);
            if (result.isError) throw new ToolFailure(result.text || `Tool ${tool.name} failed`);
            return result.structuredContent ?? result.text;
          },
        });
      }
    }
  } catch (error) {
    await Promise.all(sessions.map((session) => session.close()));
    throw error;
  }
  return { tools, sessions };
}

/**
 * The rankings of several collections as one: by the reranker's score when it scored every
 * passage (one reranker, one query: its scores compare across collections), otherwise by rank,
 * taking each collection's next best in turn, since a hybrid ranking's distances do not say its order.
 */
export function merged<T extends { rerankScore?: number }>(rankings: T[][]): T[] {
  const all = rankings.flat();
  if (all.every((p) => p.rerankScore !== undefined)) return all.sort((a, b) => b.rerankScore! - a.rerankScore!);
  const result: T[] = [];
  for (let rank = 0; result.length < all.length; rank++)
    for (const ranking of rankings) if (rank < ranking.length) result.push(ranking[rank]);
  return result;
}

/** What OpenAI-compatible servers accept as a function name: ^[a-zA-Z0-9_-]{1,64}$. */
function toolName(wanted: string): string {
  const cleaned = wanted
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
  return cleaned || 'tool';
}
