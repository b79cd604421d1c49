import { useState } from 'preact/hooks';
import { api, query } from '../api-client';
import type { Collection, Page } from '../api-types';
import { Link, navigate, setQuery, useLocation } from '../router';
import { ErrorBox, Pager, Section, Time, useAction, useLoad } from '../ui';

const LIMIT = 20;

export function CollectionsPage() {
  const { params } = useLocation();
  const offset = Number(params.get('offset') ?? 0) || 0;
  const list = useLoad(() => api<Page<Collection>>('GET', `/api/v1/collections${query({ offset, limit: LIMIT })}`), [offset]);
  const [name, setName] = useState('');
  const create = useAction(async () => {
    const created = await api<Collection>('POST', '/api/v1/collections', { body: { name } });
    navigate(`/collections/${created.id}`);
  });

  return (
    <main>
      <h1>Collections</h1>
      <Section title="New collection">
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <label>
            Collection name
            <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
          </label>
          <button type="submit" disabled={create.busy}>
            Create collection
          </button>
        </form>
        <ErrorBox error={create.error} />
      </Section>
      <Section title="Your collections">
        <ErrorBox error={list.error} />
        {list.data && list.data.items.length === 0 && <p class="muted">No collection yet: create one above.</p>}
        {list.data && list.data.items.length > 0 && (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Your role</th>
                <th>Created</th>
                <th>Id</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((c) => (
                <tr key={c.id}>
                  <td>
                    <Link href={`/collections/${c.id}`}>{c.name}</Link>
                  </td>
                  <td>{c.role}</td>
                  <td>
                    <Time iso={c.createdAt} />
                  </td>
                  <td>
                    <code>{c.id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {list.data && <Pager offset={offset} limit={LIMIT} total={list.data.total} onChange={(o) => setQuery({ offset: o || undefined })} />}
      </Section>
    </main>
  );
}
