/**
 * Configuration of the `service-mcp` STDIO program. That program is a client of the service, not
 * the service, so AppConfig is not its configuration; this is the only place it reads the
 * environment. It imports nothing, to keep the program free of the server's dependencies.
 */
export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:3000';

export interface StdioConfig {
  apiKey: string;
  serviceUrl: string;
}

export class StdioConfigError extends Error {
  override name = 'StdioConfigError';
}

export function loadStdioConfig(env: NodeJS.ProcessEnv = process.env): StdioConfig {
  // Clients that keep the remote header in a variable may hand over "Bearer <key>": accept both.
  const apiKey = env.SERVICE_API_KEY?.trim().replace(/^Bearer(\s+|$)/i, '');
  if (!apiKey) {
    throw new StdioConfigError(
      'SERVICE_API_KEY is not set. Set it to an API key of the service (see "Connect an MCP client" in the README), ' +
        'e.g. in the "env" block of your MCP client configuration.',
    );
  }
  const serviceUrl = env.SERVICE_URL?.trim() || DEFAULT_SERVICE_URL;
  if (!/^https?:\/\/[^/]/i.test(serviceUrl) || !URL.canParse(serviceUrl)) {
    throw new StdioConfigError(`SERVICE_URL must be an http(s) URL such as ${DEFAULT_SERVICE_URL}; got "${serviceUrl}".`);
  }
  return { apiKey, serviceUrl };
}
