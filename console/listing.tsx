import { useState } from 'preact/hooks';
import { api, query } from './api-client';
import type { Page } from './api-types';
import { navigate, setQuery, useLocation } from './router';
import { ErrorBox, Pager, Section, useAction, useLoad } from './ui';

/** One page of the listing at `path`, its offset kept in the address (`?offset=`), and the pager that turns it. */
export function usePagedList<T>(path: string, limit = 20) {
  const { params } = useLocation();
  const offset = Number(params.get('offset') ?? 0) || 0;
  const list = useLoad(() => api<Page<T>>('GET', `${path}${query({ offset, limit })}`), [path, offset]);
  const pager = list.data && (
    <Pager offset={offset} limit={limit} total={list.data.total} onChange={(o) => setQuery({ offset: o || undefined })} />
  );
  return { list, pager };
}

/** The "New ..." section of a list page: a name, created with POST `path`, then opened at `open(id)`. */
export function CreateByName({ noun, path, open }: { noun: string; path: string; open: (id: string) => string }) {
  const [name, setName] = useState('');
  const create = useAction(async () => {
    const created = await api<{ id: string }>('POST', path, { body: { name } });
    navigate(open(created.id));
  });
  return (
    <Section title={`New ${noun}`}>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <label>
          {noun[0].toUpperCase() + noun.slice(1)} name
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
        </label>
        <button type="submit" disabled={create.busy}>
          Create {noun}
        </button>
      </form>
      <ErrorBox error={create.error} />
    </Section>
  );
}
