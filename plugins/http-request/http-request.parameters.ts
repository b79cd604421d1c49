import { IsIn, IsNotEmpty, IsOptional, IsString, Matches } from 'class-validator';
import { CREDENTIAL_ID, credentialIdMessage, Parameter } from 'workflow-collection-service/sdk';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
export type HttpRequestMethod = (typeof HTTP_METHODS)[number];
export const RESPONSE_TYPES = ['json', 'text'] as const;
export const FAIL_ON = ['never', '5xx', 'non-2xx'] as const;
export type FailOn = (typeof FAIL_ON)[number];

export class HttpRequestParameters {
  @Parameter({ displayName: 'Method', description: 'HTTP method of the request.' })
  @IsIn(HTTP_METHODS)
  method: HttpRequestMethod;

  @Parameter({
    displayName: 'URL',
    description: 'Target URL. As an expression: `${input.path}` insertions in text, or one expression such as `input.url`.',
    schema: { examples: ['https://api.example.com/items', 'https://api.example.com/items/${input.id}'] },
  })
  @IsString()
  @IsNotEmpty()
  url: string;

  @Parameter({
    displayName: 'Headers',
    description:
      'A JSON object of header names and string values, e.g. {"x-api-key": "..."}. As an expression its object result is serialised, e.g. {"x-api-key": variables.apiKey}.',
    schema: { contentMediaType: 'application/json' },
  })
  @IsOptional()
  @IsString()
  headers?: string;

  @Parameter({
    displayName: 'Body',
    description:
      'Request body, written in the format of the Content-Type header: JSON text for application/json (the default when the body is JSON), a URL-encoded string (or a JSON object) for application/x-www-form-urlencoded, anything for text/plain. As an expression its object result is serialised, e.g. {"text": input.query, "top_k": "5"}.',
  })
  @IsOptional()
  @IsString()
  body?: string;

  @Parameter({ displayName: 'Response type', description: '`json` parses the response body as JSON; `text` keeps it as text.' })
  @IsOptional()
  @IsIn(RESPONSE_TYPES)
  responseType: 'json' | 'text' = 'json';

  @Parameter({
    displayName: 'Fail on',
    description:
      'Which statuses fail the node instead of being data. `never` (the default): every status is data in `response.status`, so a 500 goes on to the next node like a 200. `5xx`: a server error fails the node. `non-2xx`: any status outside 200-299 fails it. A failing status is an upstream error naming the status: retryOnFail tries again on 408, 425, 429 and 5xx, and onError applies (errorOutput routes the failure to the `error` output). Choose `5xx` (or `non-2xx`) unless the next nodes look at the status themselves.',
  })
  @IsOptional()
  @IsIn(FAIL_ON)
  failOn: FailOn = 'never';

  @Parameter({
    displayName: 'Credential',
    description:
      'A credential (`crd_...`, see /api/v1/credentials) the service injects at send time: a bearer token, basic auth, an API key header or query parameter, or an OAuth2 client-credentials token. Its value is never visible to expressions, the run record, errors or logs, and a header carrying it is dropped if a redirect leads to another origin. The user the run acts as must be allowed to use it.',
    credential: true,
  })
  @IsOptional()
  @IsString()
  @Matches(CREDENTIAL_ID, { message: credentialIdMessage })
  credential?: string;
}
