import { useState } from 'preact/hooks';
import { api, query } from '../api-client';
import type { Page, Workflow, WorkflowSummary } from '../api-types';
import { Link, navigate, setQuery, useLocation } from '../router';
import { ErrorBox, Pager, Section, Time, useAction, useLoad } from '../ui';

const LIMIT = 20;

export function WorkflowsPage() {
  const { params } = useLocation();
  const offset = Number(params.get('offset') ?? 0) || 0;
  const list = useLoad(() => api<Page<WorkflowSummary>>('GET', `/api/v1/workflows${query({ offset, limit: LIMIT })}`), [offset]);
  const [name, setName] = useState('');
  // Created with the server's default definition (a lone webhook trigger), then edited in the editor.
  const create = useAction(async () => {
    const created = await api<Workflow>('POST', '/api/v1/workflows', { body: { name } });
    navigate(`/workflows/${created.id}`);
  });

  return (
    <main>
      <h1>Workflows</h1>
      <Section title="New workflow">
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <label>
            Workflow name
            <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
          </label>
          <button type="submit" disabled={create.busy}>
            Create workflow
          </button>
        </form>
        <ErrorBox error={create.error} />
      </Section>
      <Section title="Your workflows">
        <ErrorBox error={list.error} />
        {list.data && list.data.items.length === 0 && <p class="muted">No workflow yet: create one above.</p>}
        {list.data && list.data.items.length > 0 && (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Active version</th>
                <th>Latest version</th>
                <th>Nodes</th>
                <th>Updated</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((w) => (
                <tr key={w.id}>
                  <td>
                    <Link href={`/workflows/${w.id}`}>{w.name}</Link>
                    <div class="muted small">
                      <code>{w.id}</code>
                    </div>
                  </td>
                  <td>{w.activeVersion ?? <span class="muted">not published</span>}</td>
                  <td>{w.latestVersion ?? '–'}</td>
                  <td>{w.nodeCount}</td>
                  <td>
                    <Time iso={w.updatedAt} />
                  </td>
                  <td>
                    <Link href={`/runs?workflowId=${encodeURIComponent(w.id)}`}>Runs</Link>
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
