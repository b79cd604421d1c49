import { render, type JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onUnauthenticated } from './api-client';
import type { Me } from './api-types';
import { AccountPage } from './pages/account.page';
import { ChatPage } from './pages/chat.page';
import { ApprovalsPage } from './pages/approvals.page';
import { CollectionPage } from './pages/collection.page';
import { CollectionsPage } from './pages/collections.page';
import { ConsentPage } from './pages/consent.page';
import { CredentialsPage } from './pages/credentials.page';
import { RunPage } from './pages/run.page';
import { RunsPage } from './pages/runs.page';
import { SignInPage } from './pages/sign-in.page';
import { UsersPage } from './pages/users.page';
import { WorkflowPage } from './pages/workflow.page';
import { WorkflowsPage } from './pages/workflows.page';
import { Link, navigate, useLocation } from './router';
import { session } from './session';
import { ErrorBox } from './ui';

/** A path segment as the id it encodes; null for a malformed escape (%E0), which names no page. */
function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Each page of an id: a segment that does not decode is the Not found page, not a blank app. */
const byId =
  (page: (id: string) => JSX.Element) =>
  ([segment]: string[]) => {
    const id = decoded(segment);
    return id === null ? null : page(id);
  };

const ROUTES: { pattern: RegExp; section: string; page: (match: string[], me: Me) => JSX.Element | null }[] = [
  { pattern: /^\/(?:collections\/?)?$/, section: 'collections', page: () => <CollectionsPage /> },
  { pattern: /^\/collections\/([^/]+)$/, section: 'collections', page: byId((id) => <CollectionPage key={id} id={id} />) },
  { pattern: /^\/workflows\/?$/, section: 'workflows', page: () => <WorkflowsPage /> },
  { pattern: /^\/workflows\/([^/]+)$/, section: 'workflows', page: byId((id) => <WorkflowPage key={id} id={id} />) },
  { pattern: /^\/workflows\/([^/]+)\/chat$/, section: 'workflows', page: byId((id) => <ChatPage key={id} id={id} />) },
  { pattern: /^\/runs\/?$/, section: 'runs', page: () => <RunsPage /> },
  { pattern: /^\/runs\/([^/]+)$/, section: 'runs', page: byId((id) => <RunPage key={id} id={id} />) },
  { pattern: /^\/approvals\/?$/, section: 'approvals', page: () => <ApprovalsPage /> },
  { pattern: /^\/credentials\/?$/, section: 'credentials', page: () => <CredentialsPage /> },
  { pattern: /^\/account\/?$/, section: 'account', page: (_, me) => <AccountPage me={me} /> },
  { pattern: /^\/users\/?$/, section: 'users', page: () => <UsersPage /> },
  // An OAuth client's authorization request: the user, signed in, consents (or not).
  { pattern: /^\/oauth\/([^/]+)$/, section: 'account', page: byId((uid) => <ConsentPage key={uid} uid={uid} />) },
];

function App() {
  const { path } = useLocation();
  const [me, setMe] = useState<Me | null>(null);
  const [checking, setChecking] = useState(session.key() !== null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => onUnauthenticated(() => signOut('Your API key is no longer accepted: sign in again.')), []);
  useEffect(() => {
    // A reload keeps the key: check it is still good before showing anything.
    if (!session.key()) return;
    api<Me>('GET', '/api/v1/me')
      .then(setMe, setError)
      .finally(() => setChecking(false));
  }, []);

  const signOut = (reason?: string) => {
    session.signOut();
    setMe(null);
    setError(reason ? new Error(reason) : null);
    navigate('/', { replace: true, force: true });
  };

  if (checking) return <p class="muted loading">Loading…</p>;
  if (!me) {
    return (
      <>
        <header class="top">
          <span class="brand">Service console</span>
        </header>
        <ErrorBox error={error} />
        <SignInPage
          onSignedIn={(key, who) => {
            session.signIn(key);
            setError(null);
            setMe(who);
          }}
        />
      </>
    );
  }

  const route = ROUTES.map((r) => ({ r, match: r.pattern.exec(path) })).find((x) => x.match);
  const page = route ? route.r.page(route.match!.slice(1), me) : null;
  const [menuOpen, setMenuOpen] = useState(false);
  return (
    <>
      <header class="top">
        <Link href="/" class="brand">
          Service console
        </Link>
        {/* On a phone the sections fold behind one button, so the header stays one line. */}
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav aria-label="Main" id="main-nav" class={menuOpen ? 'open' : ''} onClick={() => setMenuOpen(false)}>
          {[
            ['collections', '/collections', 'Collections'],
            ['workflows', '/workflows', 'Workflows'],
            ['runs', '/runs', 'Runs'],
            ['approvals', '/approvals', 'Approvals'],
            ['credentials', '/credentials', 'Credentials'],
            ...(me.isAdmin ? [['users', '/users', 'Users']] : []),
          ].map(([section, href, label]) => (
            <Link key={section} href={href} aria-current={route?.r.section === section ? 'page' : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <span class="who">
          <Link href="/account" aria-current={route?.r.section === 'account' ? 'page' : undefined} title="Your account and API keys">
            {me.name}
          </Link>
          <button type="button" class="link" onClick={() => signOut()}>
            Sign out
          </button>
        </span>
      </header>
      {page ?? (
        <main>
          <h1>Not found</h1>
          <p>
            No page at <code>{path}</code>. <Link href="/">Go to the collections</Link>.
          </p>
        </main>
      )}
    </>
  );
}

render(<App />, document.getElementById('app')!);
