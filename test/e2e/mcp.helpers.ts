import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { fixturePath } from '../fixtures/fixtures';

const root = join(__dirname, '..', '..');

/** The compiled stdio program, as the `service-mcp` bin runs it. */
export const STDIO_ENTRY = join(root, 'dist', 'src', 'mcp', 'stdio.js');

const newestSource = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return Math.max(latest, newestSource(path));
    return entry.name.endsWith('.ts') ? Math.max(latest, statSync(path).mtimeMs) : latest;
  }, 0);

/**
 * Builds dist/ when the stdio program is missing or older than its sources (the MCP layer and the
 * input DTOs it validates with, from several folders: all of src/ is the simple bound). Type errors
 * elsewhere in the tree do not stop tsc from emitting, so only a missing output fails.
 */
export function ensureStdioBuild(): void {
  const sources = newestSource(join(root, 'src'));
  if (existsSync(STDIO_ENTRY) && statSync(STDIO_ENTRY).mtimeMs >= sources) return;
  try {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], {
      cwd: root,
      stdio: 'pipe',
    });
  } catch {
    // reported below if nothing was emitted
  }
  if (!existsSync(STDIO_ENTRY) || statSync(STDIO_ENTRY).mtimeMs < sources) throw new Error(`tsc did not emit ${STDIO_ENTRY}`);
}

export interface FixtureFiles {
  url: string;
  close(): Promise<void>;
}

/** Serves test/fixtures on 127.0.0.1, without Content-Type, so the service detects types from bytes. */
export async function serveFixtures(): Promise<FixtureFiles> {
  const server = createServer((req, res) => {
    readFile(fixturePath(basename(new URL(req.url ?? '/', 'http://fixtures').pathname))).then(
      (body) => res.writeHead(200).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** One raw Streamable HTTP request to /mcp, for what the SDK client will not send. */
export async function rawMcp(
  baseUrl: string,
  method: 'POST' | 'GET' | 'DELETE',
  headers: Record<string, string>,
  body?: string,
): Promise<RawResponse> {
  const res = await fetch(`${baseUrl}/mcp`, {
    method,
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  // A 2025 session answers a request on an event stream that ends with the last answer: the JSON-RPC messages in it.
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const messages = sseMessages(text);
    return { status: res.status, headers: res.headers, body: messages.length === 1 ? messages[0] : messages };
  }
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The JSON of each `data:` event of an event-stream body. */
export function sseMessages(text: string): any[] {
  return text
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n'),
    )
    .filter((data) => data.length > 0)
    .map((data) => JSON.parse(data));
}

rawMcp.initializeBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
});

export interface SseReader {
  /** Data of the next event with this name (events of other names are skipped). */
  next(event: string): Promise<string>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens an event stream with fetch (a GET, or the POST `init` says) and parses its events. */
export async function readSseEvents(
  url: string,
  headers: Record<string, string>,
  init: { method?: string; body?: string } = {},
): Promise<SseReader> {
  const controller = new AbortController();
  const res = await fetch(url, { ...init, headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  if (res.status !== 200 || !res.body) throw new Error(`event stream ${url}: HTTP ${res.status}`);
  const events: { event: string; data: string }[] = [];
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  let buffer = '';
  const decoder = new TextDecoder();
  const ended = (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split('\n');
          const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart());
          if (data.length)
            events.push({
              event:
                lines
                  .find((l) => l.startsWith('event:'))
                  ?.slice(6)
                  .trim() ?? 'message',
              data: data.join('\n'),
            });
        }
        wake();
      }
    } catch {
      // aborted by close()
    } finally {
      wake();
    }
  })();
  let done = false;
  void ended.then(() => (done = true));
  return {
    ended,
    close: () => controller.abort(),
    async next(event) {
      for (;;) {
        const index = events.findIndex((e) => e.event === event);
        if (index >= 0) return events.splice(0, index + 1)[index].data;
        if (done) throw new Error(`stream ended before a ${event} event`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

export const MODERN_REVISION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * One 2026-07-28 request to /mcp, at the wire: the `_meta` envelope and the standard headers a
 * client of that revision sends (as the official conformance suite does). For what the SDK's v2
 * client cannot send: it has no runtime for the tasks extension.
 */
export async function modernRpc(
  baseUrl: string,
  key: string,
  method: string,
  params: Record<string, unknown> = {},
  /** `capabilities: null` leaves the envelope's clientCapabilities out. */
  options: { capabilities?: Record<string, unknown> | null; id?: string | number } = {},
): Promise<{ status: number; message: any; messages: any[] }> {
  const name = typeof params.name === 'string' ? params.name : typeof params.taskId === 'string' ? params.taskId : undefined;
  const res = await fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': MODERN_REVISION,
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: options.id ?? 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
          ...(options.capabilities === null ? {} : { 'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? {} }),
          'io.modelcontextprotocol/clientInfo': { name: 'wire', version: '1.0.0' },
        },
      },
    }),
  });
  const text = await res.text();
  const messages = res.headers.get('content-type')?.startsWith('text/event-stream') ? sseMessages(text) : text ? [JSON.parse(text)] : [];
  return { status: res.status, message: messages.find((m) => m.id !== undefined), messages };
}

/** Polls `read` until `done` says so, with a generous deadline for a busy machine. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`still not done after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
