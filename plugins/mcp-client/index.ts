import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import { defineNode, McpToolResult, NodeConfigurationError, NodeUpstreamError } from '../../src/sdk';
import { McpClientParameters } from './mcp-client.parameters';

export { McpClientParameters };

// Schemas are the servers' own: none is registered by `$id`, each is compiled once per text.
const ajv = new Ajv({ allErrors: true, strict: false, addUsedSchema: false });
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 256;

export default defineNode({
  type: 'mcp-client',
  version: 1,
  displayName: 'MCP Client',
  description:
    "Calls one tool of an outside MCP server (Streamable HTTP) through the outbound guard, with a credential if given. The arguments are checked against the tool's input schema first. Outputs the tool's structuredContent, or {text} with its text content; a tool that answers isError fails the node (so onError and the error output apply).",
  parameters: McpClientParameters,
  defaultRunMode: 'input',
  async execute(ctx): Promise<unknown> {
    const { url, credential, tool, arguments: args } = ctx.params;
    const session = await ctx.mcp.connect({ url, ...(credential ? { credential } : {}) }, ctx.signal);
    try {
      const listed = (await session.listTools()).find((candidate) => candidate.name === tool);
      if (!listed) throw new NodeConfigurationError(`The MCP server at ${new URL(url).origin} has no tool named ${tool}`, { details: { parameter: 'tool', tool } });
      const problems = argumentProblems(listed.inputSchema, args ?? {});
      if (problems.length) {
        const [first] = problems;
        throw new NodeConfigurationError(`Arguments of tool ${tool}: ${first.field} ${first.reason}`, { details: { parameter: 'arguments', fields: problems } });
      }
      const result = await session.callTool(tool, args ?? {});
      if (result.isError) {
        throw new NodeUpstreamError(`Tool ${tool} failed: ${resultText(result).slice(0, 1000) || 'no message'}`, { retryable: false, details: { tool, content: result.content } });
      }
      return result.structuredContent ?? { text: resultText(result) };
    } finally {
      await session.close();
    }
  },
});

/** Each field the tool's schema refuses, named by its path (`city`, `address.zip`; `(arguments)` for the whole object). */
export function argumentProblems(schema: Record<string, unknown>, args: Record<string, unknown>): { field: string; reason: string }[] {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
    } catch (error) {
      throw new NodeUpstreamError(`The tool's input schema cannot be used: ${(error as Error).message}`, { retryable: false });
    }
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(key, validate);
  }
  if (validate(args)) return [];
  return (validate.errors ?? []).map(fieldOf);
}

function fieldOf(error: ErrorObject): { field: string; reason: string } {
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const missing = error.keyword === 'required' ? (error.params as { missingProperty?: string }).missingProperty : undefined;
  const field = missing ? (path ? `${path}.${missing}` : missing) : path || '(arguments)';
  return { field, reason: missing ? 'is required' : (error.message ?? 'is invalid') };
}

function resultText(result: McpToolResult): string {
  return result.content
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('\n');
}
