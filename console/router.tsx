import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export const BASE = '/console';

const listeners = new Set<() => void>();
/** The address the app shows: where Back is taken back to when the user stays. */
let shownUrl = location.pathname + location.search;
const notify = () => {
  shownUrl = location.pathname + location.search;
  listeners.forEach((listener) => listener());
};

/** What a page with unsaved work asks before the user leaves it (null: nothing to lose). */
let leaveQuestion: (() => string | null) | null = null;
const mayLeave = () => {
  const question = leaveQuestion?.();
  return !question || window.confirm(question);
};

window.addEventListener('popstate', () => {
  // Back and Forward have already moved the address: put it back when the user stays.
  if (!mayLeave()) history.pushState(null, '', shownUrl);
  else notify();
});
window.addEventListener('beforeunload', (event) => {
  // A reload or closing the tab: the browser asks in its own words.
  if (leaveQuestion?.()) event.preventDefault();
});

/**
 * While `question` says something, leaving the page (a link, Back, a reload, closing the tab)
 * asks first. One page at a time holds the question.
 */
export function useLeaveGuard(question: () => string | null): void {
  const latest = useRef(question);
  latest.current = question;
  useEffect(() => {
    const ask = () => latest.current();
    leaveQuestion = ask;
    return () => {
      if (leaveQuestion === ask) leaveQuestion = null;
    };
  }, []);
}

/** Client-side routes are real paths under /console: the server answers each with the app. */
export function navigate(path: string, options: { replace?: boolean; force?: boolean } = {}): void {
  if (!options.force && !mayLeave()) return;
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
