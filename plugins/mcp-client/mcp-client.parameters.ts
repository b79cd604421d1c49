import { IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { CredentialParameter, HttpUrlParameter, LoadOptionsContext, Parameter, ParameterOption } from 'workflow-collection-service/sdk';

/** The dropdown of `tool`: the tools the server at the node's `url` lists, asked as the user building the workflow. */
export async function mcpToolOptions(ctx: LoadOptionsContext): Promise<ParameterOption[]> {
  const { url, credential } = ctx.parameters;
  if (typeof url !== 'string' || !url) return [];
  const session = await ctx.mcp.connect({ url, ...(typeof credential === 'string' && credential ? { credential } : {}) }, ctx.signal);
  try {
    const tools = await session.listTools();
    return tools.map((tool) => ({
      value: tool.name,
      label: tool.name,
      ...(tool.description ? { description: tool.description.slice(0, 300) } : {}),
    }));
  } finally {
    await session.close();
  }
}

export class McpClientParameters {
  @HttpUrlParameter({
    displayName: 'Server URL',
    description: "The MCP server's Streamable HTTP endpoint, e.g. https://mcp.example.com/mcp. Reached through the outbound guard.",
    schema: { examples: ['https://mcp.example.com/mcp'] },
  })
  url: string;

  @CredentialParameter({
    description:
      'The credential (`crd_...`) sent with every request to the server (usually a bearer token): injected at send time, never visible to the run.',
    types: ['bearer', 'header', 'query', 'basic', 'oauth2-client-credentials'],
  })
  credential?: string;

  @Parameter({
    displayName: 'Tool',
    description: 'The tool to call, as the server names it; the dropdown lists the tools of the server at `url`.',
    schema: { examples: ['get_weather'] },
    loadOptions: mcpToolOptions,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  tool: string;

  @Parameter({
    displayName: 'Arguments',
    description:
      "The tool's arguments, a JSON object checked against its input schema before the call; as an expression, e.g. `{city: input.city}`.",
    schema: { examples: [{ city: 'Paris' }] },
  })
  @IsOptional()
  @IsObject()
  arguments: Record<string, unknown> = {};
}
