import type { Collection } from '../api-types';
import { CreateByName, usePagedList } from '../listing';
import { Link } from '../router';
import { ErrorBox, Section, Time, UserText } from '../ui';

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
          <div class="table-scroll">
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
                      <Link href={`/collections/${c.id}`}>
                        <UserText text={c.name} />
                      </Link>
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
          </div>
        )}
        {pager}
      </Section>
    </main>
  );
}
