import { Transform } from 'class-transformer';
import {
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { CREDENTIAL_ID, credentialIdMessage, numeric, Parameter } from '../../src/sdk';

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
  responseSchema?: Record<string, unknown>;

  @Parameter({ displayName: 'Temperature', description: 'Sampling temperature, 0 (most deterministic) to 2.' })
  @IsOptional()
  @Transform(numeric)
  @IsNumber()
  @Min(0)
  @Max(2)
  temperature?: number;

  @Parameter({ displayName: 'Max tokens', description: 'Longest answer, in tokens.' })
  @IsOptional()
  @Transform(numeric)
  @IsInt()
  @Min(1)
  @Max(200_000)
  maxTokens?: number;

  @Parameter({
    displayName: 'Endpoint',
    description:
      "Another OpenAI-compatible server than the service's (LLM_URL): its base URL (with or without /v1), e.g. https://api.openai.com. Reached through the outbound guard; `model` is then required, and `credential` usually is.",
    schema: { examples: ['https://api.openai.com', 'http://ollama.internal:11434'] },
  })
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }, { message: 'endpoint must be an http(s) URL' })
  endpoint?: string;

  @Parameter({
    displayName: 'Credential',
    description:
      'The credential (`crd_...`) that authenticates to `endpoint`, usually a bearer token: injected at send time, never visible to the run.',
    credential: ['bearer', 'header', 'query', 'oauth2-client-credentials'],
  })
  @ValidateIf((params: ChatCompletionParameters) => params.credential !== undefined)
  @IsString()
  @Matches(CREDENTIAL_ID, { message: credentialIdMessage })
  credential?: string;
}
