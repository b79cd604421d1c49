import type { Backoff, NodeSpec, OnError } from './api-types';
import type { ShownProblem } from './definition-check';
import { failureSettings, withFailureSettings } from './node-settings';

/** The server's limits (workflows.dto.ts MAX_TRIES, MAX_WAIT_BETWEEN_TRIES_MS). */
const MAX_TRIES = 5;
const MAX_WAIT_MS = 5 * 60 * 1000;

const ON_ERROR_LABELS: Record<OnError, string> = {
  stop: 'stop: skip what follows, the run fails',
  continue: 'continue: the error becomes its output',
  errorOutput: 'error output: failed items go to an "error" port',
};

/** Retries and what happens on failure, as n8n's node settings; the server's refusal is shown beside the field it names. */
export function NodeSettings({
  node,
  problems,
  onChange,
}: {
  node: NodeSpec;
  problems: readonly ShownProblem[];
  onChange: (node: NodeSpec) => void;
}) {
  const settings = failureSettings(node);
  const set = (change: Partial<typeof settings>) => onChange(withFailureSettings(node, { ...settings, ...change }));
  const number = (text: string) => (text === '' ? undefined : Number(text));
  const problemOf = (field: string) =>
    problems
      .filter((p) => p.field === field)
      .map((p, i) => (
        <div key={i} class={p.advisory ? 'warning-text' : 'error-text'} role={p.advisory ? undefined : 'alert'}>
          {p.reason}
        </div>
      ));
  return (
    <fieldset class="node-form node-settings" aria-label={`Settings of ${node.id}`}>
      <legend>Settings</legend>
      <label>
        On error
        <select aria-label="On error" value={settings.onError} onChange={(e) => set({ onError: e.currentTarget.value as OnError })}>
          {(Object.keys(ON_ERROR_LABELS) as OnError[]).map((value) => (
            <option key={value} value={value}>
              {ON_ERROR_LABELS[value]}
            </option>
          ))}
        </select>
      </label>
      {problemOf('onError')}
      {problemOf('continueOnError')}
      <label class="check">
        <input type="checkbox" checked={settings.retryOnFail} onChange={(e) => set({ retryOnFail: e.currentTarget.checked })} />
        Retry on fail
      </label>
      {problemOf('retryOnFail')}
      {problemOf('retry')}
      {settings.retryOnFail && (
        <div class="columns">
          <label>
            Max tries
            <input
              type="number"
              aria-label="Max tries"
              min={1}
              max={MAX_TRIES}
              step={1}
              placeholder="default: 3"
              value={settings.maxTries ?? ''}
              onInput={(e) => set({ maxTries: number(e.currentTarget.value) })}
            />
            {problemOf('maxTries')}
          </label>
          <label>
            Wait between tries (ms)
            <input
              type="number"
              aria-label="Wait between tries (ms)"
              min={0}
              max={MAX_WAIT_MS}
              step={100}
              placeholder="default: 1000"
              value={settings.waitBetweenTries ?? ''}
              onInput={(e) => set({ waitBetweenTries: number(e.currentTarget.value) })}
            />
            {problemOf('waitBetweenTries')}
          </label>
          <label>
            Backoff
            <select
              aria-label="Backoff"
              value={settings.backoff ?? 'fixed'}
              onChange={(e) => set({ backoff: e.currentTarget.value as Backoff })}
            >
              <option value="fixed">fixed: the same wait each time</option>
              <option value="exponential">exponential: the wait doubles</option>
            </select>
            {problemOf('backoff')}
          </label>
        </div>
      )}
      <div class="hint">
        Retries apply to failures that may pass (no answer, a timeout, HTTP 408, 425, 429 or 5xx), never to a configuration error; at most{' '}
        {MAX_TRIES} tries.
        {settings.onError === 'errorOutput' ? ' Connect the node\'s "error" port to handle what failed.' : ''}
      </div>
    </fieldset>
  );
}
