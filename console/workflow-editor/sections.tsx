import { useState } from 'preact/hooks';
import { api, FieldProblem } from '../api-client';
import type { Accepted, Version, Workflow } from '../api-types';
import { navigate } from '../router';
import { startRun } from '../runs';
import { ErrorBox, JsonBlock, Section, StatusBadge, Time, useAction } from '../ui';

export function RunSection({
  base,
  workflow,
  dirty,
  saveDraft,
}: {
  base: string;
  workflow: Workflow;
  dirty: boolean;
  saveDraft: () => Promise<void>;
}) {
  const [input, setInput] = useState('{}');
  const start = useAction(async (runType: 'test' | 'production') => {
    let parsed: unknown;
    try {
      parsed = input.trim() ? JSON.parse(input) : undefined;
    } catch (error) {
      throw new Error(`The run input is not valid JSON: ${(error as Error).message}`);
    }
    if (runType === 'test') await saveDraft();
    const accepted: Accepted = await startRun(base, runType, parsed);
    navigate(`/runs/${accepted.runId}`);
  });
  return (
    <Section title="Run">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void start.run('test');
        }}
      >
        <label>
          Run input (JSON)
          <textarea class="code" rows={4} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
        </label>
        <p class="muted small">
          The input becomes the trigger's output. A test run executes the draft (saved first if changed); a production run executes the
          published version in force
          {workflow.activeVersion !== null ? ` (version ${workflow.activeVersion})` : ''}, as a webhook call would.
        </p>
        <div class="actions">
          <button type="submit" disabled={start.busy}>
            Start test run
          </button>
          <button type="button" disabled={start.busy || workflow.activeVersion === null} onClick={() => void start.run('production')}>
            Run published version
          </button>
          {workflow.activeVersion === null && <span class="muted small">Publish first to run in production.</span>}
          {workflow.activeVersion !== null && dirty && (
            <span class="muted small">Unsaved changes are not part of the published version.</span>
          )}
        </div>
        <ErrorBox error={start.error} />
      </form>
    </Section>
  );
}

interface ProblemListProps {
  label: string;
  heading: string;
  problems: readonly { nodeId?: string; field: string; reason: string; original: FieldProblem }[];
  role?: 'alert';
  advisory?: boolean;
  onOpen: (nodeId: string) => void;
}

/** Problems grouped by node, each field relative to its node; a node's name opens it on the canvas. */
export function ProblemList({ label, heading, problems, role, advisory, onOpen }: ProblemListProps) {
  const groups = new Map<string, (typeof problems)[number][]>();
  for (const p of problems) groups.set(p.nodeId ?? '', [...(groups.get(p.nodeId ?? '') ?? []), p]);
  return (
    <section class={advisory ? 'problems advisory' : 'problems'} role={role} aria-label={label}>
      <strong>{heading}</strong>
      {[...groups].map(([nodeId, list]) => (
        <div key={nodeId}>
          <div>
            {nodeId ? (
              <>
                Node{' '}
                <button type="button" class="link" onClick={() => onOpen(nodeId)}>
                  <code>{nodeId}</code>
                </button>
              </>
            ) : (
              'Workflow'
            )}
          </div>
          <ul class="fields">
            {list.map((p, i) => (
              <li key={i}>
                <code>{nodeId ? p.field || '(node)' : p.original.field}</code> {p.reason}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}

export function Versions({
  base,
  versions,
  error,
  onChanged,
}: {
  base: string;
  versions?: Version[];
  error: unknown;
  onChanged: () => void;
}) {
  const [shown, setShown] = useState<Version | null>(null);
  const activate = useAction(async (version: number) => {
    await api('POST', `${base}/versions/${version}/activate`);
    onChanged();
  });
  const show = useAction(async (version: number) => {
    setShown(shown?.version === version ? null : await api<Version>('GET', `${base}/versions/${version}`));
  });
  return (
    <Section title="Versions">
      <ErrorBox error={error ?? activate.error ?? show.error} />
      {versions && versions.length === 0 && <p class="muted">Nothing published yet.</p>}
      {versions && versions.length > 0 && (
        <div class="table-scroll">
          <table aria-label="Versions">
            <thead>
              <tr>
                <th>Version</th>
                <th>Published</th>
                <th>By</th>
                <th>State</th>
                <th>
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.id}>
                  <td>{v.version}</td>
                  <td>
                    <Time iso={v.createdAt} />
                  </td>
                  <td>
                    <code>{v.createdBy}</code>
                  </td>
                  <td>{v.active ? <StatusBadge status="active" /> : <span class="muted">inactive</span>}</td>
                  <td class="row-actions">
                    <button type="button" class="link" onClick={() => void show.run(v.version)}>
                      {shown?.version === v.version ? 'Hide' : 'Show'} definition
                    </button>
                    {!v.active && (
                      <button
                        type="button"
                        class="link"
                        disabled={activate.busy}
                        onClick={() => void activate.run(v.version)}
                        aria-label={`Activate version ${v.version}`}
                      >
                        Activate
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {shown && <JsonBlock label={`Definition of version ${shown.version}`} value={shown.definition} />}
    </Section>
  );
}
