import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
} from 'class-validator';
import {
  collectionOptions,
  CREDENTIAL_ID,
  EndpointCredentialParameter,
  EndpointParameter,
  jsonSchemaRule,
  numeric,
  Parameter,
  TemperatureParameter,
} from 'workflow-collection-service/sdk';

/** An outside MCP server whose tools the agent may call. */
export interface AgentMcpServer {
  url: string;
  credential?: string;
  /** Only these of its tools (all when left out). */
  tools?: string[];
}

/** Why an entry of `mcpServers` is refused, or null. */
function mcpServerProblem(entry: unknown): string | null {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return 'must be an object {url, credential?, tools?}';
  const { url, credential, tools, ...others } = entry as Record<string, unknown>;
  const unknown = Object.keys(others);
  if (unknown.length) return `has unknown field ${unknown[0]}`;
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url) || !URL.canParse(url)) return 'url must be an http(s) URL';
  if (credential !== undefined && (typeof credential !== 'string' || !CREDENTIAL_ID.test(credential)))
    return 'credential must be a credential id (crd_...)';
  if (tools !== undefined && (!Array.isArray(tools) || tools.some((t) => typeof t !== 'string' || !t) || tools.length > 100))
    return 'tools must be a list of tool names';
  return null;
}

export class AiAgentParameters {
  @Parameter({
    displayName: 'Model',
    description: "Model name; left out, the service's LLM_MODEL (required with `endpoint`).",
    schema: { examples: ['gpt-4o-mini'] },
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  model?: string;

  @EndpointParameter({
    description:
      "Another OpenAI-compatible server with tool calling than the service's (LLM_URL): its base URL, e.g. https://api.openai.com. Reached through the outbound guard; `model` is then required, and `credential` usually is.",
    examples: ['https://api.openai.com'],
  })
  endpoint?: string;

  @EndpointCredentialParameter()
  credential?: string;

  @TemperatureParameter()
  temperature?: number;

  @Parameter({
    displayName: 'System prompt',
    description: 'How the agent should behave; `${...}` insertions are rendered.',
    template: true,
  })
  @IsOptional()
  @IsString()
  @MaxLength(100_000)
  systemPrompt?: string;

  @Parameter({
    displayName: 'Message',
    description: 'The user message the agent answers; `${...}` insertions are rendered, e.g. `${input.question}`.',
    template: true,
    schema: { examples: ['How long does the dough rise?'] },
  })
  @IsString()
  @MinLength(1)
  @MaxLength(400_000)
  message: string;

  @Parameter({
    displayName: 'Collections',
    description:
      'Collections the agent may search (tool `search_collections`), with the rights of the user the run acts as; hits carry fileId, fileName, passage and distance so the answer can cite them.',
    loadOptions: collectionOptions,
    collection: 'viewer',
  })
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  collections: string[] = [];

  @Parameter({ displayName: 'Passages per search', description: 'Passages a search returns to the model, 1 to 20.' })
  @Transform(numeric)
  @IsInt()
  @Min(1)
  @Max(20)
  searchTopK: number = 5;

  @Parameter({
    displayName: 'Workflows',
    description:
      "Published workflows the agent may run as tools (`wfl_...`): each one's mcp-trigger gives the tool's name, description and input schema. The run's user needs the editor role on them.",
  })
  @IsArray()
  @ArrayMaxSize(20)
  @Matches(/^\S{1,100}$/, { each: true, message: 'each workflow must be a workflow id such as wfl_...' })
  workflows: string[] = [];

  @Parameter({
    displayName: 'MCP servers',
    description:
      'Outside MCP servers (Streamable HTTP) whose tools the agent may call: `[{url, credential?, tools?}]`, `tools` keeping only those names. A fixed value: each credential is one whoever saves the workflow may use, injected at send time. Reached through the outbound guard.',
    schema: {
      items: {
        type: 'object',
        properties: {
          url: { type: 'string', format: 'uri' },
          credential: { type: 'string', format: 'credential' },
          tools: { type: 'array', items: { type: 'string' } },
        },
        required: ['url'],
        additionalProperties: false,
      },
      examples: [[{ url: 'https://mcp.example.com/mcp' }]],
    },
    credentialItems: ['bearer', 'header', 'query', 'basic', 'oauth2-client-credentials'],
  })
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateBy({
    name: 'mcpServers',
    validator: {
      validate: (value: unknown) => Array.isArray(value) && value.every((entry) => mcpServerProblem(entry) === null),
      defaultMessage: (args) => {
        const list = Array.isArray(args?.value) ? (args.value as unknown[]) : [];
        const index = list.findIndex((entry) => mcpServerProblem(entry) !== null);
        return index < 0 ? 'mcpServers must be a list' : `mcpServers[${index}] ${mcpServerProblem(list[index])}`;
      },
    },
  })
  mcpServers: AgentMcpServer[] = [];

  @Parameter({ displayName: 'Max iterations', description: 'Model calls at most; an agent still calling tools then fails the node.' })
  @Transform(numeric)
  @IsInt()
  @Min(1)
  @Max(50)
  maxIterations: number = 8;

  @Parameter({
    displayName: 'Time budget (ms)',
    description: 'The whole loop, model and tool calls included; beyond it the node fails with a timeout.',
  })
  @Transform(numeric)
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  timeBudgetMs: number = 120_000;

  @Parameter({
    displayName: 'Token budget',
    description: 'Prompt and completion tokens of all model calls together (as the endpoint reports them); beyond it the node fails.',
  })
  @IsOptional()
  @Transform(numeric)
  @IsInt()
  @Min(1)
  tokenBudget?: number;

  @Parameter({ displayName: 'Max tokens', description: 'Longest answer of one model call, in tokens.' })
  @IsOptional()
  @Transform(numeric)
  @IsInt()
  @Min(1)
  @Max(200_000)
  maxTokens?: number;

  @Parameter({
    displayName: 'Output schema',
    description:
      'A JSON Schema the final answer must match: it is then JSON, checked, and output parsed as `json`; an answer that does not match is sent back to the model once with the reasons.',
    schema: { examples: [{ type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] }] },
  })
  @IsOptional()
  @IsObject()
  @ValidateBy(jsonSchemaRule('outputSchema'))
  outputSchema?: Record<string, unknown>;

  @Parameter({
    displayName: 'Session key',
    description:
      'Remembers the conversation between runs under this key (as an expression, e.g. `input.sessionId`): earlier messages of the session are sent along. Left out, nothing is remembered.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  sessionKey?: string;

  @Parameter({ displayName: 'Memory window', description: 'Messages of a session kept (the newest ones).' })
  @Transform(numeric)
  @IsInt()
  @Min(2)
  @Max(200)
  memoryWindow: number = 20;

  @Parameter({ displayName: 'Memory TTL (s)', description: 'A session is forgotten this long after its last message.' })
  @Transform(numeric)
  @IsInt()
  @Min(60)
  @Max(31_536_000)
  memoryTtlSeconds: number = 86_400;
}
