import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, ErrorCode } from './app-error';

export const JSON_MEDIA_TYPE = 'application/json';
export const MULTIPART_MEDIA_TYPE = 'multipart/form-data';

/** What the message of a 415 tells a client to send, by the media type a route takes. */
const WHAT_TO_SEND: Record<string, string> = {
  [JSON_MEDIA_TYPE]: 'a JSON body with Content-Type: application/json',
  [MULTIPART_MEDIA_TYPE]: 'a multipart/form-data body with a "file" part (and an optional "name" field)',
};

/** Marks a route whose body is not JSON; every other route with a body takes application/json. */
export const Consumes = (mediaType: typeof MULTIPART_MEDIA_TYPE) => RouteConfig({ consumes: mediaType });

/** `Text/Plain; charset=utf-8` -> `text/plain`. */
function mediaTypeOf(contentType: string | undefined): string | undefined {
  const type = contentType?.split(';')[0].trim().toLowerCase();
  return type || undefined;
}

const hasBody = (request: FastifyRequest) =>
  request.headers['transfer-encoding'] !== undefined ||
  (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0');

function expectedMediaType(request: FastifyRequest): string {
  return (request.routeOptions.config as { consumes?: string } | undefined)?.consumes ?? JSON_MEDIA_TYPE;
}

function unsupported(request: FastifyRequest): AppError {
  const expected = expectedMediaType(request);
  const got = request.headers['content-type'] ? `Content-Type ${request.headers['content-type']}` : 'no Content-Type';
  return new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `This endpoint takes ${WHAT_TO_SEND[expected] ?? expected}; got ${got}`, {
    details: { expected },
  });
}

/**
 * A body of a media type the route does not take is refused with 415 before it is read, saying
 * what to send. Fastify also parses text/plain by default, which no route takes (a client sending
 * JSON as text/plain, like fetch() with a string body and no header, hears what to change). A POST
 * without a body needs no Content-Type (publish, cancel). The MCP endpoints answer on their own
 * before this runs (they hijack the reply in onRequest) and refuse another media type in JSON-RPC.
 */
export function refuseUnsupportedMediaTypes(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('text/plain');
  // An unknown path stays a 404 whatever its body: nothing there takes one.
  fastify.addContentTypeParser('*', (request, _payload, done) => done(request.is404 ? null : unsupported(request), undefined));
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    if (!request.is404 && hasBody(request)) {
      const type = mediaTypeOf(request.headers['content-type']);
      if (type !== undefined && type !== expectedMediaType(request)) return done(unsupported(request), payload);
    }
    done(null, payload);
  });
}
