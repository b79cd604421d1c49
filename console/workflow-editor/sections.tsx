import type { Run, Workflow } from '../api-types';
import { Link } from '../router';
import { Section, StatusBadge, UserText } from '../ui';
import { plainReason, type Placed } from './problems';

interface RunSectionProps {
  workflow: Workflow;
  dirty: boolean;
  input: string;
  setInput: (input: string) => void;
  busy: boolean;
  start: (runType: 'test' | 'production') => void;
  /** The run drawn on the canvas, when there is one. */
  shown: Run | null;
}

/** The run input and the two ways to run, the run drawn on the canvas as its steps land. */
export function RunSection({ workflow, dirty, input, setInput, busy, start, shown }: RunSectionProps) {
  return (
    <Section title="Run">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          start('test');
        }}
      >
        <label>
          Run input (JSON)
          <textarea class="code" rows={4} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
        </label>
        <p class="muted small">
          The input becomes the trigger's output. A test run executes the draft (saved first if changed; a draft the server refuses does not
          run); a production run executes the published version in force
          {workflow.activeVersion !== null ? ` (version ${workflow.activeVersion})` : ''}, as a webhook call would. Either is drawn on the
          canvas as it happens.
        </p>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Start test run
          </button>
          <button type="button" disabled={busy || workflow.activeVersion === null} onClick={() => start('production')}>
            Run published version
          </button>
          {workflow.activeVersion === null && <span class="muted small">Publish first to run in production.</span>}
          {workflow.activeVersion !== null && dirty && (
            <span class="muted small">Unsaved changes are not part of the published version.</span>
          )}
        </div>
        {shown && (
          <p class="run-shown" role="status" aria-label="Run on the canvas">
            Run <code>{shown.id}</code> ({shown.runType}
            {shown.nodeTest ? `, node test of ${shown.nodeTest.nodeId}` : ''}): <StatusBadge status={shown.status} />{' '}
            {shown.error && (
              <span class="error-text">
                <UserText text={shown.error.message} />
              </span>
            )}{' '}
            <Link href={`/runs/${shown.id}`}>open the run page</Link>
          </p>
        )}
      </form>
    </Section>
  );
}

interface ProblemListProps {
  problems: readonly Placed[];
  onOpen: (nodeId: string) => void;
}

/**
 * Each problem once, by node, in plain words: what the server refused at the last save (red),
 * then what only the console's own check suspects (amber). A node's name opens it on the canvas.
 */
export function ProblemList({ problems, onOpen }: ProblemListProps) {
  const refused = problems.filter((p) => !p.advisory);
  const advice = problems.filter((p) => p.advisory);
  return (
    <>
      {refused.length > 0 && (
        <Problems
          label="Refused by the server"
          role="alert"
          heading={`The server refused the draft at the last save: ${refused.length} problem(s).`}
          problems={refused}
          onOpen={onOpen}
        />
      )}
      {advice.length > 0 && (
        <Problems
          label="Possible problems"
          heading={`${advice.length} possible problem(s) found while you edit. Saving still sends the draft: the server's check decides.`}
          problems={advice}
          onOpen={onOpen}
          advisory
        />
      )}
    </>
  );
}

function Problems({
  label,
  heading,
  problems,
  role,
  advisory,
  onOpen,
}: {
  label: string;
  heading: string;
  problems: readonly Placed[];
  role?: 'alert';
  advisory?: boolean;
  onOpen: (nodeId: string) => void;
}) {
  const groups = new Map<string, Placed[]>();
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
              'The workflow'
            )}
          </div>
          <ul class="fields">
            {list.map((p, i) => (
              <li key={i}>{nodeId ? plainReason(p) : `${p.original.field}: ${p.reason}`}</li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}
