import type { FieldProblem } from './api-types';
import { session } from './session';

export type { FieldProblem };

/** The service's one error body `{code, message, details?, requestId}`, as thrown to the pages. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly requestId?: string,
  ) {
    super(message);
  }

  /** Validation failures list each bad field in `details.fields`. */
  get fields(): FieldProblem[] {
    const fields = (this.details as { fields?: unknown } | undefined)?.fields;
    return Array.isArray(fields) ? (fields as FieldProblem[]) : [];
  }
}

type Listener = () => void;
const unauthenticated = new Set<Listener>();

/** Called when the key stops working (revoked, expired): the shell goes back to the sign-in page. */
export function onUnauthenticated(listener: Listener): () => void {
  unauthenticated.add(listener);
  return () => unauthenticated.delete(listener);
}

export interface RequestOptions {
  body?: unknown;
  form?: FormData;
  /** Overrides the key of the session (the sign-in page tries a key before keeping it). */
  key?: string;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** Calls the REST API beside the console with the session's key; an error answer throws ApiError. */
export async function api<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key ?? session.key();
  if (key) headers['x-api-key'] = key;
  let body: BodyInit | undefined;
  if (options.form) body = options.form;
  else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body, signal: options.signal });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, 'NETWORK', 'The service did not answer: check that it is running');
  }
  const text = await response.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  if (response.ok) return parsed as T;
  const error = parsed && typeof parsed === 'object' ? parsed : {};
  const failure = new ApiError(
    response.status,
    String(error.code ?? `HTTP_${response.status}`),
    String(error.message ?? (text || response.statusText)),
    error.details,
    error.requestId,
  );
  if (response.status === 401 && options.key === undefined) for (const listener of unauthenticated) listener();
  throw failure;
}

export const encode = encodeURIComponent;

/** `?a=1&b=2` from the defined entries. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== '');
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}` : '';
}
