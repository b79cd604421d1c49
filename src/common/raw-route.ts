import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify';
import type { ServerResponse } from 'node:http';

/**
 * A route answered from its onRequest hook on the raw Node response (`reply.hijack()`), for
 * handlers that write raw responses themselves (the MCP SDK, oidc-provider): fastify routes, names
 * and logs the request, but reads no body and runs no later hook. `answer` must answer every request.
 */
export function rawRoute(
  scope: FastifyInstance,
  method: HTTPMethods,
  url: string,
  answer: (request: FastifyRequest, response: ServerResponse) => void,
): void {
  scope.route({
    method,
    url,
    exposeHeadRoute: false,
    onRequest: (request, reply, done) => {
      reply.hijack();
      answer(request, reply.raw);
      done();
    },
    // Never reached: the onRequest hook above has answered.
    handler: () => undefined,
  });
}
