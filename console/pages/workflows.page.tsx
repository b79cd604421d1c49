import { api, encode } from '../api-client';
import type { WorkflowSummary } from '../api-types';
import { CreateByName, usePagedList } from '../listing';
import { Link } from '../router';
import { ErrorBox, Section, Time, useAction, UserText } from '../ui';

export function WorkflowsPage() {
  const { list, pager } = usePagedList<WorkflowSummary>('/api/v1/workflows');
  const remove = useAction(async (w: WorkflowSummary) => {
    if (!window.confirm(`Delete the workflow "${w.name}"? Its versions and runs go with it. This cannot be undone.`)) return;
    await api('DELETE', `/api/v1/workflows/${encode(w.id)}`);
    await list.reload();
  });

  return (
    <main>
      <h1>Workflows</h1>
      {/* Created with the server's default definition (a lone webhook trigger), then edited in the editor. */}
      <CreateByName noun="workflow" path="/api/v1/workflows" open={(id) => `/workflows/${id}`} />
      <Section title="Your workflows">
        <ErrorBox error={list.error ?? remove.error} />
        {list.data && list.data.items.length === 0 && <p class="muted">No workflow yet: create one above.</p>}
        {list.data && list.data.items.length > 0 && (
          <div class="table-scroll">
            <table aria-label="Workflows">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Active version</th>
                  <th>Latest version</th>
                  <th>Nodes</th>
                  <th>Updated</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((w) => (
                  <tr key={w.id}>
                    <td>
                      <Link href={`/workflows/${w.id}`}>
                        <UserText text={w.name} />
                      </Link>
                      <div class="muted small">
                        <code>{w.id}</code>
                      </div>
                    </td>
                    <td>{w.activeVersion ?? <span class="muted">not published</span>}</td>
                    <td>{w.latestVersion ?? '—'}</td>
                    <td>{w.nodeCount}</td>
                    <td>
                      <Time iso={w.updatedAt} />
                    </td>
                    <td class="row-actions">
                      <Link href={`/runs?workflowId=${encodeURIComponent(w.id)}`}>Runs</Link>
                      {w.role === 'owner' && (
                        <button
                          type="button"
                          class="link danger"
                          disabled={remove.busy}
                          onClick={() => void remove.run(w)}
                          aria-label={`Delete ${w.name}`}
                        >
                          Delete
                        </button>
                      )}
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
