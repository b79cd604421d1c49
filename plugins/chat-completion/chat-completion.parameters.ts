import { Transform } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateBy } from 'class-validator';
import {
  EndpointCredentialParameter,
  EndpointParameter,
  jsonSchemaRule,
  numeric,
  Parameter,
  TemperatureParameter,
} from 'workflow-collection-service/sdk';

export class ChatCompletionParameters {
  @Parameter({ displayName: 'Model', description: "Model name; left out, the service's LLM_MODEL.", schema: { examples: ['gpt-4o-mini'] } })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  model?: string;

  @Parameter({ displayName: 'System', description: 'System message: how the model should behave.', template: true })
  @IsOptional()
  @IsString()
  @MaxLength(100_000)
  system?: string;

  @Parameter({
    displayName: 'Prompt',
    description: 'The user message; `${...}` insertions are rendered, e.g. `Answer from these passages:\\n${JSON.stringify(input)}`.',
    template: true,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(400_000)
  prompt: string;

  @Parameter({
    displayName: 'Response schema',
    description: 'A JSON Schema: the model is asked for JSON matching it, and the parsed answer is output as `json`.',
    schema: { examples: [{ type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] }] },
  })
  @IsOptional()
  @IsObject()
  @ValidateBy(jsonSchemaRule('responseSchema'))
  responseSchema?: Record<string, unknown>;

  @TemperatureParameter()
  temperature?: number;

  @Parameter({ displayName: 'Max tokens', description: 'Longest answer, in tokens.' })
  @IsOptional()
  @Transform(numeric)
  @IsInt()
  @Min(1)
  @Max(200_000)
  maxTokens?: number;

  @EndpointParameter({
    description:
      "Another OpenAI-compatible server than the service's (LLM_URL): its base URL (with or without /v1), e.g. https://api.openai.com. Reached through the outbound guard; `model` is then required, and `credential` usually is.",
    examples: ['https://api.openai.com', 'http://ollama.internal:11434'],
  })
  endpoint?: string;

  @EndpointCredentialParameter()
  credential?: string;
}
