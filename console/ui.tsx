import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, FieldProblem } from './api-client';
import { json, localTime } from './format';

/**
 * Text a user wrote (a name, a file name, an error that quotes one), isolated from the text around
 * it: a right-to-left override (U+202E) in it cannot reverse the console's own text after it.
 * Every such string on a page goes through here.
 */
export function UserText({ text }: { text: string | null | undefined }) {
  return <bdi>{text ?? ''}</bdi>;
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

export function Time({ iso }: { iso: string | null | undefined }) {
  return iso ? (
    <time dateTime={iso} title={iso}>
      {localTime(iso)}
    </time>
  ) : (
    <span>—</span>
  );
}

export function FieldList({ fields }: { fields: readonly FieldProblem[] }) {
  if (!fields.length) return null;
  return (
    <ul class="fields">
      {fields.map((f, i) => (
        <li key={i}>
          <code>{f.field}</code> {f.reason}
        </li>
      ))}
    </ul>
  );
}

/** An API error as the user needs it: the message, and each bad field with its reason. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const apiError = error instanceof ApiError ? error : null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="error" role="alert">
      <strong>
        <UserText text={message} />
      </strong>
      {apiError && apiError.status > 0 && (
        <span class="muted">
          {' '}
          ({apiError.code}, HTTP {apiError.status}
          {apiError.requestId ? `, request ${apiError.requestId}` : ''})
        </span>
      )}
      {apiError && <FieldList fields={apiError.fields} />}
    </div>
  );
}

export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {value === undefined ? '(none)' : json(value)}
    </pre>
  );
}

export function Pager({
  offset,
  limit,
  total,
  onChange,
}: {
  offset: number;
  limit: number;
  total: number;
  onChange: (offset: number) => void;
}) {
  if (total <= limit && offset === 0) return null;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span>
        {total ? offset + 1 : 0}–{last} of {total}
      </span>
      <button type="button" disabled={last >= total} onClick={() => onChange(offset + limit)}>
        Next
      </button>
    </nav>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section aria-label={title}>
      <div class="section-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Loads with `load` whenever `deps` change; `reload` loads again without clearing what is shown. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const run = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await load();
      if (mine !== generation.current) return;
      setData(value);
      setError(null);
    } catch (failure) {
      if (mine === generation.current) setError(failure);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    setData(undefined);
    void run();
  }, [run]);
  return { data, error, loading, reload: run };
}

/** Calls `tick` every `ms` while `active`, one call at a time. */
export function usePolling(tick: () => Promise<unknown>, ms: number, active: boolean): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    let stopped = false;
    let timer: number | undefined;
    const loop = async () => {
      try {
        await latest.current();
      } finally {
        if (!stopped) timer = window.setTimeout(loop, ms);
      }
    };
    timer = window.setTimeout(loop, ms);
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [active, ms]);
}

/** State of one action button: running while its promise is pending, its error kept until the next try. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}
