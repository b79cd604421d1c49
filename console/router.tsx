import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((listener) => listener());
window.addEventListener('popstate', notify);

/** Client-side routes are real paths under /console: the server answers each with the app. */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = BASE + path;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.scrollTo(0, 0);
  notify();
}

export interface Location {
  path: string;
  params: URLSearchParams;
}

const current = (): Location => {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return { path: path === '' ? '/' : path, params: new URLSearchParams(location.search) };
};

export function useLocation(): Location {
  const [value, setValue] = useState(current);
  useEffect(() => {
    const update = () => setValue(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return value;
}

/** Replaces the query string of the current page, e.g. the filters of a list, without a history entry. */
export function setQuery(params: Record<string, string | number | undefined>): void {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') search.set(k, String(v));
  const text = search.toString();
  history.replaceState(null, '', location.pathname + (text ? `?${text}` : ''));
  notify();
}

type AnchorProps = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'> & { href: string; children: ComponentChildren };

/** An ordinary link (open in a new tab works) that navigates in place on a plain click. */
export function Link({ href, children, ...rest }: AnchorProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={BASE + href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
