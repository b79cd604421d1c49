import { useMemo, useRef, useState } from 'preact/hooks';
import { api, encode } from '../api-client';
import { Accepted, Definition, NodeTypes, Run, Step, TERMINAL, Version, Workflow } from '../api-types';
import { Canvas, ZoomButtons, type CanvasControl, type CanvasEdge, type CanvasNode } from '../canvas/canvas';
import { runEdges, stepStatus } from '../canvas/run-drawing';
import { drawNodes, positionsOf } from '../canvas/workflow-graph';
import { duration } from '../format';
import { loadNodeTypes } from '../node-types';
import { runDuration, triggerLabel } from '../runs';
import { subStepsOf } from '../sub-steps';
import { Link, navigate } from '../router';
import { ErrorBox, JsonBlock, Section, StatusBadge, Time, useAction, useLoad, usePolling, UserText } from '../ui';

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
  const types = useLoad(loadNodeTypes, []);
  // What ran: the published version a production run executed; for a test run the draft, as it is now.
  const drawn = useLoad(async () => {
    if (!r) return null;
    const workflowBase = `/api/v1/workflows/${encode(r.workflowId)}`;
    const workflow = await api<Workflow>('GET', workflowBase);
    if (r.version !== null)
      return {
        name: workflow.name,
        definition: (await api<Version>('GET', `${workflowBase}/versions/${r.version}`)).definition as Definition,
        draft: false,
      };
    return { name: workflow.name, definition: workflow.definition as Definition, draft: true };
  }, [r?.workflowId, r?.version]);

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
                {(r.workflowName ?? drawn.data?.name) ? (
                  <UserText text={r.workflowName ?? drawn.data?.name} />
                ) : (
                  <code>{r.workflowId}</code>
                )}
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
            <dd>{duration(runDuration(r))}</dd>
            <dt>Started by</dt>
            <dd>{triggerLabel(r)}</dd>
            {r.nodeTest && (
              <>
                <dt>Node test</dt>
                <dd>
                  <code>{r.nodeTest.nodeId}</code>
                  {r.nodeTest.andAfter ? ' and what follows' : ' alone'}
                </dd>
              </>
            )}
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
              <strong>
                <UserText text={r.error.message} />
              </strong>{' '}
              <span class="muted">({r.error.code})</span>
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
          {drawn.data && types.data && <RunCanvas run={r} definition={drawn.data.definition} draft={drawn.data.draft} types={types.data} />}
          <ErrorBox error={drawn.error} />
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
          <strong>
            <UserText text={step.error.message} />
          </strong>{' '}
          <span class="muted">({step.error.code})</span>
          {step.error.details !== undefined && <JsonBlock label={`Error details of ${step.nodeId}`} value={step.error.details} />}
        </div>
      )}
      <SubSteps step={step} />
      {step.status !== 'skipped' && (
        <>
          <details>
            <summary>Input</summary>
            <p class="muted small">
              {step.iterations !== undefined ? 'One entry per iteration that ran the node. ' : ''}
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

/** The run drawn on its workflow: each node coloured by its step's status, item counts on the edges; a node opens its step. */
function RunCanvas({ run, definition, draft, types }: { run: Run; definition: Definition; draft: boolean; types: NodeTypes }) {
  const control = useRef<CanvasControl | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const steps = useMemo(() => new Map(run.steps.map((s) => [s.nodeId, s])), [run]);
  const positions = useMemo(() => positionsOf(definition), [definition]);
  // A node test runs a few nodes on purpose: the others are left as they are, not greyed as not run.
  const partial = Boolean(run.nodeTest);
  const nodes = useMemo<CanvasNode[]>(
    () =>
      drawNodes(definition, types.items).map((n) => ({
        ...n,
        status: stepStatus(steps.get(n.id)) ?? (TERMINAL.includes(run.status) && !partial ? 'not-run' : undefined),
      })),
    [definition, types, steps, run.status, partial],
  );
  const edges = useMemo<CanvasEdge[]>(() => runEdges(definition, run, partial), [definition, run, partial]);
  const step = open ? steps.get(open) : undefined;
  return (
    <Section title="Run on the workflow">
      {draft && <p class="muted small">A test run: drawn on the draft as it is now, which may have changed since.</p>}
      <div class="toolbar">
        <ZoomButtons control={control} />
      </div>
      <div class="canvas-layout">
        <Canvas
          label={`Run ${run.id} on its workflow`}
          nodes={nodes}
          edges={edges}
          positions={positions}
          selected={new Set(open ? [open] : [])}
          editable={false}
          control={control}
          onSelect={(ids) => setOpen(ids[0] ?? null)}
          onOpen={setOpen}
        />
        <aside class="inspector" aria-label="Step">
          {!open && <p class="muted small">Select a node (click, or Tab to it and press Enter) to see what it received and produced.</p>}
          {open && !step && (
            <p>
              <code>{open}</code> did not run{TERMINAL.includes(run.status) ? '' : ' yet'}.
            </p>
          )}
          {step && <StepDetails step={step} />}
        </aside>
      </div>
      <p class="legend small" aria-label="Legend">
        {['succeeded', 'failed', 'skipped', 'waiting', 'running', 'reused', 'canceled'].map((s) => (
          <span key={s} class={`badge badge-${s}`}>
            {s}
          </span>
        ))}
      </p>
    </Section>
  );
}

function StepDetails({ step }: { step: Step }) {
  return (
    <div aria-label={`Step details of ${step.nodeId}`} role="region">
      <h3>
        {step.nodeId} <StatusBadge status={stepStatus(step)!} />
      </h3>
      <dl class="facts">
        <dt>Type</dt>
        <dd>
          {step.type} v{step.version}
        </dd>
        <dt>Attempts</dt>
        <dd>{step.attempts}</dd>
        <dt>Duration</dt>
        <dd>{duration(step.durationMs)}</dd>
        {step.iterations !== undefined && (
          <>
            <dt>Iterations</dt>
            <dd>{step.iterations}</dd>
          </>
        )}
      </dl>
      {step.error && (
        <div class="error" role="alert">
          <strong>
            <UserText text={step.error.message} />
          </strong>{' '}
          <span class="muted">({step.error.code})</span>
        </div>
      )}
      <SubSteps step={step} where="canvas" />
      <h4>Input</h4>
      <JsonBlock label={`Input of ${step.nodeId} (canvas)`} value={step.input === undefined ? '(not recorded)' : step.input} />
      <h4>Output</h4>
      <JsonBlock label={`Output of ${step.nodeId} (canvas)`} value={step.output} />
    </div>
  );
}

/** The model and tool calls inside a step (an AI agent's loop), in order; arguments and results folded away. */
function SubSteps({ step, where }: { step: Step; where?: string }) {
  const subSteps = subStepsOf(step);
  if (!subSteps.length) return null;
  const suffix = where ? ` (${where})` : '';
  return (
    <details class="substeps-box" open={step.status === 'failed'}>
      <summary>
        Model and tool calls ({subSteps.filter((c) => c.kind === 'model').length} model, {subSteps.filter((c) => c.kind === 'tool').length}{' '}
        tool)
      </summary>
      <ol class="substeps" aria-label={`Calls of ${step.nodeId}${suffix}`}>
        {subSteps.map((sub, i) => (
          <li key={i} aria-label={`${sub.kind} ${sub.name}`}>
            <div class="substep-head">
              <span class={`badge badge-${sub.error ? 'failed' : 'succeeded'}`}>{sub.kind}</span>
              <strong>{sub.name}</strong>
              <span class="muted">{duration(sub.durationMs)}</span>
              {sub.tokens && (
                <span class="muted">
                  {sub.tokens.prompt} + {sub.tokens.completion} tokens
                </span>
              )}
            </div>
            {sub.error && (
              <div class="error-text">
                <UserText text={sub.error} />
              </div>
            )}
            {sub.arguments !== undefined && (
              <details>
                <summary>Arguments</summary>
                <JsonBlock label={`Arguments of ${sub.kind} call ${i + 1} in ${step.nodeId}${suffix}`} value={sub.arguments} />
              </details>
            )}
            {sub.result !== undefined && (
              <details>
                <summary>Result</summary>
                <JsonBlock label={`Result of ${sub.kind} call ${i + 1} in ${step.nodeId}${suffix}`} value={sub.result} />
              </details>
            )}
          </li>
        ))}
      </ol>
    </details>
  );
}
