import { useRef, useState } from 'preact/hooks';
import { api, encode, query } from '../api-client';
import { Collection, FILE_STATUSES, FileItem, Page, Passage } from '../api-types';
import { bytes } from '../format';
import { setQuery, useLocation } from '../router';
import { Members } from '../members';
import { ErrorBox, Pager, Section, StatusBadge, Time, useAction, useLoad, usePolling, UserText } from '../ui';

const LIMIT = 20;
const UNFINISHED = new Set(['pending', 'processing']);

interface Stats {
  files: Record<string, number>;
  bytes: number;
  chunks: number;
}

export function CollectionPage({ id }: { id: string }) {
  const base = `/api/v1/collections/${encode(id)}`;
  const collection = useLoad(() => api<Collection>('GET', base), [id]);
  const stats = useLoad(() => api<Stats>('GET', `${base}/stats`), [id]);

  return (
    <main>
      <ErrorBox error={collection.error} />
      <h1>{collection.data ? <UserText text={collection.data.name} /> : 'Collection'}</h1>
      <p class="muted">
        <code>{id}</code>
        {collection.data && <> · your role: {collection.data.role}</>}
        {stats.data && (
          <>
            {' '}
            · {stats.data.files.total} file(s), {stats.data.files.indexed} indexed, {stats.data.chunks} passages, {bytes(stats.data.bytes)}
          </>
        )}
      </p>
      <Files base={base} onChange={() => void stats.reload()} />
      <SearchPlayground base={base} />
      {collection.data && (
        <Members
          base={base}
          noun="collection"
          name={collection.data.name}
          role={collection.data.role}
          after="/collections"
          consequence="Its files and their passages go with it."
        />
      )}
    </main>
  );
}

