import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parse as parseForm } from 'node:querystring';
import { parse as secureJsonParse } from 'secure-json-parse';
import { AppError, ErrorCode } from './app-error';

export const JSON_MEDIA_TYPE = 'application/json';
export const MULTIPART_MEDIA_TYPE = 'multipart/form-data';
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

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

/**
 * Fastify's defaults, which Nest's parser used too: a `__proto__` key refused, and a `constructor`
 * key holding a `prototype` (what deep merges are polluted through). A `constructor` key holding
 * anything else is kept: a run's input may hold one.
 */
const JSON_PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;
/** What secure-json-parse throws for either. */
const FORBIDDEN_PROTO = 'Object contains forbidden prototype property';

const malformed = (reason: string) => new AppError(ErrorCode.MALFORMED_JSON, `Malformed JSON body: ${reason}`);

/**
 * The body parsers, in place of Nest's (`bodyParser: false`). JSON bodies are parsed as Fastify's
 * own parser parses them (secure-json-parse, same options), but a refusal says what is wrong:
 * Fastify's answers every failure "Body is not valid JSON", a `__proto__` key among them. Now a
 * syntax error names itself and its position, and a `__proto__` key is a VALIDATION_FAILED of the
 * body (secure-json-parse says no more than that it found one, so not where). Form bodies, which only an approval page's form sends (every other route refuses them
 * first: refuseUnsupportedMediaTypes), become an object of strings, a name given twice an array.
 */
export function parseBodies(fastify: FastifyInstance): void {
  fastify.addContentTypeParser(FORM_MEDIA_TYPE, { parseAs: 'string' }, (_request, body, done) => done(null, parseForm(body as string)));
  fastify.removeContentTypeParser(JSON_MEDIA_TYPE);
  fastify.addContentTypeParser(JSON_MEDIA_TYPE, { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.length === 0) return done(malformed('the body is empty (send a JSON value, or no Content-Type)'), undefined);
    let parsed: unknown;
    try {
      parsed = secureJsonParse(text, null, JSON_PARSE_OPTIONS);
    } catch (error) {
      const message = (error as Error).message;
      return done(
        message === FORBIDDEN_PROTO
          ? AppError.validation([
              { field: 'body', reason: 'holds a key named "__proto__", or a "constructor" holding "prototype": not accepted' },
            ])
          : malformed(message),
        undefined,
      );
    }
    done(null, parsed);
  });
}
