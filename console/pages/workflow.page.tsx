import { useRef, useState } from 'preact/hooks';
import { api, encode } from '../api-client';
import { TERMINAL, type Accepted, type NodeTest, type Page, type Run, type RunSummary, type Version, type Workflow } from '../api-types';
import { loadNodeTypes } from '../node-types';
import { Link } from '../router';
import { ErrorBox, useAction, useLoad, usePolling, UserText } from '../ui';
import { Editor, type Kept } from '../workflow-editor/editor';
import { Versions } from '../workflow-editor/sections';

export function WorkflowPage({ id }: { id: string }) {
  const base = `/api/v1/workflows/${encode(id)}`;
  const workflow = useLoad(() => api<Workflow>('GET', base), [id]);
  const types = useLoad(loadNodeTypes, []);
  const versions = useLoad(() => api<{ items: Version[] }>('GET', `${base}/versions`), [id]);
  // The latest run's data: what expressions are completed and previewed against.
  const lastRun = useLoad(async () => {
    const page = await api<Page<RunSummary>>('GET', `/api/v1/runs?workflowId=${encode(id)}&limit=1`);
    return page.items[0] ? api<Run>('GET', `/api/v1/runs/${encode(page.items[0].id)}`) : null;
  }, [id]);
  // Kept here: the editor starts afresh from what the server stored after each save.
  const [notice, setNotice] = useState('');
  const kept = useRef<Kept>({ selected: [] });
  // A node test: the run it started, followed until it ends, drawn on the editor's canvas.
  const [testRunId, setTestRunId] = useState<string | null>(null);
  const testRun = useLoad(() => (testRunId ? api<Run>('GET', `/api/v1/runs/${encode(testRunId)}`) : Promise.resolve(null)), [testRunId]);
  usePolling(testRun.reload, 1000, Boolean(testRun.data && !TERMINAL.includes(testRun.data.status)));
  // Here, not in the editor: the draft is saved first, which starts the editor afresh.
  const test = useAction(async (body: NodeTest, saveFirst: () => Promise<void>) => {
    await saveFirst();
    const accepted = await api<Accepted>('POST', `${base}/node-tests`, { body });
    setTestRunId(accepted.runId);
  });

  return (
    <main class="wide">
      <ErrorBox error={workflow.error ?? types.error} />
      <h1>{workflow.data ? <UserText text={workflow.data.name} /> : 'Workflow'}</h1>
      {workflow.data && (
        <p class="muted">
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
          lastRun={lastRun.data ?? null}
          notice={notice}
          setNotice={setNotice}
          kept={kept}
          test={{
            run: testRun.data ?? null,
            busy: test.busy,
            error: test.error ?? testRun.error,
            start: (body, saveFirst) => void test.run(body, saveFirst),
            clear: () => setTestRunId(null),
          }}
          onSaved={() => {
            void workflow.reload();
            void versions.reload();
          }}
        />
      )}
      <Versions
        base={base}
        versions={versions.data?.items}
        error={versions.error}
        onChanged={() => {
          void workflow.reload();
          void versions.reload();
        }}
      />
    </main>
  );
}
