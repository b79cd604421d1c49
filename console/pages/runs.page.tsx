import { api, query } from '../api-client';
import { Page, RUN_STATUSES, RunSummary, TERMINAL, WorkflowSummary } from '../api-types';
import { duration } from '../format';
import { runDuration, triggerLabel } from '../runs';
import { Link, setQuery, useLocation } from '../router';
import { ErrorBox, Pager, Section, StatusBadge, Time, useLoad, usePolling } from '../ui';

const LIMIT = 20;

export function RunsPage() {
  const { params } = useLocation();
  const offset = Number(params.get('offset') ?? 0) || 0;
  const workflowId = params.get('workflowId') ?? '';
  const status = params.get('status') ?? '';
  const runs = useLoad(
    () => api<Page<RunSummary>>('GET', `/api/v1/runs${query({ offset, limit: LIMIT, workflowId, status })}`),
    [offset, workflowId, status],
  );
  // The filter offers the first 100 workflows by name; a link from a workflow page sets any id.
  const workflows = useLoad(() => api<Page<WorkflowSummary>>('GET', '/api/v1/workflows?limit=100'), []);
  const names = new Map((workflows.data?.items ?? []).map((w) => [w.id, w.name]));
  usePolling(runs.reload, 2000, runs.data?.items.some((r) => !TERMINAL.includes(r.status)) ?? false);
  const filter = (next: { workflowId?: string; status?: string }) =>
    setQuery({ workflowId: (next.workflowId ?? workflowId) || undefined, status: (next.status ?? status) || undefined });

  return (
    <main>
      <h1>Runs</h1>
      <Section
        title="Runs"
        actions={
          <form class="inline" onSubmit={(e) => e.preventDefault()}>
            <label class="compact">
              Workflow
              <select aria-label="Workflow" value={workflowId} onChange={(e) => filter({ workflowId: e.currentTarget.value })}>
                <option value="">any</option>
                {workflowId && !names.has(workflowId) && <option value={workflowId}>{workflowId}</option>}
                {(workflows.data?.items ?? []).map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name}
                  </option>
                ))}
              </select>
            </label>
            <label class="compact">
              Status
              <select aria-label="Status" value={status} onChange={(e) => filter({ status: e.currentTarget.value })}>
                <option value="">any</option>
                {RUN_STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
          </form>
        }
      >
        <ErrorBox error={runs.error} />
        {runs.data && runs.data.items.length === 0 && <p class="muted">No runs match.</p>}
        {runs.data && runs.data.items.length > 0 && (
          <div class="table-scroll">
            <table aria-label="Runs">
              <thead>
                <tr>
                  <th>Run</th>
                  <th>Workflow</th>
                  <th>Started by</th>
                  <th>Type</th>
                  <th>Status</th>
                  <th>Created</th>
                  <th>Duration</th>
                </tr>
              </thead>
              <tbody>
                {runs.data.items.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <Link href={`/runs/${r.id}`}>
                        <code>{r.id}</code>
                      </Link>
                      {r.retryOf && <div class="muted small">retry of {r.retryOf}</div>}
                    </td>
                    <td>
                      <Link href={`/workflows/${r.workflowId}`}>{r.workflowName ?? names.get(r.workflowId) ?? r.workflowId}</Link>
                    </td>
                    <td>{triggerLabel(r)}</td>
                    <td>
                      {r.runType}
                      {r.version !== null && <span class="muted"> v{r.version}</span>}
                    </td>
                    <td>
                      <StatusBadge status={r.status} />
                    </td>
                    <td>
                      <Time iso={r.createdAt} />
                    </td>
                    <td class="nowrap">{duration(runDuration(r))}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {runs.data && (
          <Pager
            offset={offset}
            limit={LIMIT}
            total={runs.data.total}
            onChange={(o) => setQuery({ workflowId: workflowId || undefined, status: status || undefined, offset: o || undefined })}
          />
        )}
      </Section>
    </main>
  );
}
