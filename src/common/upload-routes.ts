import multipart, { FastifyMultipartOptions } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MULTIPART_MEDIA_TYPE } from './media-types';

type OnResponse = (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | void;

/**
 * @fastify/multipart for the routes that take uploads (`@Consumes(MULTIPART_MEDIA_TYPE)`) only.
 * Its parser, request methods and limits are the instance's, as when it is registered app-wide,
 * but the hook it adds for every response (an async one, deleting files a route saved to disk) runs
 * only after the routes that can have any: on a webhook call it was a promise and a call for
 * nothing. Nest adds its routes to the root instance, so the plugin cannot be given a scope of
 * its own; instead its hooks are taken as it registers and given to the upload routes as they are
 * added. Call before the routes are added (before the Nest application is created).
 */
export function acceptUploads(fastify: FastifyInstance, options: FastifyMultipartOptions): void {
  const onResponse: OnResponse[] = [];
  fastify.addHook('onRoute', (route) => {
    if ((route.config as { consumes?: string } | undefined)?.consumes !== MULTIPART_MEDIA_TYPE || onResponse.length === 0) return;
    const own = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
    route.onResponse = [...own, ...onResponse] as typeof route.onResponse;
  });
  const addHook = fastify.addHook;
  const taking = function (this: FastifyInstance, name: string, hook: unknown) {
    if (name === 'onResponse') {
      onResponse.push(hook as OnResponse);
      return this;
    }
    return (addHook as (name: string, hook: unknown) => FastifyInstance).call(this, name, hook);
  };
  fastify.addHook = taking as FastifyInstance['addHook'];
  let failure: unknown;
  try {
    // The plugin shares the instance (fastify-plugin), as register would give it.
    multipart.call(fastify, fastify, options, (error?: Error) => (failure = error));
  } finally {
    fastify.addHook = addHook;
  }
  if (failure) throw failure;
}
