import { api, encode } from '../api-client';
import { Accepted, Run, Step, TERMINAL } from '../api-types';
import { duration } from '../format';
import { Link, navigate } from '../router';
import { ErrorBox, JsonBlock, Section, StatusBadge, Time, useAction, useLoad, usePolling } from '../ui';

export function RunPage({ id }: { id: string }) {
  const base = `/api/v1/runs/${encode(id)}`;
  const run = useLoad(() => api<Run>('GET', base), [id]);
  const finished = run.data ? TERMINAL.includes(run.data.status) : false;
  usePolling(run.reload, 1000, run.data !== undefined && !finished);
  const cancel = useAction(async () => {
    await api('POST', `${base}/cancel`);
    await run.reload();
  });
  const retry = useAction(async (from: 'start' | 'failed') => {
    const accepted = await api<Accepted>('POST', `${base}/retry`, { body: { from } });
    navigate(`/runs/${accepted.runId}`);
  });
  const r = run.data;

  return (
    <main>
      <ErrorBox error={run.error} />
      <h1>
        Run <code>{id}</code> {r && <StatusBadge status={r.status} />}
      </h1>
      {r && (
        <>
          <dl class="facts">
            <dt>Workflow</dt>
            <dd>
              <Link href={`/workflows/${r.workflowId}`}>
                <code>{r.workflowId}</code>
              </Link>
            </dd>
            <dt>Type</dt>
            <dd>{r.runType === 'test' ? 'test (the draft)' : `production, version ${r.version}`}</dd>
            <dt>Created</dt>
            <dd>
              <Time iso={r.createdAt} />
            </dd>
            <dt>Started</dt>
            <dd>
              <Time iso={r.startedAt} />
            </dd>
            <dt>Finished</dt>
            <dd>
              <Time iso={r.finishedAt} />
            </dd>
            <dt>Duration</dt>
            <dd>{duration(r.durationMs)}</dd>
            {r.retryOf && (
              <>
                <dt>Retry of</dt>
                <dd>
                  <Link href={`/runs/${r.retryOf}`}>
                    <code>{r.retryOf}</code>
                  </Link>
                </dd>
              </>
            )}
            {r.parentRunId && (
              <>
                <dt>Started by run</dt>
                <dd>
                  <Link href={`/runs/${r.parentRunId}`}>
                    <code>{r.parentRunId}</code>
                  </Link>
                </dd>
              </>
            )}
          </dl>
          {r.error && (
            <div class="error" role="alert">
              <strong>{r.error.message}</strong> <span class="muted">({r.error.code})</span>
            </div>
          )}
          <div class="actions">
            {!finished && (
              <button type="button" onClick={() => void cancel.run()} disabled={cancel.busy || r.cancelRequested}>
                {r.cancelRequested ? 'Cancel requested' : 'Cancel run'}
              </button>
            )}
            {finished && (
              <button type="button" onClick={() => void retry.run('start')} disabled={retry.busy}>
                Retry from the start
              </button>
            )}
            {finished && r.status !== 'succeeded' && (
              <button type="button" onClick={() => void retry.run('failed')} disabled={retry.busy}>
                Retry from the failed node
              </button>
            )}
          </div>
          <ErrorBox error={cancel.error ?? retry.error} />
          <Section title="Steps">
            {r.steps.length === 0 && <p class="muted">No step has run yet.</p>}
            <Timeline run={r} />
          </Section>
          <div class="columns">
            <Section title="Run input">
              <JsonBlock label="Run input" value={r.input} />
            </Section>
            <Section title="Run output">
              <JsonBlock label="Run output" value={r.output} />
            </Section>
          </div>
        </>
      )}
    </main>
  );
}

/** The steps in execution order, each placed on the run's time axis, with what went in and came out. */
function Timeline({ run }: { run: Run }) {
  const start = Date.parse(run.startedAt ?? run.createdAt);
  const ends = run.steps.map((s) => (s.finishedAt ? Date.parse(s.finishedAt) : Date.now()));
  const end = Math.max(run.finishedAt ? Date.parse(run.finishedAt) : 0, ...ends, start + 1);
  const span = end - start;
  return (
    <ol class="timeline">
      {run.steps.map((step) => (
        <StepItem key={step.nodeId} step={step} start={start} span={span} />
      ))}
    </ol>
  );
}

function StepItem({ step, start, span }: { step: Step; start: number; span: number }) {
  const from = step.startedAt ? Date.parse(step.startedAt) : null;
  const to = step.finishedAt ? Date.parse(step.finishedAt) : Date.now();
  const left = from === null ? 0 : Math.max(0, ((from - start) / span) * 100);
  const width = from === null ? 0 : Math.max(0.5, ((to - from) / span) * 100);
  return (
    <li class={`step step-${step.status}`} aria-label={`Step ${step.nodeId}`}>
      <div class="step-head">
        <strong>{step.nodeId}</strong>
        <span class="muted">
          {step.type} v{step.version}
        </span>
        <StatusBadge status={step.status} />
        {step.attempts > 1 && <span>{step.attempts} attempts</span>}
        {step.iterations !== undefined && <span>{step.iterations} iteration(s)</span>}
        {step.reused && <span class="muted">reused from the retried run</span>}
        <span class="muted">
          <Time iso={step.startedAt} /> · {duration(step.durationMs)}
        </span>
      </div>
      <div class="bar" aria-hidden="true">
        {from !== null && <span style={{ left: `${Math.min(left, 99.5)}%`, width: `${Math.min(width, 100 - Math.min(left, 99.5))}%` }} />}
      </div>
      {step.error && (
        <div class="error" role="alert">
          <strong>{step.error.message}</strong> <span class="muted">({step.error.code})</span>
          {step.error.details !== undefined && <JsonBlock label={`Error details of ${step.nodeId}`} value={step.error.details} />}
        </div>
      )}
      {step.status !== 'skipped' && (
        <>
          <details>
            <summary>Input</summary>
            <p class="muted small">
              {step.iterations !== undefined
                ? 'One entry per iteration that ran the node. '
                : ''}
              As recorded when the node ran, secrets masked.
            </p>
            <JsonBlock label={`Input of ${step.nodeId}`} value={step.input === undefined ? '(not recorded)' : step.input} />
          </details>
          <details open={step.status === 'succeeded' || step.status === 'waiting'}>
            <summary>Output</summary>
            <JsonBlock label={`Output of ${step.nodeId}`} value={step.output} />
          </details>
        </>
      )}
    </li>
  );
}
