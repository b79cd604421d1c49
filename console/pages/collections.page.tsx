import { api, encode } from '../api-client';
import type { Collection, CollectionStats } from '../api-types';
import { CreateByName, usePagedList } from '../listing';
import { Link } from '../router';
import { ErrorBox, Section, Time, useAction, useLoad, UserText } from '../ui';

export function CollectionsPage() {
  const { list, pager } = usePagedList<Collection>('/api/v1/collections');

  return (
    <main>
      <h1>Collections</h1>
      <CreateByName noun="collection" path="/api/v1/collections" open={(id) => `/collections/${id}`} />
      <Section title="Your collections">
        <ErrorBox error={list.error} />
        {list.data && list.data.items.length === 0 && <p class="muted">No collection yet: create one above.</p>}
        {list.data && list.data.items.length > 0 && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Collections, scrollable">
            <table aria-label="Collections">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Files</th>
                  <th>Your role</th>
                  <th>Created</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((c) => (
                  <CollectionRow key={c.id} collection={c} onDeleted={() => void list.reload()} />
                ))}
              </tbody>
            </table>
          </div>
        )}
        {pager}
      </Section>
    </main>
  );
}

/** One collection with its file counts (from its stats, one request a row of the page) and, for its owners, Delete. */
function CollectionRow({ collection: c, onDeleted }: { collection: Collection; onDeleted: () => void }) {
  const base = `/api/v1/collections/${encode(c.id)}`;
  const stats = useLoad(() => api<CollectionStats>('GET', `${base}/stats`), [c.id]);
  const remove = useAction(async () => {
    if (!window.confirm(`Delete the collection "${c.name}"? Its files and their passages go with it. This cannot be undone.`)) return;
    await api('DELETE', base);
    onDeleted();
  });
  const files = stats.data?.files;
  return (
    <tr>
      <td>
        <Link href={`/collections/${c.id}`}>
          <UserText text={c.name} />
        </Link>
        <div class="muted small">
          <code>{c.id}</code>
        </div>
      </td>
      <td>
        {files ? (
          <span title={`${files.indexed} indexed, ${files.pending + files.processing} in progress, ${files.error} failed`}>
            {files.total}
            {files.total !== files.indexed ? <span class="muted small"> ({files.indexed} indexed)</span> : null}
          </span>
        ) : stats.error ? (
          <span class="muted">?</span>
        ) : (
          <span class="muted">…</span>
        )}
      </td>
      <td>{c.role}</td>
      <td>
        <Time iso={c.createdAt} />
      </td>
      <td class="row-actions">
        {c.role === 'owner' && (
          <button
            type="button"
            class="link danger"
            disabled={remove.busy}
            onClick={() => void remove.run()}
            aria-label={`Delete ${c.name}`}
          >
            Delete
          </button>
        )}
        <ErrorBox error={remove.error} />
      </td>
    </tr>
  );
}
