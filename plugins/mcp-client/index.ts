import { defineNode, NodeConfigurationError, NodeUpstreamError, SchemaProblem, schemaProblems } from 'workflow-collection-service/sdk';
import { McpClientParameters } from './mcp-client.parameters';

export { McpClientParameters };

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
      if (!listed)
        throw new NodeConfigurationError(`The MCP server at ${new URL(url).origin} has no tool named ${tool}`, {
          details: { parameter: 'tool', tool },
        });
      const problems = argumentProblems(listed.inputSchema, args ?? {});
      if (problems.length) {
        const [first] = problems;
        throw new NodeConfigurationError(`Arguments of tool ${tool}: ${first.field} ${first.reason}`, {
          details: { parameter: 'arguments', fields: problems },
        });
      }
      const result = await session.callTool(tool, args ?? {});
      if (result.isError) {
        throw new NodeUpstreamError(`Tool ${tool} failed: ${result.text.slice(0, 1000) || 'no message'}`, {
          retryable: false,
          details: { tool, content: result.content },
        });
      }
      return result.structuredContent ?? { text: result.text };
    } finally {
      await session.close();
    }
  },
});

/** Each field the tool's schema refuses, named by its path (`city`, `address.zip`; `(arguments)` for the whole object). */
function argumentProblems(schema: Record<string, unknown>, args: Record<string, unknown>): { field: string; reason: string }[] {
  let problems: SchemaProblem[];
  try {
    problems = schemaProblems(schema, args);
  } catch (error) {
    throw new NodeUpstreamError(`The tool's input schema cannot be used: ${(error as Error).message}`, { retryable: false });
  }
  return problems.map(({ path, missing, message }) => ({
    field: missing ? (path ? `${path}.${missing}` : missing) : path || '(arguments)',
    reason: missing ? 'is required' : message,
  }));
}