function Files({ base, onChange }: { base: string; onChange: () => void }) {
  const { params } = useLocation();
  const offset = Number(params.get('offset') ?? 0) || 0;
  const status = params.get('status') ?? '';
  const list = useLoad(() => api<Page<FileItem>>('GET', `${base}/files${query({ offset, limit: LIMIT, status })}`), [base, offset, status]);
  // Live status: while a file on the page is on its way, the list refreshes itself.
  const unfinished = list.data?.items.some((f) => UNFINISHED.has(f.status)) ?? false;
  usePolling(
    async () => {
      await list.reload();
      onChange();
    },
    1500,
    unfinished,
  );
  const added = () => {
    void list.reload();
    onChange();
  };
  const remove = useAction(async (file: FileItem) => {
    if (!confirm(`Delete ${file.name}? Its passages leave the search index.`)) return;
    await api('DELETE', `${base}/files/${encode(file.id)}`);
    added();
  });

  return (
    <>
      <Section title="Add files">
        <div class="columns">
          <UploadForm base={base} onAdded={added} />
          <UrlForm base={base} onAdded={added} />
        </div>
      </Section>
      <Section
        title="Files"
        actions={
          <label class="compact">
            Status filter
            <select aria-label="Status filter" value={status} onChange={(e) => setQuery({ status: e.currentTarget.value || undefined })}>
              <option value="">any</option>
              {FILE_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
        }
      >
        <ErrorBox error={list.error ?? remove.error} />
        {list.data && list.data.items.length === 0 && <p class="muted">No files{status ? ` in status ${status}` : ''}.</p>}
        {list.data && list.data.items.length > 0 && (
          <div class="table-scroll">
            <table aria-label="Files">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Status</th>
                  <th>Type</th>
                  <th>Size</th>
                  <th>Added</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((f) => (
                  <tr key={f.id} data-file-id={f.id}>
                    <td>
                      <UserText text={f.name} />
                      <div class="muted small">
                        <code>{f.id}</code>
                      </div>
                    </td>
                    <td>
                      <StatusBadge status={f.status} />
                      {f.error && (
                        <div class="error-text">
                          <UserText text={f.error} />
                        </div>
                      )}
                    </td>
                    <td class="small">{f.type}</td>
                    <td class="nowrap">{bytes(f.size)}</td>
                    <td>
                      <Time iso={f.createdAt} />
                    </td>
                    <td>
                      <button type="button" class="link danger" aria-label={`Delete ${f.name}`} onClick={() => void remove.run(f)}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {list.data && (
          <Pager
            offset={offset}
            limit={LIMIT}
            total={list.data.total}
            onChange={(o) => setQuery({ status: status || undefined, offset: o || undefined })}
          />
        )}
      </Section>
    </>
  );
}

function UploadForm({ base, onAdded }: { base: string; onAdded: () => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [name, setName] = useState('');
  const upload = useAction(async () => {
    const file = input.current?.files?.[0];
    if (!file) throw new Error('Choose a file first');
    const form = new FormData();
    if (name.trim()) form.append('name', name.trim());
    form.append('file', file);
    await api('POST', `${base}/files/upload`, { form });
    if (input.current) input.current.value = '';
    setName('');
    onAdded();
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void upload.run();
      }}
    >
      <h3>Upload a file</h3>
      <label>
        File to upload
        <input type="file" ref={input} required />
      </label>
      <label>
        Name (optional)
        <input value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="the file's own name" maxLength={255} />
      </label>
      <button type="submit" disabled={upload.busy}>
        {upload.busy ? 'Uploading…' : 'Upload'}
      </button>
      <ErrorBox error={upload.error} />
    </form>
  );
}

function UrlForm({ base, onAdded }: { base: string; onAdded: () => void }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const add = useAction(async () => {
    await api('POST', `${base}/files`, { body: { name, url } });
    setName('');
    setUrl('');
    onAdded();
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void add.run();
      }}
    >
      <h3>Add by URL</h3>
      <label>
        File name
        <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={255} />
      </label>
      <label>
        File URL
        <input
          type="url"
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
          required
          placeholder="https://example.com/report.pdf"
        />
      </label>
      <button type="submit" disabled={add.busy}>
        Add by URL
      </button>
      <ErrorBox error={add.error} />
    </form>
  );
}

function SearchPlayground({ base }: { base: string }) {
  const [text, setText] = useState('');
  const [topK, setTopK] = useState(5);
  const [mode, setMode] = useState<'vector' | 'hybrid'>('vector');
  const [offset, setOffset] = useState(0);
  const [results, setResults] = useState<{ result: Passage[]; offset: number } | null>(null);
  const search = useAction(async (from: number) => {
    const answer = await api<{ result: Passage[] }>('POST', `${base}/search`, { body: { text, top_k: topK, offset: from, mode } });
    setOffset(from);
    setResults({ result: answer.result, offset: from });
  });

  return (
    <Section title="Search playground">
      <form
        class="inline search-form"
        onSubmit={(e) => {
          e.preventDefault();
          void search.run(0);
        }}
      >
        <label class="grow">
          Search text
          <input
            type="search"
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            required
            placeholder="Ask in natural language"
          />
        </label>
        <label>
          Results (top_k)
          <input type="number" min={1} max={100} value={topK} onInput={(e) => setTopK(Number(e.currentTarget.value))} />
        </label>
        <label>
          Mode
          <select aria-label="Mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as 'vector' | 'hybrid')}>
            <option value="vector">vector</option>
            <option value="hybrid">hybrid (vector + keywords)</option>
          </select>
        </label>
        <button type="submit" disabled={search.busy}>
          Search
        </button>
      </form>
      <ErrorBox error={search.error} />
      {results && results.result.length === 0 && (
        <p class="muted">No passage found{results.offset ? ' on this page' : ''}. Only indexed files are searched.</p>
      )}
      {results && results.result.length > 0 && (
        <ol class="passages" start={results.offset + 1} aria-label="Search results">
          {results.result.map((p) => (
            <li key={p.id}>
              <div class="passage-meta">
                <span>
                  distance <strong>{p.distance.toFixed(4)}</strong>
                </span>
                <span>
                  <UserText text={p.fileName} />
                </span>
                {p.page !== undefined && <span>page {p.page}</span>}
                <span class="muted">passage {p.chunkIndex}</span>
              </div>
              <p class="passage">{p.content}</p>
            </li>
          ))}
        </ol>
      )}
      {results && (
        <nav class="pager" aria-label="Result pages">
          <button type="button" disabled={offset === 0 || search.busy} onClick={() => void search.run(Math.max(0, offset - topK))}>
            Previous results
          </button>
          <button type="button" disabled={results.result.length < topK || search.busy} onClick={() => void search.run(offset + topK)}>
            Next results
          </button>
        </nav>
      )}
    </Section>
  );
}
