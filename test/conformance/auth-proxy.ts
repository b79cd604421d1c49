import { createServer, request as forward, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The conformance CLI speaks to a server without credentials; the service refuses every MCP request
 * without one. This proxy on 127.0.0.1 adds `Authorization: Bearer <key>` to each request (as a
 * configured client does) and passes everything else through unchanged, streams included: the Host
 * and Origin headers the DNS-rebinding scenario sends reach the service as sent.
 */
export async function startAuthProxy(target: string, key: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    const headers = { ...incoming.headers };
    headers.authorization ??= `Bearer ${key}`;
    const proxied = forward(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    proxied.on('error', () => outgoing.destroy());
    outgoing.on('close', () => proxied.destroy());
    incoming.pipe(proxied);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
