import { useState } from 'preact/hooks';
import { api } from '../api-client';
import type { Me } from '../api-types';
import { ErrorBox } from '../ui';

/** Checks the key against /api/v1/me before keeping it, so a typo is said at once. */
export function SignInPage({ onSignedIn }: { onSignedIn: (key: string, me: Me) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await api<Me>('GET', '/api/v1/me', { key: key.trim() });
      onSignedIn(key.trim(), me);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>Sign in</h1>
      <p class="muted">
        Paste an API key. The first one is the service's <code>BOOTSTRAP_API_KEY</code>; or create a user with their first key on the server
        with <code>npm run cli -- user:create --name &lt;your name&gt;</code>. Once signed in, your account page creates more keys, and an
        admin creates users. The key is kept in this tab's session storage until you sign out or close the tab.
      </p>
      <form onSubmit={submit}>
        <label>
          API key
          <input type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy || !key.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorBox error={error} />
    </main>
  );
}
