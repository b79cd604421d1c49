import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { readJsonBody, RpcHttpError } from './json-rpc-http';

/** A request body arriving in the given chunks, without Content-Length (as with chunked encoding). */
const requestOf = (chunks: Buffer[], headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  Object.assign(Readable.from(chunks), { headers }) as unknown as IncomingMessage;

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => (error instanceof RpcHttpError ? { status: error.status, code: error.code } : error),
  );

describe('readJsonBody', () => {
  it('parses a body split anywhere, even inside a multi-byte character', async () => {
    const bytes = Buffer.from(JSON.stringify({ text: 'café ☕' }));
    const cut = bytes.indexOf(0xe2) + 1;
    await expect(readJsonBody(requestOf([bytes.subarray(0, cut), bytes.subarray(cut)]), 1000)).resolves.toEqual({ text: 'café ☕' });
  });

  it('counts the bytes as they stream in and refuses the body once it passes the limit', async () => {
    const chunk = Buffer.from('x'.repeat(400));
    await expect(refusal(readJsonBody(requestOf([chunk, chunk, chunk]), 1000))).resolves.toEqual({ status: 413, code: -32000 });
    await expect(
      refusal(readJsonBody(requestOf([chunk], { 'content-type': 'application/json', 'content-length': '1001' }), 1000)),
    ).resolves.toEqual({
      status: 413,
      code: -32000,
    });
  });

  it('gives undefined for an empty body and refuses other media types or invalid JSON', async () => {
    await expect(readJsonBody(requestOf([]), 1000)).resolves.toBeUndefined();
    await expect(refusal(readJsonBody(requestOf([Buffer.from('{}')], {}), 1000))).resolves.toEqual({ status: 415, code: -32000 });
    await expect(refusal(readJsonBody(requestOf([Buffer.from('{}')], { 'content-type': 'application/jsonx' }), 1000))).resolves.toEqual({
      status: 415,
      code: -32000,
    });
    await expect(refusal(readJsonBody(requestOf([Buffer.from('{"a":')]), 1000))).resolves.toEqual({ status: 400, code: -32700 });
    await expect(refusal(readJsonBody(requestOf([Buffer.from('{"constructor":{"prototype":{"x":1}}}')]), 1000))).resolves.toEqual({
      status: 400,
      code: -32700,
    });
  });
});
