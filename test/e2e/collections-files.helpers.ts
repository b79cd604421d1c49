import { readFile } from 'node:fs/promises';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';
import { fixturePath } from '../fixtures/fixtures';
import { TestApp } from '../utils/test-app';

export interface FixtureServer {
  /** `http://<host>:<port>` as given to start. */
  url: string;
  port: number;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * Serves test/fixtures on 127.0.0.1 with no Content-Type (so detection works from the bytes), plus:
 * `/status/<code>` answers that status; `/redirect?to=<url>` redirects there; `/bytes/<n>` sends n
 * bytes of text.
 */
export async function startFixtureServer(hostName = '127.0.0.1'): Promise<FixtureServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fixtures');
    requests.push(url.pathname);
    const status = /^\/status\/(\d{3})$/.exec(url.pathname);
    if (status) {
      res.writeHead(Number(status[1]), { 'content-type': 'text/plain' }).end('scripted status');
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      return;
    }
    const bytes = /^\/bytes\/(\d+)$/.exec(url.pathname);
    if (bytes) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(Number(bytes[1]), 'a'));
      return;
    }
    readFile(fixturePath(basename(url.pathname))).then(
      (body) => res.writeHead(200).end(body),
      () => res.writeHead(404).end('not found'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${hostName}:${port}`,
    port,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Polls the file until its status is one of `statuses`; fails with the last seen record on timeout. */
export async function waitForFile(
  t: TestApp,
  collectionId: string,
  fileId: string,
  statuses: string[] = ['indexed', 'error'],
  timeoutMs = 90_000,
  key?: string,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const res = await t.request('GET', `/api/v1/collections/${collectionId}/files/${fileId}`, { key });
    last = res.body;
    if (res.status === 200 && statuses.includes(res.body.status)) return res.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`file ${fileId} did not reach ${statuses.join('|')} in ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

export async function createCollection(t: TestApp, name: string, key?: string): Promise<string> {
  const res = await t.request('POST', '/api/v1/collections', { body: { name }, key });
  if (res.status !== 201) throw new Error(`create collection: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Small text files, added as data: URLs: quick to ingest, and each one's text is known. */
export async function addNotes(t: TestApp, collectionId: string, count: number): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const text = `Note number ${i}: the ${i % 2 ? 'heron' : 'otter'} crossed the river at mile ${i * 3}.`;
    const res = await t.request('POST', `/api/v1/collections/${collectionId}/files`, {
      body: { name: `note-${String(i).padStart(2, '0')}.txt`, url: `data:text/plain;base64,${Buffer.from(text).toString('base64')}` },
    });
    if (res.status !== 201) throw new Error(`add note: ${res.status} ${JSON.stringify(res.body)}`);
    texts.set(res.body.id, text);
  }
  return texts;
}

/** Uploads `bytes` as multipart, as a browser or curl -F does. */
export async function upload(
  t: TestApp,
  collectionId: string,
  name: string,
  bytes: Buffer,
  type = 'application/octet-stream',
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  const res = await fetch(`${t.url}/api/v1/collections/${collectionId}/files/upload`, {
    method: 'POST',
    headers: { 'x-api-key': t.admin.key },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as any };
}
