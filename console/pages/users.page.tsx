import { useState } from 'preact/hooks';
import { api } from '../api-client';
import type { CreatedUser, Page, User } from '../api-types';
import { usePagedList } from '../listing';
import { ErrorBox, Section, Time, useAction, UserText } from '../ui';
import { IssuedKey } from './account.page';

/** For admins: the users, and a new user with their first API key. */
export function UsersPage() {
  const { list, pager } = usePagedList<User>('/api/v1/users');
  const [form, setForm] = useState({ name: '', email: '', isAdmin: false });
  const [created, setCreated] = useState<CreatedUser | null>(null);
  const create = useAction(async () => {
    const body = { name: form.name.trim(), ...(form.email.trim() ? { email: form.email.trim() } : {}), isAdmin: form.isAdmin };
    setCreated(await api<CreatedUser>('POST', '/api/v1/users', { body }));
    setForm({ name: '', email: '', isAdmin: false });
    await list.reload();
  });
  const page = list.data as Page<User> | undefined;
  return (
    <main>
      <h1>Users</h1>
      <Section title="New user">
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <label>
            Name
            <input value={form.name} required maxLength={200} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
          </label>
          <label>
            Email
            <input type="email" value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />
          </label>
          <label class="check">
            <input type="checkbox" checked={form.isAdmin} onChange={(e) => setForm({ ...form, isAdmin: e.currentTarget.checked })} />
            Admin
          </label>
          <button type="submit" disabled={create.busy}>
            Create user
          </button>
        </form>
        <ErrorBox error={create.error} />
        {created && (
          <>
            <p>
              Created{' '}
              <strong>
                <UserText text={created.name} />
              </strong>{' '}
              (<code>{created.id}</code>): hand them their first key.
            </p>
            <IssuedKey issued={created.apiKey} />
          </>
        )}
      </Section>
      <Section title="All users">
        <ErrorBox error={list.error} />
        {page && (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Users, scrollable">
            <table aria-label="Users">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Id</th>
                  <th>Email</th>
                  <th>Admin</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((u) => (
                  <tr key={u.id}>
                    <td>
                      <UserText text={u.name} />
                    </td>
                    <td>
                      <code>{u.id}</code>
                    </td>
                    <td>{u.email ?? '—'}</td>
                    <td>{u.isAdmin ? 'yes' : 'no'}</td>
                    <td>
                      <Time iso={u.createdAt} />
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
