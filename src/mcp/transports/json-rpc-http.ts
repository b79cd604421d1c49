import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { parse as secureJsonParse } from 'secure-json-parse';
import { nestsDeeperThan, TOO_DEEP } from '../../common/json-depth';

/** JSON-RPC error codes used at the HTTP level, as the SDK's own transport answers them. */
export const RPC_SERVER_ERROR = -32000;
export const RPC_SESSION_NOT_FOUND = -32001;
export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_INTERNAL_ERROR = -32603;

/** A request the MCP endpoints refuse at the HTTP level: the status and the JSON-RPC error to answer with. */
export class RpcHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** A request header's (first) value. */
export const header = (request: { headers: IncomingHttpHeaders }, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const rpcErrorBody = (code: number, message: string, data?: unknown): string =>
  JSON.stringify({ jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id: null });

/** Ends `response` with a JSON body; headers set earlier on it (CORS, request id) are kept. */
export function writeJson(response: ServerResponse, status: number, json: string, sessionId?: string): void {
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) };
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId;
  response.writeHead(status, headers).end(json);
}

export function writeRpcError(response: ServerResponse, error: RpcHttpError): void {
  // The rest of an oversized body is not worth reading: the connection ends with the answer.
  if (error.status === 413) response.setHeader('connection', 'close');
  writeJson(response, error.status, rpcErrorBody(error.code, error.message, error.data));
}

const isJson = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase() === 'application/json';
};

const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;

/**
 * The JSON body of a POST, at most `limit` bytes, parsed as fastify would (`__proto__` and
 * `constructor.prototype` keys refused); undefined for an empty body. Rejects with the RpcHttpError
 * to answer: 415 for another media type, 413 over the limit, 400 (Parse error) for invalid JSON,
 * 400 (Invalid Request) for JSON nested deeper than MAX_JSON_DEPTH.
 */
export function readJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (!isJson(request.headers['content-type'])) {
      return reject(new RpcHttpError(415, RPC_SERVER_ERROR, 'Unsupported Media Type: Content-Type must be application/json'));
    }
    const tooLarge = () => new RpcHttpError(413, RPC_SERVER_ERROR, `Payload Too Large: the body limit is ${limit} bytes`);
    const declared = Number(request.headers['content-length']);
    if (declared > limit) return reject(tooLarge());
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limit) return void chunks.push(chunk);
      cleanup();
      reject(tooLarge());
    };
    const onEnd = () => {
      cleanup();
      if (received === 0) return resolve(undefined);
      const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = secureJsonParse(text, null, PARSE_OPTIONS);
      } catch (error) {
        return reject(new RpcHttpError(400, RPC_PARSE_ERROR, `Parse error: ${(error as Error).message}`));
      }
      if (nestsDeeperThan(body)) return reject(new RpcHttpError(400, RPC_INVALID_REQUEST, `Invalid Request: the body ${TOO_DEEP}`));
      resolve(body);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new RpcHttpError(400, RPC_PARSE_ERROR, `Parse error: the body could not be read (${error.message})`));
    };
    const cleanup = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
  });
}
