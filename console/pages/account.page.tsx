import { useState } from 'preact/hooks';
import { api, encode } from '../api-client';
import type { ApiKey, IssuedApiKey, Me } from '../api-types';
import { ErrorBox, Section, Time, useAction, useLoad, UserText } from '../ui';

/** Your API keys: create one (its secret shown this once), list them, revoke one. */
export function AccountPage({ me }: { me: Me }) {
  const keys = useLoad(() => api<{ items: ApiKey[] }>('GET', '/api/v1/api-keys'), []);
  const [name, setName] = useState('');
  const [issued, setIssued] = useState<IssuedApiKey | null>(null);
  const create = useAction(async () => {
    setIssued(await api<IssuedApiKey>('POST', '/api/v1/api-keys', { body: { name: name.trim() || undefined } }));
    setName('');
    await keys.reload();
  });
  const revoke = useAction(async (key: ApiKey) => {
    const current = key.id === me.keyId ? ' This is the key you are signed in with: the console signs out.' : '';
    if (!window.confirm(`Revoke the key "${key.name}" (${key.prefix}…)? Callers using it are refused from now on.${current}`)) return;
    await api('DELETE', `/api/v1/api-keys/${encode(key.id)}`);
    await keys.reload();
  });
  return (
    <main>
      <h1>Your account</h1>
      <p class="muted">
        <UserText text={me.name} /> · <code>{me.id}</code>
        {me.isAdmin ? ' · admin' : ''}
      </p>
      <Section title="New API key">
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <label>
            Key name
            <input value={name} maxLength={100} placeholder="e.g. laptop, CI" onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={create.busy}>
            Create key
          </button>
        </form>
        <ErrorBox error={create.error} />
        {issued && <IssuedKey issued={issued} />}
      </Section>
      <Section title="Your API keys">
        <ErrorBox error={keys.error ?? revoke.error} />
        {keys.data && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="API keys, scrollable">
            <table aria-label="API keys">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Starts with</th>
                  <th>Created</th>
                  <th>Last used</th>
                  <th>State</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.items.map((k) => (
                  <tr key={k.id}>
                    <td>
                      <UserText text={k.name} />
                      {k.id === me.keyId && <span class="muted small"> (this session)</span>}
                    </td>
                    <td>
                      <code>{k.prefix}…</code>
                    </td>
                    <td>
                      <Time iso={k.createdAt} />
                    </td>
                    <td>
                      <Time iso={k.lastUsedAt} />
                    </td>
                    <td>{k.revokedAt ? <span class="muted">revoked</span> : 'active'}</td>
                    <td class="row-actions">
                      {!k.revokedAt && (
                        <button type="button" class="link danger" onClick={() => void revoke.run(k)} aria-label={`Revoke ${k.name}`}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </main>
  );
}

/** A key's secret, shown once: it cannot be read again. */
export function IssuedKey({ issued }: { issued: Pick<IssuedApiKey, 'key' | 'name'> }) {
  return (
    <div class="notice issued-key" role="status">
      <p>
        The key{' '}
        <strong>
          <UserText text={issued.name} />
        </strong>
        : copy it now, it is not shown again.
      </p>
      <code class="secret" aria-label="The key, shown once">
        {issued.key}
      </code>
    </div>
  );
}
