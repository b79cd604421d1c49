// The baseline every HTTP figure is compared with: a bare Fastify hello-world route.
const fastify = require('fastify')({ logger: false });
fastify.get('/health', async () => ({ status: 'ok' }));
fastify.get('/hello', async () => ({ hello: 'world' }));
fastify.post('/hello', async () => ({ hello: 'world' }));
fastify.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => fastify.close().then(() => process.exit(0)));
