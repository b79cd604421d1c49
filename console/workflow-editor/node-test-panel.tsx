import { useState } from 'preact/hooks';
import type { NodeSpec, NodeTest } from '../api-types';
import { Link } from '../router';
import { ErrorBox, JsonBlock, StatusBadge, UserText } from '../ui';
import type { TestState } from './inspector';

interface NodeTestPanelProps {
  node: NodeSpec;
  trigger: boolean;
  pinned: unknown;
  /** The node's input in the latest run of the workflow, when it has one. */
  lastInput: unknown;
  lastRunId: string | null;
  test: TestState;
  onPin: (value: unknown) => void;
  onTest: (body: NodeTest) => void;
}

/**
 * Runs the selected node of the draft alone (or with what follows) on an input of one's choice,
 * as n8n's partial execution: typed here, else the data pinned on the node, else its input in the
 * latest run. Pinned data is saved with the draft only; the test saves the draft first.
 */
export function NodeTestPanel({ node, trigger, pinned, lastInput, lastRunId, test, onPin, onTest }: NodeTestPanelProps) {
  const [typed, setTyped] = useState('');
  const [andAfter, setAndAfter] = useState(false);
  const [problem, setProblem] = useState('');
  const parsed = (): { ok: true; value: unknown } | { ok: false } => {
    try {
      return { ok: true, value: JSON.parse(typed) };
    } catch (error) {
      setProblem(`The input is not valid JSON: ${(error as Error).message}`);
      return { ok: false };
    }
  };
  const pinTyped = () => {
    setProblem('');
    const value = parsed();
    if (value.ok) {
      onPin(value.value);
      setTyped('');
    }
  };
  const start = () => {
    setProblem('');
    const body: NodeTest = { nodeId: node.id, andAfter };
    if (typed.trim()) {
      const value = parsed();
      if (!value.ok) return;
      body.input = value.value as NodeTest['input'];
    } else if (pinned === undefined) {
      if (!lastRunId) {
        setProblem('Nothing to test on yet: type an input, pin data on the node, or run the workflow once.');
        return;
      }
      body.fromRunId = lastRunId;
    }
    onTest(body);
  };
  const run = test.run;
  const step = run?.steps.find((s) => s.nodeId === node.id);
  const source = typed.trim()
    ? 'the input typed above'
    : pinned !== undefined
      ? 'the pinned data'
      : lastRunId
        ? `its input in the latest run (${lastRunId})`
        : null;
  if (trigger) {
    return (
      <fieldset class="node-form test-panel" aria-label={`Test ${node.id}`}>
        <legend>Test</legend>
        <p class="muted small">A trigger's output is the run's input: start a test run below, or test the node after it.</p>
      </fieldset>
    );
  }
  return (
    <fieldset class="node-form test-panel" aria-label={`Test ${node.id}`}>
      <legend>Test this node</legend>
      {pinned !== undefined ? (
        <>
          <div>
            <strong>Pinned data</strong> <span class="muted small">(saved with the draft only, never published)</span>
          </div>
          <JsonBlock label={`Pinned data of ${node.id}`} value={pinned} />
          <button type="button" class="link danger" onClick={() => onPin(undefined)}>
            Unpin
          </button>
        </>
      ) : (
        <p class="muted small">No data pinned: pin an input to test this node on the same data each time.</p>
      )}
      <label>
        Test input (JSON)
        <textarea
          class="code"
          rows={3}
          value={typed}
          placeholder={pinned !== undefined ? 'empty: the pinned data' : 'e.g. [{"total": 150}]'}
          onInput={(e) => setTyped(e.currentTarget.value)}
        />
      </label>
      <div class="actions">
        <button type="button" class="secondary" disabled={!typed.trim()} onClick={pinTyped}>
          Pin this input
        </button>
        <button
          type="button"
          class="secondary"
          disabled={lastInput === undefined}
          onClick={() => onPin(lastInput)}
          title={lastInput === undefined ? 'The latest run holds no input for this node' : undefined}
        >
          Pin the last run's input
        </button>
      </div>
      <label class="check">
        <input type="checkbox" checked={andAfter} onChange={(e) => setAndAfter(e.currentTarget.checked)} />
        and what follows
      </label>
      <div class="actions">
        <button type="button" disabled={test.busy || !source} onClick={start}>
          Test this node
        </button>
        <span class="muted small">{source ? `On ${source}; the draft is saved first.` : 'Type an input or pin data first.'}</span>
      </div>
      {problem && <p class="error-text">{problem}</p>}
      <ErrorBox error={test.error} />
      {run && (
        <div class="test-result" role="region" aria-label="Test result">
          <div>
            Test of <code>{run.nodeTest?.nodeId ?? node.id}</code>
            {run.nodeTest?.andAfter ? ' and what follows' : ''}: <StatusBadge status={run.status} />{' '}
            <Link href={`/runs/${run.id}`}>open the run</Link>{' '}
            <button type="button" class="link" onClick={test.clear}>
              Clear
            </button>
          </div>
          {run.error && (
            <div class="error-text">
              <UserText text={run.error.message} />
            </div>
          )}
          {step && step.error && (
            <div class="error-text">
              <UserText text={step.error.message} /> <span class="muted">({step.error.code})</span>
            </div>
          )}
          {step && step.output !== undefined && <JsonBlock label={`Test output of ${node.id}`} value={step.output} />}
        </div>
      )}
    </fieldset>
  );
}
