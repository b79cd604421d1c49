import { useRef, useState } from 'preact/hooks';
import { api, encode } from '../api-client';
import type { Version, Workflow } from '../api-types';
import { loadNodeTypes } from '../node-types';
import { Link } from '../router';
import { Members } from '../members';
import { ErrorBox, useLoad, UserText } from '../ui';
import { Editor, type Kept } from '../workflow-editor/editor';
import { useRunData } from '../workflow-editor/run-data';

export function WorkflowPage({ id }: { id: string }) {
  const base = `/api/v1/workflows/${encode(id)}`;
  const workflow = useLoad(() => api<Workflow>('GET', base), [id]);
  const types = useLoad(loadNodeTypes, []);
  const versions = useLoad(() => api<{ items: Version[] }>('GET', `${base}/versions`), [id]);
  // Kept here: the editor starts afresh from what the server stored after each save.
  const [notice, setNotice] = useState('');
  const kept = useRef<Kept>({ selected: [] });
  const runs = useRunData(id);
  const reload = () => {
    void workflow.reload();
    void versions.reload();
  };

  return (
    <main class="wide workflow-page">
      <ErrorBox error={workflow.error ?? types.error} />
      <h1>{workflow.data ? <UserText text={workflow.data.name} /> : 'Workflow'}</h1>
      {workflow.data && (
        <p class="muted small workflow-meta">
          <code>{id}</code> · your role: {workflow.data.role} · active version:{' '}
          {workflow.data.activeVersion ?? 'none (publish to run in production)'} · webhook: <code>POST {workflow.data.webhookPath}</code> ·{' '}
          <Link href={`/runs?workflowId=${encode(id)}`}>runs of this workflow</Link> ·{' '}
          <Link href={`/workflows/${encode(id)}/chat`}>chat with it</Link>
        </p>
      )}
      {workflow.data && types.data && (
        <Editor
          key={workflow.data.updatedAt}
          base={base}
          workflow={workflow.data}
          types={types.data}
          versions={versions.data?.items}
          versionsError={versions.error}
          notice={notice}
          setNotice={setNotice}
          kept={kept}
          runs={runs}
          onSaved={reload}
        />
      )}
      {workflow.data && <Members base={base} noun="workflow" name={workflow.data.name} role={workflow.data.role} after="/workflows" />}
    </main>
  );
}
