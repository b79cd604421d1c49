import { defineNode, NodeConfigurationError, NodeUpstreamError } from 'workflow-collection-service/sdk';
import { FailOn, HttpRequestParameters } from './http-request.parameters';

export { HttpRequestParameters };

export interface HttpRequestOutput {
  response: {
    status: number;
    /** Lower-case names, string values. */
    headers: Record<string, string>;
    body: unknown;
  };
}

const FORM = 'application/x-www-form-urlencoded';
/** How much of a failing response's body its error keeps, for the run record. */
const ERROR_BODY_CHARS = 2000;
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\b/i;

export default defineNode({
  type: 'http-request',
  version: 1,
  displayName: 'HTTP Request',
  description:
    'Sends an HTTP request to any URL and outputs the status, headers and body of the response. A non-2xx status is data, not a failure, unless failOn says otherwise.',
  parameters: HttpRequestParameters,
  defaultRunMode: 'input',
  // GET, PUT and DELETE may be sent again (RFC 9110); a POST or PATCH cut short by a crash is not.
  idempotent: (params) => params.method !== 'POST' && params.method !== 'PATCH',
  async execute(ctx): Promise<HttpRequestOutput> {
    const { method, url, responseType } = ctx.params;
    const headers = parseHeaders(ctx.params.headers);
    const body = ctx.params.body;
    if (body !== undefined && body !== '' && method === 'GET') {
      throw new NodeConfigurationError('A GET request cannot have a body; use POST, PUT or PATCH', { details: { parameter: 'body' } });
    }
    const encoded = body === undefined || body === '' ? undefined : encodeBody(body, headers);
    const response = await ctx.http.fetch(url, { method, headers, body: encoded, credential: ctx.params.credential });
    const decoded = decodeBody(response.body, response.headers['content-type'], responseType);
    if (fails(ctx.params.failOn, response.status)) {
      throw new NodeUpstreamError(`${method} to ${originOf(url)} answered HTTP ${response.status} (failOn "${ctx.params.failOn}")`, {
        status: response.status,
        details: { body: excerpt(decoded) },
      });
    }
    return { response: { status: response.status, headers: response.headers, body: decoded } };
  },
});

function fails(failOn: FailOn, status: number): boolean {
  return failOn === '5xx' ? status >= 500 : failOn === 'non-2xx' ? status < 200 || status > 299 : false;
}

/** Scheme, host and port: a path or query may hold what the error should not repeat. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the URL';
  }
}

/** The body as it was decoded when its JSON is short, else the start of its text. */
function excerpt(body: unknown): unknown {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  if (text.length <= ERROR_BODY_CHARS) return body;
  return `${text.slice(0, ERROR_BODY_CHARS)}... (${text.length} characters)`;
}

function parseHeaders(text: string | undefined): Record<string, string> {
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new NodeConfigurationError(`headers must be a JSON object: ${(error as Error).message}`, { details: { parameter: 'headers' } });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new NodeConfigurationError('headers must be a JSON object of header names and values', { details: { parameter: 'headers' } });
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'object') {
      throw new NodeConfigurationError(`header "${name}" must be a string, not an object`, {
        details: { parameter: 'headers', header: name },
      });
    }
    headers[name.toLowerCase()] = String(value);
  }
  return headers;
}

/** Sets a Content-Type when none was given: JSON when the body is JSON, plain text otherwise. */
function encodeBody(body: string, headers: Record<string, string>): string {
  const declared = headers['content-type'];
  if (!declared) {
    headers['content-type'] = isJson(body) ? 'application/json' : 'text/plain; charset=utf-8';
    return body;
  }
  if (JSON_TYPE.test(declared) && !isJson(body)) {
    throw new NodeConfigurationError(`body is not valid JSON, but Content-Type is ${declared}`, { details: { parameter: 'body' } });
  }
  if (declared.toLowerCase().startsWith(FORM)) return formEncoded(body);
  return body;
}

/** A form body may be written URL-encoded already, or as a JSON object of fields. */
function formEncoded(body: string): string {
  const trimmed = body.trim();
  if (!trimmed.startsWith('{')) return body;
  let fields: unknown;
  try {
    fields = JSON.parse(trimmed);
  } catch {
    return body;
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return body;
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v !== null && v !== undefined) form.append(name, typeof v === 'object' ? JSON.stringify(v) : String(v));
    }
  }
  return form.toString();
}

/** `json` parses what is JSON; a body that is not (an HTML error page, an empty 204) stays text, so the status is never lost. */
function decodeBody(body: Buffer, contentType: string | undefined, responseType: 'json' | 'text'): unknown {
  const text = decodeText(body, contentType);
  if (responseType === 'text') return text;
  if (text.trim() === '') return text === '' ? null : text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function decodeText(body: Buffer, contentType: string | undefined): string {
  const charset = /charset=([^;]+)/i
    .exec(contentType ?? '')?.[1]
    ?.trim()
    .replace(/^"|"$/g, '');
  if (charset && !/^utf-?8$/i.test(charset)) {
    try {
      return new TextDecoder(charset).decode(body);
    } catch {
      // An unknown charset label: UTF-8 is the best guess.
    }
  }
  return body.toString('utf8');
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
