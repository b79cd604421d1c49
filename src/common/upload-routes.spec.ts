import Fastify, { FastifyRequest } from 'fastify';
import { MULTIPART_MEDIA_TYPE } from './media-types';
import { acceptUploads } from './upload-routes';

const FORM = [
  '--b',
  'Content-Disposition: form-data; name="file"; filename="a.txt"',
  'Content-Type: text/plain',
  '',
  'hello',
  '--b--',
  '',
].join('\r\n');

describe('acceptUploads', () => {
  it('parses uploads on the routes that take them, and runs the cleanup after their responses only', async () => {
    const fastify = Fastify();
    acceptUploads(fastify, { limits: { fileSize: 3, files: 1 } });
    const cleaned: string[] = [];
    // What the plugin's response hook calls; recorded instead, per route.
    const watch = (request: FastifyRequest) => {
      request.cleanRequestFiles = async () => void cleaned.push(request.routeOptions.url!);
    };
    fastify.post('/upload', { config: { consumes: MULTIPART_MEDIA_TYPE } }, async (request, reply) => {
      watch(request);
      try {
        for await (const part of request.parts()) if (part.type === 'file') await part.toBuffer();
      } catch (error) {
        return reply.code(413).send({ error: (error as Error).message });
      }
      return { multipart: request.isMultipart() };
    });
    fastify.post('/webhook', async (request) => {
      watch(request);
      return { ok: true };
    });
    try {
      const headers = { 'content-type': 'multipart/form-data; boundary=b' };
      const upload = await fastify.inject({ method: 'POST', url: '/upload', headers, payload: FORM });
      // The limit given still holds: "hello" is 5 bytes against 3.
      expect(upload.statusCode).toBe(413);
      const webhook = await fastify.inject({ method: 'POST', url: '/webhook', payload: { a: 1 } });
      expect(webhook.json()).toEqual({ ok: true });
      expect(cleaned).toEqual(['/upload']);
    } finally {
      await fastify.close();
    }
  });
});
