import { INestApplication } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, getSchemaPath, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ErrorBodyDto, FieldErrorDto } from './error-body.dto';

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Workflow and collection service API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-init.js"></script>
</body>
</html>`;

const INIT = "window.ui = SwaggerUIBundle({ url: '/docs/json', dom_id: '#swagger-ui', deepLinking: true });";

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * What the API explorer may load and who may frame it: people type their API key into it, so no
 * other site may frame it (clickjacking) and it runs only its own scripts. Swagger UI sets inline
 * styles, hence `'unsafe-inline'` for styles alone.
 */
const DOCS_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** `/docs` or a path under it, with or without a query string. */
export const isUnderDocs = (url: string): boolean => url.startsWith('/docs') && (url.length === 5 || url[5] === '/' || url[5] === '?');

/**
 * OpenAPI JSON at /docs/json and the Swagger UI at /docs. The UI's few assets are served from
 * swagger-ui-dist directly, which spares a static-file plugin for five files. Every answer under
 * /docs carries DOCS_SECURITY_HEADERS.
 */
export function setupApiDocs(app: NestFastifyApplication): void {
  const document = createApiDocument(app);
  SwaggerModule.setup('docs', app, document, { ui: false, raw: ['json'], jsonDocumentUrl: 'docs/json' });

  const fastify = app.getHttpAdapter().getInstance();
  // Runs on every answer of the API: callback-style (an async hook costs a promise each) and no copy of the URL.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (isUnderDocs(request.url)) reply.headers(DOCS_SECURITY_HEADERS);
    done(null, payload);
  });
  const assetsDir = dirname(require.resolve('swagger-ui-dist/package.json'));
  fastify.get('/docs', (_, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  fastify.get('/docs/swagger-ui-init.js', (_, reply) => reply.type('application/javascript; charset=utf-8').send(INIT));
  for (const [name, type] of Object.entries(ASSETS)) {
    // Read on the first request, not at boot (the bundle is 1.5 MB) nor on every one.
    let content: Buffer | undefined;
    fastify.get(`/docs/${name}`, (_, reply) => reply.type(type).send((content ??= readFileSync(join(assetsDir, name)))));
  }
}

/**
 * The OpenAPI document of the app's routes, errors included: what /docs/json serves, and what
 * scripts/api-types.js turns into the console's types (on an app that was created, never listening).
 */
export function createApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Workflow and collection service')
      .setDescription('Collections with semantic search, MCP tools and webhook-triggered workflows.')
      .setVersion('1')
      .addApiKey({ type: 'apiKey', name: 'x-api-key', in: 'header' }, 'api-key')
      .addBearerAuth()
      .build(),
    { extraModels: [ErrorBodyDto, FieldErrorDto] },
  );
  describeErrors(document);
  return document;
}

type Operation = NonNullable<OpenAPIObject['paths'][string]['get']>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The refusals any operation of a kind can give, beside those a route declares itself. */
const GENERIC_ERRORS: [status: string, description: string, applies: (operation: Operation) => boolean][] = [
  [
    '400',
    'A bad parameter or body: details.fields names each bad field and why (VALIDATION_FAILED, MALFORMED_JSON)',
    (op) =>
      Boolean(op.requestBody) ||
      (op.parameters ?? []).some((p) => 'in' in p && (p.in === 'query' || (p.in === 'path' && isNumeric(p.schema)))),
  ],
  ['401', 'No API key, or one that is unknown or revoked (x-api-key or Authorization: Bearer)', (op) => (op.security ?? []).length > 0],
  ['404', 'No such resource, or it is not shared with you', (op) => (op.parameters ?? []).some((p) => 'in' in p && p.in === 'path')],
  ['413', 'The body is larger than the limit', (op) => Boolean(op.requestBody)],
  ['415', 'The body is not of the media type the route takes (application/json unless it says otherwise)', (op) => Boolean(op.requestBody)],
];

const isNumeric = (schema: unknown) => ['integer', 'number'].includes((schema as { type?: string } | undefined)?.type ?? '');

/**
 * Every 4xx and 5xx of every operation answers the one error body (HttpErrorFilter): the refusals
 * a kind of route can give are listed for it, and each error response gets the body's schema.
 */
function describeErrors(document: OpenAPIObject): void {
  const errorBody = { 'application/json': { schema: { $ref: getSchemaPath(ErrorBodyDto) } } };
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      for (const [status, description, applies] of GENERIC_ERRORS) {
        if (!operation.responses[status] && applies(operation)) operation.responses[status] = { description };
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) >= 400 && response && 'description' in response && !response.content) response.content = errorBody;
      }
    }
  }
}
