import { IsObject, IsOptional, IsString, Matches, MaxLength, ValidateBy } from 'class-validator';
import { jsonSchemaRule, Parameter } from 'workflow-collection-service/sdk';

export class McpTriggerParameters {
  @Parameter({
    displayName: 'Tool name',
    description: "The tool's name in MCP clients; left empty, it is made from the workflow's name (lower case, words joined by _).",
    schema: { examples: ['lookup_order'] },
  })
  @IsOptional()
  @IsString()
  @Matches(/^[a-zA-Z0-9_-]{1,64}$/, { message: 'toolName must be 1-64 letters, digits, _ or -' })
  toolName?: string;

  @Parameter({
    displayName: 'Description',
    description: "What the tool does and when to call it, written for a model; left empty, the workflow's name is used.",
  })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string;

  @Parameter({
    displayName: 'Input schema',
    description:
      'JSON Schema of the arguments the tool takes (an object); they are checked against it before the run starts and become its input.',
    schema: { examples: [{ type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] }] },
  })
  @IsObject()
  @ValidateBy(jsonSchemaRule('inputSchema', { object: true }))
  inputSchema: Record<string, unknown> = { type: 'object', properties: {} };
}
