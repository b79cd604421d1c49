import { useState } from 'preact/hooks';
import { api, encode } from './api-client';
import type { Member, Role } from './api-types';
import { navigate } from './router';
import { ErrorBox, Section, useAction, useLoad } from './ui';

const ROLE_HELP: Record<string, Record<Role, string>> = {
  credential: { viewer: 'use it in a node', editor: 'use, rename, change and rotate it', owner: 'also share and delete it' },
  workflow: { viewer: 'see it and its runs', editor: 'also edit, publish and run it', owner: 'also share and delete it' },
  collection: { viewer: 'search and read its files', editor: 'also add and delete files', owner: 'also share and delete it' },
};

export const roleHelp = (noun: string, role: Role) => ROLE_HELP[noun]?.[role] ?? role;

interface MembersProps {
  /** The resource's API path: members at `${base}/members`, deleted with DELETE `${base}`. */
  base: string;
  noun: 'credential' | 'workflow' | 'collection';
  name: string;
  role: Role;
  /** Where the console goes once the resource is deleted. */
  after: string;
  /** Said in the question before deleting: what goes with it. */
  consequence?: string;
  onDeleted?: () => void;
}

/**
 * Who holds a role on a collection, workflow or credential, and (for its owners) sharing it with a
 * user, removing a user, and deleting it: the same screen for every kind of shared resource.
 */
export function Members({ base, noun, name, role, after, consequence, onDeleted }: MembersProps) {
  const isOwner = role === 'owner';
  const members = useLoad(() => api<{ items: Member[] }>('GET', `${base}/members`), [base]);
  const [share, setShare] = useState<{ userId: string; role: Role }>({ userId: '', role: 'viewer' });
  const addMember = useAction(async () => {
    await api('PUT', `${base}/members/${encode(share.userId.trim())}`, { body: { role: share.role } });
    setShare({ userId: '', role: 'viewer' });
    await members.reload();
  });
  const removeMember = useAction(async (userId: string) => {
    await api('DELETE', `${base}/members/${encode(userId)}`);
    await members.reload();
  });
  const remove = useAction(async () => {
    if (!window.confirm(`Delete the ${noun} "${name}"?${consequence ? ` ${consequence}` : ''} This cannot be undone.`)) return;
    await api('DELETE', base);
    if (onDeleted) onDeleted();
    else navigate(after, { force: true });
  });
  return (
    <Section title="Sharing">
      <p class="muted small">
        Your role: {role} ({roleHelp(noun, role)}).
      </p>
      <ErrorBox error={members.error ?? removeMember.error} />
      {members.data && (
        <div class="table-scroll">
          <table aria-label="Members">
            <thead>
              <tr>
                <th>User</th>
                <th>Role</th>
                <th>
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.data.items.map((m) => (
                <tr key={m.userId}>
                  <td>
                    <code>{m.userId}</code>
                  </td>
                  <td>{m.role}</td>
                  <td class="row-actions">
                    {isOwner && (
                      <button
                        type="button"
                        class="link danger"
                        disabled={removeMember.busy}
                        onClick={() => void removeMember.run(m.userId)}
                        aria-label={`Remove ${m.userId}`}
                      >
                        Remove
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {isOwner && (
        <form
          class="inline"
          aria-label="Share"
          onSubmit={(e) => {
            e.preventDefault();
            void addMember.run();
          }}
        >
          <label class="compact">
            User id
            <input
              value={share.userId}
              required
              placeholder="usr_…"
              onInput={(e) => setShare({ ...share, userId: e.currentTarget.value })}
            />
          </label>
          <label class="compact">
            Role
            <select value={share.role} onChange={(e) => setShare({ ...share, role: e.currentTarget.value as Role })}>
              {(['viewer', 'editor', 'owner'] as Role[]).map((r) => (
                <option key={r} value={r}>
                  {r}: {roleHelp(noun, r)}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={addMember.busy}>
            Share
          </button>
        </form>
      )}
      <ErrorBox error={addMember.error} />
      {isOwner && (
        <div class="actions">
          <button type="button" class="danger" disabled={remove.busy} onClick={() => void remove.run()}>
            Delete {noun}
          </button>
        </div>
      )}
      <ErrorBox error={remove.error} />
    </Section>
  );
}
