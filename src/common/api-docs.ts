import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

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
 * OpenAPI JSON at /docs/json and the Swagger UI at /docs. The UI's few assets are served from
 * swagger-ui-dist directly, which spares a static-file plugin for five files.
 */
export function setupApiDocs(app: NestFastifyApplication): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Workflow and collection service')
      .setDescription('Collections with semantic search, MCP tools and webhook-triggered workflows.')
      .setVersion('1')
      .addApiKey({ type: 'apiKey', name: 'x-api-key', in: 'header' }, 'api-key')
      .addBearerAuth()
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { ui: false, raw: ['json'], jsonDocumentUrl: 'docs/json' });

  const fastify = app.getHttpAdapter().getInstance();
  const assetsDir = dirname(require.resolve('swagger-ui-dist/package.json'));
  fastify.get('/docs', (_, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  fastify.get('/docs/swagger-ui-init.js', (_, reply) => reply.type('application/javascript; charset=utf-8').send(INIT));
  for (const [name, type] of Object.entries(ASSETS)) {
    // Read on the first request, not at boot (the bundle is 1.5 MB) nor on every one.
    let content: Buffer | undefined;
    fastify.get(`/docs/${name}`, (_, reply) => reply.type(type).send((content ??= readFileSync(join(assetsDir, name)))));
  }
}
